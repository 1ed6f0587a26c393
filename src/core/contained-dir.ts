/**
 * Containment, on one page: every file cairn reads, writes or deletes under `.cairn/`, a store
 * base, a stage root or a state dir is reached through a ContainedDir — one directory, opened
 * and held, reached from a root without following a symbolic link in any component below it.
 *
 * Linux (race-free): each component is opened with O_DIRECTORY|O_NOFOLLOW *through the
 * descriptor of its already-opened parent*, and every operation on a name (open, create,
 * rename, link, unlink, mkdir, rmdir, readdir, lstat) goes through `/proc/self/fd/<dirfd>/<name>`.
 * The kernel resolves that magic link to the directory the descriptor holds, not to a path, so
 * a component swapped for a link after it was opened (rename, RENAME_EXCHANGE in a loop)
 * cannot redirect anything: this is openat(2), reached from Node. At the final name a link is
 * refused (O_NOFOLLOW; O_EXCL for creates) or acted on itself (rename, unlink and rmdir never
 * follow), so deletion removes a link, never its target.
 *
 * macOS, BSD, Linux without /proc: each component is lstat-checked, opened by path with
 * O_NOFOLLOW, and the opened directory's device + inode must equal the lstat's; before each
 * later operation the held directory must still be at its path (device + inode). Every planted
 * link is refused, but a swap landing in the microseconds between that check and the act can
 * still redirect one operation. Windows: no directory descriptors; the same checks by lstat.
 *
 * Limits everywhere: the root itself is the caller's choice and is followed; a directory that
 * another process moves out of the root after cairn opened it takes later operations with it
 * (as with openat: only a process that can already write there can do that). The hostile-tree
 * suite (test/hostile) proves the Linux form with a swapper process and canary files. The
 * user-facing account of the approach and its limits is docs/containment.md.
 *
 * API: ContainedDir.open(root, parts, {create}) / require / withContainedDir; then child/sub,
 * readFile (no-follow, non-blocking, size-bounded), writeFile (atomic temp + rename/link in the
 * held directory), createFile (exclusive, no-follow), unlink, rmdir, removeTree, rename, entries, lstat, fsync, close.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError, errnoCode } from './errors.js';

/** Whether the race-free form (descriptor-relative magic links) is available. */
export const RACE_FREE = process.platform === 'linux' && fs.existsSync('/proc/self/fd');

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = fs.constants.O_DIRECTORY ?? 0;
const CAN_OPEN_DIRS = process.platform !== 'win32';

export type RefusedReason = 'symlink' | 'not-a-directory' | 'not-a-file' | 'bad-name' | 'moved' | 'outside';

/** A link, a non-directory or a swap met where cairn expects its own directory or file (ERR_CONTAINMENT). */
export class ContainmentError extends CairnError {
  constructor(
    readonly at: string,
    readonly reason: RefusedReason,
  ) {
    super(
      'ERR_CONTAINMENT',
      reason === 'symlink'
        ? `${at} is a symbolic link; cairn never reads, writes or deletes through links below its roots (remove the link)`
        : reason === 'not-a-directory'
          ? `${at} is not a directory (something else is where cairn expects a directory; move it away)`
          : reason === 'not-a-file'
            ? `${at} is not a regular file (move it away)`
            : reason === 'moved'
              ? `${at} was replaced while cairn was using it; run the command again once nothing else changes that directory`
              : reason === 'outside'
                ? `${at} resolves outside the directory cairn works in`
                : `${at} is not a plain file name`,
      { path: at, exitCode: 1 },
    );
  }
}

/** A single path component cairn may create or open: not empty, `.`, `..`, and without separators or NUL. */
export function isPlainName(name: string): boolean {
  return name.length > 0 && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\\') && !name.includes('\0');
}

export interface OpenDirOptions {
  /** Create missing components (mode 0o777 less umask, or `mode`). Default false: missing → null. */
  create?: boolean;
  mode?: number;
}

export interface ContainedWriteOptions {
  /** Fail with EEXIST instead of replacing (link(2): create-only, atomic). */
  exclusive?: boolean;
  /** fsync the file and the directory (default true). */
  fsync?: boolean;
  /** Mode of the new file (default 0o666 less umask). */
  mode?: number;
}

interface Identity {
  dev: number;
  ino: number;
}

function kindOf(p: string): 'missing' | 'symlink' | 'dir' | 'other' {
  try {
    const st = fs.lstatSync(p);
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : 'other';
  } catch {
    return 'missing';
  }
}

export class ContainedDir {
  private closed = false;

  private constructor(
    /** The directory's path as cairn names it (for messages; never used to reach it on Linux). */
    readonly path: string,
    private readonly fd: number,
    private readonly id: Identity,
  ) {}

  /**
   * Opens `root` (links in the root path itself are followed: it is the caller's choice), then
   * each of `parts` below it without following any link. Null when a component is missing and
   * `create` is off; ContainmentError on a link or a non-directory.
   */
  static open(root: string, parts: readonly string[] = [], options: OpenDirOptions = {}): ContainedDir | null {
    const rootPath = path.resolve(root);
    if (options.create === true) fs.mkdirSync(rootPath, { recursive: true, mode: options.mode });
    let dir: ContainedDir;
    try {
      dir = ContainedDir.fromPath(rootPath, false);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return null;
      throw e;
    }
    if (parts.length === 0) return dir;
    try {
      return dir.sub(parts, options);
    } finally {
      dir.close();
    }
  }

  /** As open, but a missing directory is an ENOENT error. */
  static require(root: string, parts: readonly string[] = [], options: OpenDirOptions = {}): ContainedDir {
    const dir = ContainedDir.open(root, parts, options);
    if (dir === null) throw Object.assign(new Error(`ENOENT: no such directory ${path.join(root, ...parts)}`), { code: 'ENOENT' });
    return dir;
  }

  private static fromPath(p: string, noFollow: boolean, parent?: ContainedDir, name?: string): ContainedDir {
    const via = parent !== undefined && name !== undefined ? parent.at(name) : p;
    if (!CAN_OPEN_DIRS) {
      const st = noFollow ? fs.lstatSync(via) : fs.statSync(via);
      if (st.isSymbolicLink()) throw new ContainmentError(p, 'symlink');
      if (!st.isDirectory()) throw new ContainmentError(p, 'not-a-directory');
      return new ContainedDir(p, -1, { dev: st.dev, ino: st.ino });
    }
    let before: Identity | undefined;
    if (!RACE_FREE && noFollow) {
      const k = fs.lstatSync(via);
      if (k.isSymbolicLink()) throw new ContainmentError(p, 'symlink');
      if (!k.isDirectory()) throw new ContainmentError(p, 'not-a-directory');
      before = { dev: k.dev, ino: k.ino };
    }
    let fd: number;
    try {
      fd = fs.openSync(via, O_RDONLY | O_DIRECTORY | (noFollow ? O_NOFOLLOW : 0));
    } catch (e) {
      const code = errnoCode(e);
      // O_DIRECTORY|O_NOFOLLOW on a link says ENOTDIR (Linux) or ELOOP: tell which it was.
      // The root is the caller's path: what is wrong with it is an ordinary error, not a refusal.
      if (!noFollow) throw e;
      if (code === 'ELOOP' || code === 'ENOTDIR') {
        const k = kindOf(via);
        if (k === 'missing') throw Object.assign(new Error(`ENOENT: ${p} vanished`), { code: 'ENOENT' });
        throw new ContainmentError(p, k === 'symlink' ? 'symlink' : 'not-a-directory');
      }
      throw e;
    }
    const st = fs.fstatSync(fd);
    if (!st.isDirectory() || (before !== undefined && (before.dev !== st.dev || before.ino !== st.ino))) {
      fs.closeSync(fd);
      throw new ContainmentError(p, st.isDirectory() ? 'moved' : 'not-a-directory');
    }
    if (parent !== undefined) parent.checkStillThere();
    return new ContainedDir(p, fd, { dev: st.dev, ino: st.ino });
  }

  /** The path through which the kernel reaches `name` inside this opened directory. */
  at(name: string): string {
    if (this.closed) throw new Error(`ContainedDir ${this.path} used after close`);
    if (!isPlainName(name)) throw new ContainmentError(path.join(this.path, name), 'bad-name');
    return RACE_FREE ? `/proc/self/fd/${this.fd}/${name}` : path.join(this.path, name);
  }

  /** The path cairn shows for `name` in this directory. */
  shown(name: string): string {
    return path.join(this.path, name);
  }

  /** Fallback platforms: refuse to act when the held directory is no longer at its path. */
  private checkStillThere(): void {
    if (RACE_FREE) return;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(this.path);
    } catch {
      throw new ContainmentError(this.path, 'moved');
    }
    if (st.isSymbolicLink() || st.dev !== this.id.dev || st.ino !== this.id.ino) throw new ContainmentError(this.path, 'moved');
  }

  /** Opens the subdirectory `name` (no link followed); null when missing and not `create`. */
  child(name: string, options: OpenDirOptions = {}): ContainedDir | null {
    const via = this.at(name);
    if (options.create === true) {
      try {
        this.checkStillThere();
        fs.mkdirSync(via, { mode: options.mode });
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') throw e; // there already (or a link/file there: refused below)
      }
    }
    try {
      return ContainedDir.fromPath(this.shown(name), true, this, name);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return null;
      throw e;
    }
  }

  /** Opens `parts` below this directory, one component at a time; null when one is missing. */
  sub(parts: readonly string[], options: OpenDirOptions = {}): ContainedDir | null {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let dir: ContainedDir = this;
    for (const name of parts) {
      let next: ContainedDir | null;
      try {
        next = dir.child(name, options);
      } finally {
        if (dir !== this) dir.close();
      }
      if (next === null) return null;
      dir = next;
    }
    return dir === this ? this.reopen() : dir;
  }

  /** A second handle on the same directory (closed independently). */
  reopen(): ContainedDir {
    if (!CAN_OPEN_DIRS) return new ContainedDir(this.path, -1, this.id);
    return new ContainedDir(this.path, fs.openSync(RACE_FREE ? `/proc/self/fd/${this.fd}` : this.path, O_RDONLY | O_DIRECTORY), this.id);
  }

  /**
   * Contents of the regular file `name`, or null when missing. Opened non-blocking (a FIFO cannot
   * hang the reader) and without following a link; anything but a regular file is refused.
   * `maxBytes`: larger files are refused with ERR_TOO_LARGE before being read.
   */
  readFile(name: string, options: { maxBytes?: number } = {}): Buffer | null {
    const fd = this.openFile(name);
    if (fd === null) return null;
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new ContainmentError(this.shown(name), 'not-a-file');
      if (options.maxBytes !== undefined && st.size > options.maxBytes) {
        throw new CairnError('ERR_TOO_LARGE', `${this.shown(name)} is ${st.size} bytes, more than the ${options.maxBytes} cairn reads; it is not a file cairn wrote — move it away`, { path: this.shown(name), exitCode: 1 });
      }
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Descriptor of the regular-or-other file `name` opened read-only, non-blocking, no-follow; null when missing. */
  openFile(name: string): number | null {
    const via = this.at(name);
    this.checkStillThere();
    // Without O_NOFOLLOW (Windows) a link is refused by lstat first.
    if (O_NOFOLLOW === 0 && this.lstat(name)?.isSymbolicLink() === true) throw new ContainmentError(this.shown(name), 'symlink');
    try {
      return fs.openSync(via, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOENT') return null;
      if (code === 'ELOOP' || (code === 'EMLINK' && process.platform !== 'linux')) throw new ContainmentError(this.shown(name), 'symlink');
      throw e;
    }
  }

  /**
   * Creates the new regular file `name` (O_EXCL|O_NOFOLLOW: never an existing file, never
   * through a link) and returns its descriptor, open for writing; EEXIST when the name is taken.
   */
  createFile(name: string, mode = 0o666): number {
    const via = this.at(name);
    this.checkStillThere();
    return fs.openSync(via, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  }

  /**
   * Writes `name` atomically: a unique temp file created with O_EXCL|O_NOFOLLOW in this very
   * directory, written, fsynced, then renamed (or, `exclusive`, linked) onto the name. A link
   * at the name is replaced, never written through.
   */
  writeFile(name: string, data: string | Uint8Array, options: ContainedWriteOptions = {}): void {
    const target = this.at(name);
    const tmpName = ContainedDir.tempName(name);
    const tmp = this.at(tmpName);
    const doSync = options.fsync !== false;
    this.checkStillThere();
    let fd: number | undefined = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, options.mode ?? 0o666);
    try {
      if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
      fs.writeFileSync(fd, data);
      if (doSync) fs.fsyncSync(fd);
      fs.closeSync(fd);
      fd = undefined;
      this.checkStillThere();
      if (options.exclusive === true) {
        fs.linkSync(tmp, target);
        fs.unlinkSync(tmp);
      } else fs.renameSync(tmp, target);
      if (doSync) this.fsync();
    } catch (e) {
      if (fd !== undefined) fs.closeSync(fd);
      try {
        fs.unlinkSync(tmp);
      } catch {
        // renamed or never made
      }
      throw e;
    }
  }

  /** Temp name of a write of `name`: `.name.cairn-tmp-<pid>-<12 hex>` (atomic-write's form). */
  static tempName(name: string): string {
    const shown = Buffer.byteLength(name) > 160 ? Array.from(name).slice(0, 40).join('') : name;
    // Web Crypto, not node:crypto: this module is on the CLI's start-up path (the config reader).
    return `.${shown}.cairn-tmp-${process.pid}-${Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(6))).toString('hex')}`;
  }

  /** Removes `name` if it is a file or a link (a link goes, its target stays); false when missing. */
  unlink(name: string): boolean {
    const via = this.at(name);
    this.checkStillThere();
    try {
      fs.unlinkSync(via);
      return true;
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOENT') return false;
      if (code === 'EISDIR' || code === 'EPERM') throw new ContainmentError(this.shown(name), 'not-a-file');
      throw e;
    }
  }

  /** Removes the empty directory `name`; false when missing. */
  rmdir(name: string): boolean {
    const via = this.at(name);
    this.checkStillThere();
    try {
      fs.rmdirSync(via);
      return true;
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return false;
      throw e;
    }
  }

  /**
   * Removes `name` and everything below it, directory by opened directory: a link anywhere is
   * removed itself, never followed. False when it was missing.
   */
  removeTree(name: string): boolean {
    const st = this.lstat(name);
    if (st === null) return false;
    if (!st.isDirectory()) return this.unlink(name);
    let dir: ContainedDir | null;
    try {
      dir = this.child(name);
    } catch (e) {
      // Swapped for a link or a file since the lstat: that entry is removed as it now is.
      if (e instanceof ContainmentError && (e.reason === 'symlink' || e.reason === 'not-a-directory')) return this.unlink(name);
      throw e;
    }
    if (dir === null) return false;
    try {
      for (const entry of dir.entries()) dir.removeTree(entry.name);
    } finally {
      dir.close();
    }
    try {
      return this.rmdir(name);
    } catch (e) {
      if (errnoCode(e) === 'ENOTDIR') return this.unlink(name);
      throw e;
    }
  }

  /** Renames `from` to `to`, both in this directory (links are moved, never followed). */
  rename(from: string, to: string): void {
    const a = this.at(from);
    const b = this.at(to);
    this.checkStillThere();
    fs.renameSync(a, b);
  }

  /** Entries of this directory (types as readdir reports them: a link is a link). */
  entries(): fs.Dirent[] {
    this.checkStillThere();
    return fs.readdirSync(RACE_FREE ? `/proc/self/fd/${this.fd}` : this.path, { withFileTypes: true });
  }

  /** Streams the entries to `visit` (opendir with a large buffer: cheaper than an array for 100k entries). */
  forEachEntry(visit: (entry: fs.Dirent) => void): void {
    this.checkStillThere();
    const dir = fs.opendirSync(RACE_FREE ? `/proc/self/fd/${this.fd}` : this.path, { bufferSize: 1024 });
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) visit(entry);
    } finally {
      dir.closeSync();
    }
  }

  /** lstat of `name` in this directory, or null when missing. */
  lstat(name: string): fs.Stats | null {
    // Missing is the common answer (a put's new objects): no error made and thrown for it.
    return fs.lstatSync(this.at(name), { throwIfNoEntry: false }) ?? null;
  }

  /** lstat of this directory itself (through the held descriptor). */
  stat(options: { bigint: true }): fs.BigIntStats;
  stat(): fs.Stats;
  stat(options?: { bigint: true }): fs.Stats | fs.BigIntStats {
    if (this.fd < 0) return options ? fs.lstatSync(this.path, options) : fs.lstatSync(this.path);
    return options ? fs.fstatSync(this.fd, options) : fs.fstatSync(this.fd);
  }

  /** fsync the directory (after a rename or unlink in it); file systems that refuse it are tolerated. */
  fsync(): void {
    if (this.fd < 0) return;
    try {
      fs.fsyncSync(this.fd);
    } catch (e) {
      const code = errnoCode(e);
      if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EBADF') throw e;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.fd >= 0) fs.closeSync(this.fd);
  }
}

/**
 * Where to open `dir` from: `within` and the components below it when `dir` lies strictly
 * inside `within` (no link is then followed from `within` down), else `dir` itself.
 */
export function rootedAt(dir: string, within?: string): { root: string; parts: string[] } {
  const abs = path.resolve(dir);
  if (within !== undefined) {
    const base = path.resolve(within);
    const rel = path.relative(base, abs);
    if (rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel)) return { root: base, parts: rel.split(path.sep) };
  }
  return { root: abs, parts: [] };
}

/** Runs `fn` with the directory `parts` below `root` (see ContainedDir.open), closing it after; `fn` gets null when it is missing. */
export function withContainedDir<T>(root: string, parts: readonly string[], options: OpenDirOptions, fn: (dir: ContainedDir | null) => T): T {
  const dir = ContainedDir.open(root, parts, options);
  try {
    return fn(dir);
  } finally {
    dir?.close();
  }
}

/**
 * Reads the regular file `file` (no link at its name, non-blocking, size-bounded); when `within`
 * is given and `file` lies below it, no link is followed from `within` down either. Null when missing.
 */
export function readFileWithin(file: string, within: string | undefined, options: { maxBytes?: number } = {}): Buffer | null {
  const { root, parts } = rootedAt(path.dirname(file), within);
  return withContainedDir(root, parts, {}, (dir) => dir?.readFile(path.basename(file), options) ?? null);
}

/** Writes `file` atomically (see ContainedDir.writeFile), its directories made as needed, no link followed below `within`. */
export function writeFileWithin(file: string, within: string | undefined, data: string | Uint8Array, options: ContainedWriteOptions = {}): void {
  const { root, parts } = rootedAt(path.dirname(file), within);
  withContainedDir(root, parts, { create: true }, (dir) => dir!.writeFile(path.basename(file), data, options));
}
