/**
 * The project tree as restore reaches it: every directory is opened from the root through
 * ContainedDir (no symlink followed in any component, race-free on Linux), held while the
 * restore runs, and every change is made inside the held directory: a file or link is put in
 * place by writing a temp name and renaming it over the target (atomic: a reader, or a kill,
 * sees the old or the new, never a torn file).
 */
import * as fs from 'node:fs';
import { ContainedDir, ContainmentError } from '../core/contained-dir.js';
import { errnoCode } from '../core/errors.js';

/** The state of one path: a file (digest, exec bit), a symlink (target), or nothing. */
export type PathState = { kind: 'file'; sha256: string; mode: string } | { kind: 'symlink'; target: string } | { kind: 'absent' };

export function sameState(a: PathState, b: PathState): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.sha256 === b.sha256 && a.mode === b.mode;
  if (a.kind === 'symlink' && b.kind === 'symlink') return a.target === b.target;
  return true;
}

function split(rel: string): { dir: string; name: string } {
  const at = rel.lastIndexOf('/');
  return at < 0 ? { dir: '', name: rel } : { dir: rel.slice(0, at), name: rel.slice(at + 1) };
}

/**
 * What is on disk at a path. `inWay`: a file or link stands where one of its parent directories
 * goes, so the path is absent (it can come back once that one is gone); `blocked`: something
 * else stops cairn from reaching it.
 */
export type DiskState = { state: PathState; bytes?: Buffer; inWay?: string } | { blocked: string } | { directory: true };

export class ProjectTree {
  private readonly dirs = new Map<string, ContainedDir>();

  /**
   * `keep`: directories never removed, even when empty: the process's current directory and
   * its ancestors (git's checkout spares them too; removing one leaves a shell in a deleted
   * directory).
   */
  constructor(
    readonly root: string,
    private readonly keep: ReadonlySet<string> = new Set(),
  ) {}

  /** True when `relDir` is a directory restore must not remove (see `keep`). */
  kept(relDir: string): boolean {
    return this.keep.has(relDir);
  }

  /** The held directory `relDir` ('' is the root); null when missing and not `create`. */
  dir(relDir: string, create: boolean): ContainedDir | null {
    const cached = this.dirs.get(relDir);
    if (cached !== undefined) return cached;
    if (relDir === '') {
      const root = ContainedDir.require(this.root);
      this.dirs.set('', root);
      return root;
    }
    const { dir: parentRel, name } = split(relDir);
    const parent = this.dir(parentRel, create);
    if (parent === null) return null;
    const child = parent.child(name, create ? { create: true } : {});
    if (child !== null) this.dirs.set(relDir, child);
    return child;
  }

  /** Forgets held directories at and below `relDir` (after it was removed). */
  private forget(relDir: string): void {
    for (const [key, d] of this.dirs) {
      if (key === relDir || key.startsWith(`${relDir}/`)) {
        d.close();
        this.dirs.delete(key);
      }
    }
  }

  /** Reads the state of `rel` (files are read and hashed by the caller through `bytes`). */
  read(rel: string, hash: (bytes: Buffer) => string): DiskState {
    const { dir, name } = split(rel);
    let parent: ContainedDir | null;
    try {
      parent = this.dir(dir, false);
    } catch (e) {
      if (e instanceof ContainmentError && (e.reason === 'not-a-directory' || e.reason === 'symlink')) {
        // A file or link where a parent directory would be: the path is absent (that one may be going).
        const inWay = this.firstNonDirectory(dir);
        if (inWay !== null) return { state: { kind: 'absent' }, inWay };
      }
      if (e instanceof ContainmentError) return { blocked: e.message };
      throw e;
    }
    if (parent === null) return { state: { kind: 'absent' } };
    const st = parent.lstat(name);
    if (st === null) return { state: { kind: 'absent' } };
    if (st.isSymbolicLink()) return { state: { kind: 'symlink', target: fs.readlinkSync(parent.at(name), 'utf8') } };
    if (st.isDirectory()) return { directory: true };
    if (!st.isFile()) return { blocked: `${rel} is not a regular file` };
    const bytes = parent.readFile(name);
    if (bytes === null) return { state: { kind: 'absent' } };
    return { state: { kind: 'file', sha256: hash(bytes), mode: (st.mode & 0o111) !== 0 ? '0755' : '0644' }, bytes };
  }

  /** The first component of `relDir` that is a regular file or a link (not a directory), or null. */
  private firstNonDirectory(relDir: string): string | null {
    const parts = relDir.split('/');
    for (let i = 0; i < parts.length; i++) {
      const parentRel = parts.slice(0, i).join('/');
      const parent = this.dir(parentRel, false);
      if (parent === null) return null;
      const st = parent.lstat(parts[i] as string);
      if (st === null) return null;
      if (st.isFile() || st.isSymbolicLink()) return parts.slice(0, i + 1).join('/');
      if (!st.isDirectory()) return null;
    }
    return null;
  }

  /** Puts a file with `bytes` and exec bit at `rel` (parents created), through the temp name `tmp`. */
  writeFile(rel: string, bytes: Uint8Array, mode: string, tmp: string): void {
    const { dir, name } = split(rel);
    const parent = this.dir(dir, true) as ContainedDir;
    const existing = parent.lstat(name);
    const perm = permFor(existing, mode);
    removeStale(parent, tmp);
    const fd = fs.openSync(parent.at(tmp), fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, perm);
    try {
      fs.fchmodSync(fd, perm);
      fs.writeFileSync(fd, bytes);
    } finally {
      fs.closeSync(fd);
    }
    this.replace(parent, tmp, name, existing);
  }

  writeSymlink(rel: string, target: string, tmp: string): void {
    const { dir, name } = split(rel);
    const parent = this.dir(dir, true) as ContainedDir;
    removeStale(parent, tmp);
    fs.symlinkSync(target, parent.at(tmp));
    this.replace(parent, tmp, name, parent.lstat(name));
  }

  /** Renames tmp over name; an empty directory in the way (left by deletes) is removed first. */
  private replace(parent: ContainedDir, tmp: string, name: string, existing: fs.Stats | null): void {
    if (existing?.isDirectory() === true) {
      try {
        parent.rmdir(name);
      } catch (e) {
        parent.unlink(tmp);
        throw e;
      }
    }
    parent.rename(tmp, name);
  }

  /** Sets the exec bit of the file at `rel` (no link followed). */
  chmod(rel: string, mode: string): void {
    const { dir, name } = split(rel);
    const parent = this.dir(dir, false);
    if (parent === null) return;
    const fd = parent.openFile(name);
    if (fd === null) return;
    try {
      fs.fchmodSync(fd, permFor(fs.fstatSync(fd), mode));
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Removes the file or link at `rel`; a directory there is left alone (false). */
  remove(rel: string): boolean {
    const { dir, name } = split(rel);
    const parent = this.dir(dir, false);
    if (parent === null) return true;
    const st = parent.lstat(name);
    if (st === null) return true;
    if (st.isDirectory()) return false;
    parent.unlink(name);
    return true;
  }

  /** Removes `relDir` and then its parents while they are empty (never the root, nor a kept one). */
  pruneEmptyDirs(relDir: string): void {
    let current = relDir;
    while (current !== '' && !this.keep.has(current)) {
      const { dir, name } = split(current);
      const parent = this.dir(dir, false);
      if (parent === null) return;
      try {
        this.forget(current);
        if (!parent.rmdir(name)) return;
      } catch (e) {
        const code = errnoCode(e);
        if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') return;
        throw e;
      }
      current = dir;
    }
  }

  /** Removes a leftover temp name of an interrupted restore, if present. */
  removeTemp(rel: string, tmp: string): void {
    const { dir } = split(rel);
    let parent: ContainedDir | null;
    try {
      parent = this.dir(dir, false);
    } catch {
      return;
    }
    if (parent !== null) removeStale(parent, tmp);
  }

  /** Every file and link below the directory `relDir` (no link followed). */
  filesUnder(relDir: string): string[] {
    const out: string[] = [];
    const dir = this.dir(relDir, false);
    if (dir === null) return out;
    for (const e of dir.entries()) {
      const rel = `${relDir}/${e.name}`;
      if (e.isDirectory()) out.push(...this.filesUnder(rel));
      else out.push(rel);
    }
    return out;
  }

  close(): void {
    for (const d of this.dirs.values()) d.close();
    this.dirs.clear();
  }
}

function removeStale(parent: ContainedDir, tmp: string): void {
  try {
    parent.unlink(tmp);
  } catch (e) {
    if (!(e instanceof ContainmentError)) throw e;
  }
}

/**
 * Permission bits for a file whose exec bit must be `mode`: an existing file keeps its other
 * bits, and gets x where it has r (as git does); a new one is 0644 or 0755.
 */
function permFor(existing: fs.Stats | null, mode: string): number {
  const exec = mode === '0755';
  if (existing === null || !existing.isFile()) return exec ? 0o755 : 0o644;
  const base = existing.mode & 0o666;
  return exec ? base | ((base & 0o444) >> 2) : base;
}
