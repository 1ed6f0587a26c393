/**
 * The index copy a resident process's `git status` reads (GIT_INDEX_FILE): git's own index with
 * the entries it may take as they are marked assume-valid (IndexNames.assumeValidCopy), so git
 * looks at a few hundred files instead of every tracked one.
 *
 * The copy lives only as an open descriptor: created in cairn's directory without following any
 * link and unlinked at once; git opens it through `/proc/<pid>/fd/<n>`. So a crash leaves nothing
 * behind, and no link planted in the tree can change what git reads. One file serves a process's
 * captures of a project: each writes only the 64 KiB blocks that differ from the last copy (a new
 * file's pages cost ~5x an overwrite's). Its mtime is set just before the real index's, so git
 * takes no entry as safe from the racy-timestamp check that the real index would leave to a
 * content comparison (an older index makes more entries racy, never fewer). Linux only (where
 * /proc reaches this process's descriptors); elsewhere, and on any failure (a full disk), there is
 * no copy and git reads the real index, as without one.
 */
import * as fs from 'node:fs';
import { ContainedDir, RACE_FREE, rootedAt } from '../core/contained-dir.js';

/** Blocks compared and written as one. */
const BLOCK_BYTES = 64 * 1024;

export class StatusIndex {
  /** The bytes the file holds now (null: nothing written, or a write failed). */
  private written: Buffer | null = null;
  /** The buffer of the copy before (the next copy is made in it: no new 6 MB each capture). */
  private spareBuffer: Buffer | null = null;

  private constructor(
    private readonly fd: number,
    /** The path git is given while this is open. */
    readonly path: string,
  ) {}

  /** A nameless file in `cairnDir` (inside `root`), or null where that cannot be made. */
  static open(root: string, cairnDir: string): StatusIndex | null {
    if (!RACE_FREE) return null;
    let fd: number | undefined;
    try {
      const { root: top, parts } = rootedAt(cairnDir, root);
      const dir = ContainedDir.open(top, parts, { create: true });
      if (dir === null) return null;
      try {
        const name = ContainedDir.tempName('status-index');
        fd = dir.createFile(name, 0o600);
        dir.unlink(name);
      } finally {
        dir.close();
      }
    } catch {
      if (fd !== undefined) fs.closeSync(fd);
      return null;
    }
    return new StatusIndex(fd, `/proc/${process.pid}/fd/${fd}`);
  }

  /** A buffer of `length` bytes for the next copy, when one is free (never the one the file holds). */
  spare(length: number): Buffer | undefined {
    const spare = this.spareBuffer;
    return spare !== null && spare.length === length && spare !== this.written ? spare : undefined;
  }

  /** Makes the file hold `bytes`, its mtime just before `mtimeMs` (the real index's); false when it could not. */
  update(bytes: Buffer, mtimeMs: number): boolean {
    const last = this.written;
    this.written = null;
    if (last !== null && last !== bytes) this.spareBuffer = last;
    try {
      if (last === null || last.length !== bytes.length) {
        fs.ftruncateSync(this.fd, bytes.length);
        writeAll(this.fd, bytes, 0, bytes.length);
      } else {
        for (let at = 0; at < bytes.length; at += BLOCK_BYTES) {
          const end = Math.min(at + BLOCK_BYTES, bytes.length);
          if (bytes.compare(last, at, end, at, end) !== 0) writeAll(this.fd, bytes, at, end);
        }
      }
      const seconds = (mtimeMs - 1) / 1000;
      fs.futimesSync(this.fd, seconds, seconds);
    } catch {
      return false;
    }
    this.written = bytes;
    return true;
  }

  close(): void {
    this.written = null;
    this.spareBuffer = null;
    fs.closeSync(this.fd);
  }
}

function writeAll(fd: number, bytes: Buffer, from: number, to: number): void {
  for (let at = from; at < to; ) at += fs.writeSync(fd, bytes, at, to - at, at);
}
