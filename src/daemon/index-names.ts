/**
 * The path names a git index holds, read without a git process, for a resident process that
 * keeps git's untracked list itself (watched-manager.ts): which names left the index since the
 * last capture (each may be untracked now, with no event in the tree), and whether a path is
 * tracked (a held untracked path that was added is not untracked any more).
 *
 * Names are kept as offsets into the index's bytes and compared as bytes (git sorts them so):
 * decoding 50k names into strings and a Set costs ~30 ms; the offsets ~3 ms, and the comparison
 * of two indexes a native `Buffer.compare` per name. Only an index read exactly is read: versions
 * 2 and 3, no split index (`link`), no sparse directory entries (`sdir`, mode 040000); anything
 * else, or bytes that do not hold together, is null, and the caller asks git for everything.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readFileWithin } from '../core/contained-dir.js';
import { ENTRY_STAT_BYTES as STAT_BYTES, FILE_MODES, FLAG_EXTENDED, GITLINK_MODE as GITLINK, HEADER_BYTES, indexIdBytes, MODE_AT, NAME_MASK } from '../content/git-index.js';

/** Extensions that move entries out of this file: a split index's shared part, sparse directories. */
const UNREADABLE_EXTENSIONS = new Set(['link', 'sdir']);
const INDEX_MAX_BYTES = 2 ** 31 - 1;

/** The identity of the file at `file` (no link followed): a new index is a new file (git renames `index.lock` over it). */
export function indexKey(file: string): string | null {
  try {
    const st = fs.lstatSync(file, { bigint: true, throwIfNoEntry: false });
    if (st === undefined) return '-';
    return st.isFile() ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : null;
  } catch {
    return null;
  }
}

export class IndexNames {
  private constructor(
    /** indexKey() of the file the names were read from ('-': there was none, so no names). */
    readonly key: string,
    private readonly bytes: Buffer,
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
    /** Whether an entry is a gitlink (a submodule's commit): git's status of it depends on what it is asked to list. */
    readonly gitlinks: boolean,
  ) {}

  /** How many distinct names (a conflicted path's stages count once). */
  get size(): number {
    return this.starts.length;
  }

  /**
   * The names of `<gitDir>/index` now, or `held` when the file is still the one it was read
   * from. The file's identity is taken before its bytes, so the names are never older than the
   * key says (a file replaced in between is read again next time). Null when it cannot be read exactly.
   */
  static current(gitDir: string, held: IndexNames | null): IndexNames | null {
    const file = path.join(gitDir, 'index');
    const key = indexKey(file);
    if (key === null) return null;
    if (held !== null && held.key === key) return held;
    if (key === '-') return new IndexNames(key, Buffer.alloc(0), new Int32Array(0), new Int32Array(0), false);
    let bytes: Buffer | null;
    try {
      bytes = readFileWithin(file, gitDir, { maxBytes: INDEX_MAX_BYTES });
    } catch {
      return null;
    }
    if (bytes === null) return null; // gone after the stat: read again next time
    const names = parseNames(bytes, indexIdBytes(gitDir));
    return names === null ? null : new IndexNames(key, bytes, names.starts, names.ends, names.gitlinks);
  }

  /** Whether `name` (POSIX, from the top of the work tree) is in the index, at any stage. */
  has(name: string): boolean {
    const want = Buffer.from(name, 'utf8');
    const at = this.lowerBound(want);
    return at < this.starts.length && this.compareAt(at, want) === 0;
  }

  /** Whether some name lies below the directory `dir` (POSIX, no trailing slash). */
  hasUnder(dir: string): boolean {
    const prefix = Buffer.from(`${dir}/`, 'utf8');
    const at = this.lowerBound(prefix);
    if (at >= this.starts.length) return false;
    const start = this.starts[at]!;
    return this.ends[at]! - start >= prefix.length && this.bytes.compare(prefix, 0, prefix.length, start, start + prefix.length) === 0;
  }

  /** The names `older` held that this index does not (both in git's byte order: one merge). */
  removedSince(older: IndexNames): string[] {
    const out: string[] = [];
    let j = 0;
    for (let i = 0; i < older.starts.length; ) {
      const c = j < this.starts.length ? older.bytes.compare(this.bytes, this.starts[j], this.ends[j], older.starts[i], older.ends[i]) : -1;
      if (c === 0) {
        i++;
        j++;
      } else if (c < 0) {
        out.push(older.bytes.toString('utf8', older.starts[i], older.ends[i]));
        i++;
      } else j++;
    }
    return out;
  }

  /** The first name not below `want` in byte order. */
  private lowerBound(want: Buffer): number {
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareAt(mid, want) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private compareAt(i: number, want: Buffer): number {
    return this.bytes.compare(want, 0, want.length, this.starts[i], this.ends[i]);
  }
}

/**
 * Where each entry's name lies in a version 2 or 3 index: its length in the flags (the NUL after
 * it when 0xfff or longer), the entry padded with NULs to a multiple of 8 bytes. Stages of one
 * conflicted path are consecutive: kept once. Null when anything does not hold together.
 */
function parseNames(bytes: Buffer, idLength: number): { starts: Int32Array; ends: Int32Array; gitlinks: boolean } | null {
  if (bytes.length < HEADER_BYTES + idLength || bytes.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = bytes.readUInt32BE(4);
  if (version !== 2 && version !== 3) return null;
  const count = bytes.readUInt32BE(8);
  const end = bytes.length - idLength; // the trailing checksum
  if (count > (end - HEADER_BYTES) / (STAT_BYTES + idLength + 4)) return null;
  const starts = new Int32Array(count);
  const ends = new Int32Array(count);
  let n = 0;
  let gitlinks = false;
  let at = HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const flagsAt = at + STAT_BYTES + idLength;
    if (flagsAt + 2 > end) return null;
    const mode = bytes.readUInt32BE(at + MODE_AT);
    if (!FILE_MODES.has(mode)) return null;
    if (mode === GITLINK) gitlinks = true;
    const flags = bytes.readUInt16BE(flagsAt);
    if ((flags & FLAG_EXTENDED) !== 0 && version < 3) return null;
    const nameAt = flagsAt + 2 + ((flags & FLAG_EXTENDED) !== 0 ? 2 : 0);
    const length = flags & NAME_MASK;
    const nameEnd = length < NAME_MASK ? nameAt + length : bytes.indexOf(0, nameAt + NAME_MASK);
    if (nameEnd < nameAt || nameEnd >= end || bytes[nameEnd] !== 0) return null;
    const same = n > 0 && nameEnd - nameAt === ends[n - 1]! - starts[n - 1]! && bytes.compare(bytes, nameAt, nameEnd, starts[n - 1], ends[n - 1]) === 0;
    if (!same) {
      starts[n] = nameAt;
      ends[n] = nameEnd;
      n++;
    }
    at += (nameEnd - at + 8) & ~7;
  }
  for (; at + 8 <= end; ) {
    const size = bytes.readUInt32BE(at + 4);
    if (UNREADABLE_EXTENSIONS.has(bytes.toString('latin1', at, at + 4))) return null;
    at += 8 + size;
  }
  if (at !== end) return null;
  return { starts: starts.subarray(0, n), ends: ends.subarray(0, n), gitlinks };
}
