import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { ContainedDir } from './contained-dir.js';
import { errnoCode } from './errors.js';

export interface AtomicWriteOptions {
  /** File mode of the published file (default 0o644 less umask, as a normal create). */
  mode?: number;
  /** fsync file and directory (default true). Turn off only for caches that may be lost. */
  fsync?: boolean;
  /** Create the parent directory if missing (default false). */
  mkdir?: boolean;
  /**
   * Fail with EEXIST instead of replacing an existing target. Uses link(2), which is
   * atomic and create-only, so two racing writers never both win.
   */
  exclusive?: boolean;
  /**
   * Unlink the old target just before the rename (caches only, with `fsync: false`). Renaming
   * over an existing file makes ext4 start writing the new one out first (its auto_da_alloc
   * safeguard): ~10 ms for a 13 MB cache here. The price: a reader may find no file for a
   * moment, and a crash then loses it, which for a cache only costs a rebuild.
   */
  unlinkFirst?: boolean;
  /**
   * writeFileAtomicSync: free the replaced file's contents off the calling thread (for big
   * targets: see holdOld). writeFileAtomic's calls all run on the thread pool already.
   */
  freeOldLater?: boolean;
  /**
   * writeFileAtomicSync: the written file's descriptor is not closed but handed over once the
   * file is in place (the caller closes it). While it is open, the file's inode cannot be
   * reused: a path that still names that inode names the very file written.
   */
  handOver?: (fd: number) => void;
}

/**
 * Opens the file at `target`, if there is one, so that replacing or unlinking it only drops its
 * name: its blocks and cached pages are freed when the returned descriptor is closed, which
 * closeInBackground does on libuv's thread pool. Freeing a file of tens of MB costs the thread
 * that drops its last reference ~3-8 ms here. O_NONBLOCK: a FIFO planted at the name does not
 * hang the open; anything that cannot be opened is simply not held (null).
 */
function holdOld(target: string): number | null {
  try {
    return fs.openSync(target, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
}

/** Closes a descriptor from holdOld on the thread pool (a process that exits first closes it anyway). */
function closeInBackground(fd: number | null): void {
  if (fd !== null) fs.close(fd, () => undefined);
}

/** Renames the finished temp file `tmp` over `target`, as `unlinkFirst` and `freeOldLater` say (AtomicWriteOptions). */
function putInPlace(tmp: string, target: string, options: Pick<AtomicWriteOptions, 'unlinkFirst' | 'freeOldLater'>): void {
  const old = options.freeOldLater === true ? holdOld(target) : null;
  try {
    if (options.unlinkFirst === true) fs.rmSync(target, { force: true });
    fs.renameSync(tmp, target);
  } finally {
    closeInBackground(old);
  }
}

/**
 * Puts a cache's finished temp file in place of `target` with `unlinkFirst` and `freeOldLater`:
 * the old file is unlinked first, held open meanwhile and freed on the thread pool. For caches
 * only: a reader may find no file for a moment.
 */
export function replaceCacheFile(tmp: string, target: string): void {
  putInPlace(tmp, target, { unlinkFirst: true, freeOldLater: true });
}

/**
 * Name of a temporary sibling of `target`: unique per process and call, so two writers of the
 * same target never share a temp file (the defect of a fixed `<file>.tmp`). Starts with `.`
 * and carries `.cairn-tmp-` so listings and `verify` can recognise leftovers.
 */
const MAX_SHOWN_BASE_BYTES = 160;

export function tempSiblingName(target: string): string {
  return path.join(path.dirname(target), `${tempPrefix(path.basename(target))}${process.pid}-${randomBytes(6).toString('hex')}`);
}

/** What every temp sibling of a file named `base` starts with (the pid and a random tag follow). */
function tempPrefix(base: string): string {
  // A file name may use the whole NAME_MAX (255 bytes); the temp name adds ~30, so keep only a
  // readable head of a long name (whole code points, at most 40 of them) to stay under the limit.
  const shown = Buffer.byteLength(base) > MAX_SHOWN_BASE_BYTES ? Array.from(base).slice(0, 40).join('') : base;
  return `.${shown}${TEMP_MARKER}`;
}

/** A temp file this old whose writer is not a live process here was left by a dead one (see removeStaleTemps). */
export const STALE_TEMP_AGE_MS = 60_000;

/** A directory as a sweep of stale temps sees it: by path (removeStaleTemps) or held (removeStaleTempsIn). */
interface SweptDir {
  names(): string[];
  /** Infinity when the name is gone (nothing to remove). */
  mtimeMs(name: string): number;
  unlink(name: string): void;
}

/**
 * Removes the temp siblings (tempSiblingName) of the files `names` in `dir` that a writer left
 * when it died mid-write (a kill -9, a crash): names exactly of that form whose pid is not a
 * live process and that are at least `minAgeMs` old (a writer on another host or in another pid
 * namespace looks dead by pid; its temp file lives for moments, a dead writer's for ever). This
 * process's own are removed only with `onlyMine` (its other writes may be under way). Best
 * effort: what cannot be listed or removed stays.
 */
export function removeStaleTemps(dir: string, names: readonly string[], options: { onlyMine?: boolean; minAgeMs?: number } = {}): void {
  sweepTemps(
    {
      names: () => fs.readdirSync(dir),
      mtimeMs: (name) => fs.lstatSync(path.join(dir, name)).mtimeMs,
      unlink: (name) => fs.unlinkSync(path.join(dir, name)),
    },
    names,
    options,
  );
}

/**
 * As removeStaleTemps, in a directory cairn holds (ContainedDir): no link followed to reach it.
 * `names` may instead be a test of the file's name, for files whose names are not known ahead
 * (a pack's: a new name each).
 */
export function removeStaleTempsIn(dir: ContainedDir, names: readonly string[] | ((base: string) => boolean), options: { onlyMine?: boolean; minAgeMs?: number } = {}): void {
  sweepTemps(
    {
      names: () => dir.entries().map((e) => e.name),
      mtimeMs: (name) => dir.lstat(name)?.mtimeMs ?? Infinity,
      unlink: (name) => dir.unlink(name),
    },
    names,
    options,
  );
}

function sweepTemps(dir: SweptDir, names: readonly string[] | ((base: string) => boolean), options: { onlyMine?: boolean; minAgeMs?: number }): void {
  let entries: string[];
  try {
    entries = dir.names();
  } catch {
    return;
  }
  const tailOf = typeof names === 'function' ? tempTailFor(names) : tempTailAfter(names.map(tempPrefix));
  const oldest = Date.now() - (options.minAgeMs ?? 0);
  for (const entry of entries) {
    const rest = tailOf(entry);
    const tail = rest === null ? null : TEMP_TAIL.exec(rest);
    if (tail === null) continue;
    const pid = Number(tail[1]);
    if (options.onlyMine === true ? pid !== process.pid : pid === process.pid || pidAlive(pid)) continue;
    try {
      if (options.minAgeMs !== undefined && dir.mtimeMs(entry) > oldest) continue;
      dir.unlink(entry);
    } catch {
      // already gone
    }
  }
}

/** What follows one of `prefixes` in `entry`, or null when it starts with none. */
function tempTailAfter(prefixes: readonly string[]): (entry: string) => string | null {
  return (entry) => {
    const prefix = prefixes.find((p) => entry.startsWith(p));
    return prefix === undefined ? null : entry.slice(prefix.length);
  };
}

/** What follows the marker in `entry` when it is the temp of a file whose name `isTarget` accepts. */
function tempTailFor(isTarget: (base: string) => boolean): (entry: string) => string | null {
  return (entry) => {
    const at = entry.lastIndexOf(TEMP_MARKER);
    if (!entry.startsWith('.') || at < 1 || !isTarget(entry.slice(1, at))) return null;
    return entry.slice(at + TEMP_MARKER.length);
  };
}

/** What follows the prefix in a temp name: the writer's pid, a dash, 12 hex digits. */
const TEMP_TAIL = /^(\d+)-[0-9a-f]{12}$/;

export const TEMP_MARKER = '.cairn-tmp-';

export function isTempName(name: string): boolean {
  return name.includes(TEMP_MARKER);
}

/** Whether a process with this pid exists (EPERM: it exists, owned by someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) !== 'ESRCH';
  }
}

function fsyncDirSync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (e) {
    // Some file systems refuse fsync on a directory (EINVAL/EISDIR/EPERM); the rename is still atomic.
    const code = errnoCode(e);
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EBADF') throw e;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** fsync a directory (after a rename or unlink in it); file systems that refuse it are tolerated. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(dir, 'r');
    await fh.sync();
  } catch (e) {
    const code = errnoCode(e);
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EBADF') throw e;
  } finally {
    await fh?.close();
  }
}

/** Writes all of `b` at the descriptor's position, or at `position` (writeSync may write less than asked). */
export function writeAll(fd: number, b: Uint8Array, position?: number): void {
  for (let off = 0; off < b.length; ) off += fs.writeSync(fd, b, off, b.length - off, position === undefined ? null : position + off);
}

/**
 * Write `data` to `target` so that readers see either the old file or the whole new one:
 * unique temp file in the same directory, write, fsync, rename over the target, fsync the
 * directory. A symlink at `target` is replaced, never written through. `data` may be a function
 * that writes the content into the open temp file itself (large content produced in pieces).
 */
export function writeFileAtomicSync(target: string, data: string | Uint8Array | ((fd: number) => void), options: AtomicWriteOptions = {}): void {
  const dir = path.dirname(target);
  if (options.mkdir) fs.mkdirSync(dir, { recursive: true });
  const tmp = tempSiblingName(target);
  const doSync = options.fsync !== false;
  let fd: number | undefined;
  try {
    // 'wx' + O_NOFOLLOW: never follow a planted link at the temp name.
    fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, options.mode ?? 0o666);
    if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
    if (typeof data === 'function') data(fd);
    else fs.writeFileSync(fd, data);
    if (doSync) fs.fsyncSync(fd);
    if (options.handOver === undefined) {
      fs.closeSync(fd);
      fd = undefined;
    }
    if (options.exclusive) {
      fs.linkSync(tmp, target);
      fs.unlinkSync(tmp);
    } else putInPlace(tmp, target, options);
    if (doSync) fsyncDirSync(dir);
    if (fd !== undefined) {
      const written = fd;
      fd = undefined;
      options.handOver!(written);
    }
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    try {
      fs.unlinkSync(tmp);
    } catch {
      // already renamed or never created
    }
    throw e;
  }
}

export async function writeFileAtomic(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = path.dirname(target);
  if (options.mkdir) await fsp.mkdir(dir, { recursive: true });
  const tmp = tempSiblingName(target);
  const doSync = options.fsync !== false;
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, options.mode ?? 0o666);
    if (options.mode !== undefined) await fh.chmod(options.mode);
    await fh.writeFile(data);
    if (doSync) await fh.sync();
    await fh.close();
    fh = undefined;
    if (options.exclusive) {
      await fsp.link(tmp, target);
      await fsp.unlink(tmp);
    } else {
      if (options.unlinkFirst === true) await fsp.rm(target, { force: true });
      await fsp.rename(tmp, target);
    }
    if (doSync) await fsyncDir(dir);
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await fsp.unlink(tmp).catch(() => undefined);
    throw e;
  }
}

/**
 * A cache file written in two steps, its bulk on libuv's thread pool while the caller goes on:
 * `writeFileInBackground` starts writing the head parts to a temp sibling; `finish` writes the
 * tail after them and, once everything is down, renames the temp file into place (as
 * writeFileAtomicSync with `fsync: false, unlinkFirst: true, freeOldLater: true`: for caches
 * only). `abort` drops it: the temp name goes at once, the descriptor once the write is done.
 */
export interface BackgroundWrite {
  finish(tail: readonly Buffer[]): Promise<void>;
  abort(): void;
}

export function writeFileInBackground(target: string, head: readonly Buffer[], mode: number): BackgroundWrite {
  const tmp = tempSiblingName(target);
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  try {
    fs.fchmodSync(fd, mode); // the umask may have narrowed the create mode
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  let headBytes = 0;
  for (const b of head) headBytes += b.length;
  let settled = false;
  // One pwritev for the whole head (continued should it come back short): one trip to the pool.
  const written = new Promise<void>((resolve, reject) => {
    const from = (bufs: readonly Buffer[], position: number): void => {
      if (bufs.length === 0) return resolve();
      fs.writev(fd, bufs as Buffer[], position, (e, n) => (e !== null ? reject(e) : n === 0 ? reject(new Error('write made no progress')) : from(rest(bufs, n), position + n)));
    };
    from(
      head.filter((b) => b.length > 0),
      0,
    );
  });
  written.catch(() => undefined);
  const drop = (): void => {
    settled = true;
    fs.rmSync(tmp, { force: true });
    void written.then(
      () => fs.close(fd, () => undefined),
      () => fs.close(fd, () => undefined),
    );
  };
  return {
    async finish(tail) {
      if (settled) throw new Error('background write already finished or aborted');
      try {
        let at = headBytes;
        for (const b of tail) {
          writeAll(fd, b, at);
          at += b.length;
        }
        await written;
      } catch (e) {
        drop();
        throw e;
      }
      settled = true;
      try {
        fs.closeSync(fd);
        replaceCacheFile(tmp, target);
      } catch (e) {
        fs.rmSync(tmp, { force: true });
        throw e;
      }
    },
    abort() {
      if (!settled) drop();
    },
  };
}

/** What remains of `bufs` once `n` bytes of them were written. */
function rest(bufs: readonly Buffer[], n: number): Buffer[] {
  const out: Buffer[] = [];
  for (const b of bufs) {
    if (n >= b.length) n -= b.length;
    else {
      out.push(n > 0 ? b.subarray(n) : b);
      n = 0;
    }
  }
  return out;
}
