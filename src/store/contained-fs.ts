/**
 * File-system access confined to one base directory that never goes through a symbolic link
 * below it: every directory component is lstat-checked before use, files are opened with
 * O_NOFOLLOW, and only regular files are read. A link planted inside the store (pointing
 * anywhere) is refused rather than followed, for reads, writes and deletes alike.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { errnoCode } from '../core/errors.js';
import { stampOf, type DirStamp } from './history-index.js';

/** A symbolic link (or other non-directory) met where the store expects its own directory or file. */
export class RefusedPathError extends Error {
  constructor(
    readonly at: string,
    readonly reason: 'symlink' | 'not-a-directory' | 'not-a-file' | 'outside',
  ) {
    super(
      reason === 'symlink'
        ? `${at} is a symbolic link; cairn never reads or writes through links inside the store (remove it)`
        : reason === 'not-a-directory'
          ? `${at} is not a directory (something else is where the store expects a directory)`
          : reason === 'not-a-file'
            ? `${at} is not a regular file`
            : `${at} resolves outside the store directory`,
    );
    this.name = 'RefusedPathError';
  }
}

const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

export class ContainedFs {
  /** Absolute, normalised base directory. */
  readonly base: string;

  constructor(base: string) {
    this.base = path.resolve(base);
  }

  /** Absolute path of `parts` below the base; refuses anything that would leave it. */
  pathOf(...parts: string[]): string {
    const p = path.resolve(this.base, ...parts);
    if (p !== this.base && !p.startsWith(this.base.endsWith(path.sep) ? this.base : this.base + path.sep)) {
      throw new RefusedPathError(p, 'outside');
    }
    return p;
  }

  /**
   * Checks each directory of `parts` below the base, in order. Resolves true when all exist as
   * real directories, false when one is missing; throws RefusedPathError on a link or a file.
   */
  async probeDirs(parts: readonly string[]): Promise<boolean> {
    for (let i = 1; i <= parts.length; i++) {
      const p = this.pathOf(...parts.slice(0, i));
      let st: fs.Stats;
      try {
        st = await fsp.lstat(p);
      } catch (e) {
        if (errnoCode(e) === 'ENOENT') return false;
        throw e;
      }
      if (st.isSymbolicLink()) throw new RefusedPathError(p, 'symlink');
      if (!st.isDirectory()) throw new RefusedPathError(p, 'not-a-directory');
    }
    return true;
  }

  /** Creates the directories of `parts` one by one (the base recursively), checking each is a real directory. */
  async ensureDirs(parts: readonly string[]): Promise<string> {
    await fsp.mkdir(this.base, { recursive: true });
    for (let i = 1; i <= parts.length; i++) {
      const p = this.pathOf(...parts.slice(0, i));
      let st: fs.Stats | undefined;
      try {
        st = await fsp.lstat(p);
      } catch (e) {
        if (errnoCode(e) !== 'ENOENT') throw e;
      }
      if (st === undefined) {
        try {
          await fsp.mkdir(p);
        } catch (e) {
          if (errnoCode(e) !== 'EEXIST') throw e; // a concurrent writer made it
        }
        st = await fsp.lstat(p);
      }
      if (st.isSymbolicLink()) throw new RefusedPathError(p, 'symlink');
      if (!st.isDirectory()) throw new RefusedPathError(p, 'not-a-directory');
    }
    return this.pathOf(...parts);
  }

  /** Text of the regular file `parts/name`, or null when it (or a directory above it) is missing. */
  async readText(parts: readonly string[], name: string): Promise<string | null> {
    if (!(await this.probeDirs(parts))) return null;
    const file = this.pathOf(...parts, name);
    let fh: fsp.FileHandle;
    try {
      // O_NONBLOCK: a FIFO planted at the name must not hang the reader.
      fh = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOENT') return null;
      if (code === 'ELOOP') throw new RefusedPathError(file, 'symlink');
      throw e;
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new RefusedPathError(file, 'not-a-file');
      return await fh.readFile('utf8');
    } finally {
      await fh.close();
    }
  }

  /** Names in the directory `parts`, or null when it is missing. */
  async list(parts: readonly string[]): Promise<fs.Dirent[] | null> {
    if (!(await this.probeDirs(parts))) return null;
    try {
      return await fsp.readdir(this.pathOf(...parts), { withFileTypes: true });
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return null;
      throw e;
    }
  }

  /**
   * Streams the entries of the directory `parts` to `visit` (opendir with a large buffer: much
   * cheaper than readdir's array for 100k-entry directories). False when the directory is missing.
   */
  async forEachEntry(parts: readonly string[], visit: (entry: fs.Dirent) => void): Promise<boolean> {
    if (!(await this.probeDirs(parts))) return false;
    let dir: fs.Dir;
    try {
      dir = await fsp.opendir(this.pathOf(...parts), { bufferSize: 1024 });
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return false;
      throw e;
    }
    for await (const entry of dir) visit(entry);
    return true;
  }

  /** Identity and timestamps (ns) of the directory `parts`, which must exist. */
  async dirStamp(parts: readonly string[]): Promise<DirStamp> {
    return stampOf(await fsp.lstat(this.pathOf(...parts), { bigint: true }));
  }

  /** lstat of `parts/name`, or null when missing. */
  async lstat(parts: readonly string[], name: string): Promise<fs.Stats | null> {
    try {
      return await fsp.lstat(this.pathOf(...parts, name));
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return null;
      throw e;
    }
  }

  /** Removes the file `parts/name` (unlink never follows a link); false when it was already gone. */
  async unlink(parts: readonly string[], name: string): Promise<boolean> {
    if (!(await this.probeDirs(parts))) return false;
    try {
      await fsp.unlink(this.pathOf(...parts, name));
      return true;
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return false;
      throw e;
    }
  }
}
