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
/** The file system monitor's extension: git then asks the monitor, not the marks, which entries to look at. */
const MONITOR_EXTENSION = 'FSMN';
/** An entry's flag: git takes the file as the entry says, without looking at it (`update-index --assume-unchanged`). */
const FLAG_ASSUME_VALID = 0x8000;
/** An entry's merge stage (non-zero: a conflicted path). */
const FLAG_STAGE = 0x3000;
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
    /** Where each name's entry begins (its first stage's), or -1 when the name has several stages. */
    private readonly heads: Int32Array,
    /** The length of the repository's object ids (20, or 32 under sha256). */
    private readonly idLength: number,
    /** Whether an entry is a gitlink (a submodule's commit): git's status of it depends on what it is asked to list. */
    readonly gitlinks: boolean,
    /** Whether the index carries the file system monitor's extension. */
    private readonly monitored: boolean,
  ) {}

  /** The index file's mtime in ms (from its key), or null when there was no file. */
  get mtimeMs(): number | null {
    const ns = this.key.split(':')[3];
    return ns === undefined ? null : Number(BigInt(ns) / 1000n) / 1000;
  }

  /** The index file's size in bytes. */
  get byteLength(): number {
    return this.bytes.length;
  }

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
    if (key === '-') return new IndexNames(key, Buffer.alloc(0), new Int32Array(0), new Int32Array(0), new Int32Array(0), 20, false, false);
    let bytes: Buffer | null;
    try {
      bytes = readFileWithin(file, gitDir, { maxBytes: INDEX_MAX_BYTES });
    } catch {
      return null;
    }
    if (bytes === null) return null; // gone after the stat: read again next time
    const idLength = indexIdBytes(gitDir);
    const names = parseNames(bytes, idLength);
    return names === null ? null : new IndexNames(key, bytes, names.starts, names.ends, names.heads, idLength, names.gitlinks, names.monitored);
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
    return this.startsWith(at, prefix);
  }

  /** The names `older` held that this index does not (both in git's byte order: one merge). */
  removedSince(older: IndexNames): string[] {
    const out: string[] = [];
    let j = 0;
    for (let i = 0; i < older.starts.length; ) {
      const c = j < this.starts.length ? compareRanges(older.bytes, older.starts[i]!, older.ends[i]!, this.bytes, this.starts[j]!, this.ends[j]!) : -1;
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

  /**
   * This index's bytes with the entries git may take as they are marked assume-valid, so that a
   * `git status` reading the copy (GIT_INDEX_FILE) looks only at the others' files: ~120 ms of
   * lstat on two cores at 50k files become the few hundred files an iteration touched. An entry is
   * marked when the index `held` had it byte for byte (stat data, object id, flags: git's answer
   * for a file it did not see change is then the one it gave), it is a single stage, a plain
   * file or link (no gitlink), without extended flags (intent-to-add, skip-worktree), not marked
   * already, and neither it nor a directory above it is in `recheck` (the paths that may have
   * changed on disk, and those git's held answer listed as changed). The trailing checksum is
   * zeroed (git reads such an index, skipHash's form, and does not check the sum when reading).
   * Null when the marks would not be heeded: an index under the file system monitor. `into`, when
   * it is this index's size, takes the copy (a caller's spare buffer: 6 MB at 50k entries).
   */
  assumeValidCopy(held: IndexNames, recheck: Iterable<string>, into?: Buffer): { bytes: Buffer; marked: number } | null {
    const same = held.bytes === this.bytes;
    if (this.monitored || this.bytes.length === 0 || (!same && held.idLength !== this.idLength)) return null;
    const check = new Uint8Array(this.starts.length);
    for (const p of recheck) {
      const want = Buffer.from(p, 'utf8');
      let at = this.lowerBound(want);
      if (at < this.starts.length && this.compareAt(at, want) === 0) {
        check[at] = 1;
        continue; // (an entry's name is no other entry's directory)
      }
      const prefix = Buffer.from(`${p}/`, 'utf8');
      for (at = Math.max(at, this.lowerBound(prefix)); at < this.starts.length && this.startsWith(at, prefix); at++) check[at] = 1;
    }
    const out = into !== undefined && into.length === this.bytes.length ? into : Buffer.allocUnsafe(this.bytes.length);
    this.bytes.copy(out);
    const words = wordsOf(this.bytes);
    const heldWords = wordsOf(held.bytes);
    let marked = 0;
    for (let i = 0, j = 0; i < this.starts.length; i++) {
      const head = this.heads[i]!;
      if (head < 0 || check[i] === 1) continue;
      const flagsAt = head + STAT_BYTES + this.idLength;
      const flags = this.bytes.readUInt16BE(flagsAt);
      if ((flags & (FLAG_ASSUME_VALID | FLAG_EXTENDED | FLAG_STAGE)) !== 0 || this.bytes.readUInt32BE(head + MODE_AT) === GITLINK) continue;
      if (!same) {
        // The held entry of this name (both lists are in git's byte order); usually the next one.
        // Entries are whole 4-byte words (the header's 12 bytes, then each padded to 8), compared so.
        const end = paddedEnd(head, this.ends[i]!);
        if (j < held.starts.length && !(words !== null && heldWords !== null && held.heads[j]! >= 0 && sameWords(words, head, end, heldWords, held.heads[j]!))) {
          let c = 1;
          while (j < held.starts.length && (c = compareRanges(held.bytes, held.starts[j]!, held.ends[j]!, this.bytes, this.starts[i]!, this.ends[i]!)) < 0) j++;
          if (c !== 0) continue;
          const heldHead = held.heads[j]!;
          if (heldHead < 0 || compareRanges(held.bytes, heldHead, paddedEnd(heldHead, held.ends[j]!), this.bytes, head, end) !== 0) continue;
        } else if (j >= held.starts.length) continue;
        j++;
      }
      out.writeUInt16BE(flags | FLAG_ASSUME_VALID, flagsAt);
      marked++;
    }
    out.fill(0, out.length - this.idLength);
    return { bytes: out, marked };
  }

  /** Whether name `i` begins with `prefix`. */
  private startsWith(i: number, prefix: Buffer): boolean {
    const start = this.starts[i]!;
    return this.ends[i]! - start >= prefix.length && this.bytes.compare(prefix, 0, prefix.length, start, start + prefix.length) === 0;
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
    return compareRanges(this.bytes, this.starts[i]!, this.ends[i]!, want, 0, want.length);
  }
}

/**
 * `a[as, ae)` against `b[bs, be)` in byte order (<0, 0, >0), as Buffer.compare: in line, since
 * names are short and Buffer.compare's argument checks cost more than the bytes (~5x on 50k names).
 */
function compareRanges(a: Uint8Array, as: number, ae: number, b: Uint8Array, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs);
  for (let k = 0; k < n; k++) {
    const d = a[as + k]! - b[bs + k]!;
    if (d !== 0) return d;
  }
  return ae - as - (be - bs);
}

/** Where the entry at `head` whose name ends at `nameEnd` ends: its NUL padding takes it to a multiple of 8 bytes. */
function paddedEnd(head: number, nameEnd: number): number {
  return head + ((nameEnd - head + 8) & ~7);
}

/** The bytes as 32-bit words (entries of versions 2 and 3 begin on a multiple of 4), or null when they do not lie on one. */
function wordsOf(bytes: Buffer): Int32Array | null {
  return bytes.byteOffset % 4 === 0 ? new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2) : null;
}

/** Whether the entry at [head, end) of `a` is word for word the one at `other` of `b` (header, name and padding). */
function sameWords(a: Int32Array, head: number, end: number, b: Int32Array, other: number): boolean {
  const from = head >>> 2;
  const to = end >>> 2;
  const at = other >>> 2;
  if (at + (to - from) > b.length) return false;
  // The range ends past the name's NUL (its padding has one at least): the same words are the same name.
  for (let k = 0; k < to - from; k++) if (a[from + k] !== b[at + k]) return false;
  return true;
}

/**
 * Where each entry's name lies in a version 2 or 3 index: its length in the flags (the NUL after
 * it when 0xfff or longer), the entry padded with NULs to a multiple of 8 bytes. Stages of one
 * conflicted path are consecutive: kept once. Null when anything does not hold together.
 */
function parseNames(bytes: Buffer, idLength: number): { starts: Int32Array; ends: Int32Array; heads: Int32Array; gitlinks: boolean; monitored: boolean } | null {
  if (bytes.length < HEADER_BYTES + idLength || bytes.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = bytes.readUInt32BE(4);
  if (version !== 2 && version !== 3) return null;
  const count = bytes.readUInt32BE(8);
  const end = bytes.length - idLength; // the trailing checksum
  if (count > (end - HEADER_BYTES) / (STAT_BYTES + idLength + 4)) return null;
  const starts = new Int32Array(count);
  const ends = new Int32Array(count);
  const heads = new Int32Array(count);
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
      heads[n] = at;
      n++;
    } else heads[n - 1] = -1;
    at += (nameEnd - at + 8) & ~7;
  }
  let monitored = false;
  for (; at + 8 <= end; ) {
    const size = bytes.readUInt32BE(at + 4);
    const signature = bytes.toString('latin1', at, at + 4);
    if (UNREADABLE_EXTENSIONS.has(signature)) return null;
    if (signature === MONITOR_EXTENSION) monitored = true;
    at += 8 + size;
  }
  if (at !== end) return null;
  return { starts: starts.subarray(0, n), ends: ends.subarray(0, n), heads: heads.subarray(0, n), gitlinks, monitored };
}
