import * as fs from 'node:fs';
import * as os from 'node:os';
import { debugChannel, fallbackReason } from '../../core/debug.js';
import { crc32 } from '../../core/crc32.js';
import { replaceCacheFile, tempSiblingName, writeAll } from '../../core/atomic-write.js';
import { MemoPatchWriter, PATCH_SHARE, patchFits, readMemoPatch, removeMemoPatch, type MemoPatch } from './memo-patch.js';

/** `CAIRN_DEBUG=inventory`: why a memo was not used or kept (each costs only speed). */
const debug = debugChannel('inventory');
const fellBack = (what: string, e: unknown): void => {
  const why = debug === null ? null : fallbackReason(e);
  if (why !== null) debug!(`fallback: ${what} (${why})`);
};

/**
 * A text memo: the last text made from a body of entries (the pretty output, or the canonical
 * form the digest hashes), kept beside the stat cache with where each entry starts, so the
 * next text copies every run of entries that came through unchanged instead of serialising it
 * again. Private caches: the CRC-32 is checked before use (it is there for torn or damaged
 * files), and any failure to read or write one only costs speed.
 *
 * Layout: a fixed-width first line `<tag> <digest of the body> <crc32 of the rest, 10 digits>
 * <text length, 12 digits>`, the text, then the entry table: u32 n, then n + 1 u32
 * (little-endian) byte offsets in the text, where each entry starts and where the last one ends
 * (n = 0xffffffff: no table, the text alone). The line is written last (at offset 0), so a memo
 * cut short is never taken for a whole one. A later body close to this one is kept as a patch
 * of it (memo-patch.ts) instead of a whole new memo.
 */
export interface TextMemo {
  digest: string;
  text: Buffer;
  /** Where each entry starts, then where the last one ends (n + 1 offsets); null without a table. */
  starts: Uint32Array | null;
  /** The digest and CRC-32 in the memo file's first line: what a patch names its base by. */
  baseDigest: string;
  crc: number;
  /** The body's entries when they are this memo's (the base's) as a patch rearranges them (memo-patch.ts). */
  patch?: MemoPatch;
}

const LITTLE_ENDIAN = os.endianness() === 'LE';

/** Entry count of a memo written without its entry table. */
const NO_TABLE = 0xffffffff;

function headBytes(tag: string): number {
  return tag.length + 1 + 'sha256:'.length + 64 + 1 + 10 + 1 + 12 + 1;
}

function memoHead(tag: string, digest: string, crc: number, textLength: number): string {
  return `${tag} ${digest} ${String(crc).padStart(10, '0')} ${String(textLength).padStart(12, '0')}\n`;
}

/**
 * The memo at `file` if it is whole, has `tag` and is of one of the `wanted` digests (read no
 * further otherwise). `early`: that file's bytes when read already (prefetchFile); used when they
 * hold such a memo, else the file is read as it is now (another run may have renewed it since).
 */
export function readTextMemo(file: string, tag: string, wanted: readonly (string | undefined)[], early?: Buffer | null): TextMemo | null {
  // A patch of a wanted body first: its base is then the memo wanted (whatever else it is).
  const patch = readMemoPatch(file, tag);
  if (patch !== null && wanted.includes(patch.digest)) {
    const base = readBaseMemo(file, tag, [patch.baseDigest], early);
    if (base !== null && base.crc === patch.baseCrc && base.starts !== null && patchFits(patch, base.starts.length - 1)) return { ...base, digest: patch.digest, patch };
  }
  return readBaseMemo(file, tag, wanted, early);
}

function readBaseMemo(file: string, tag: string, wanted: readonly (string | undefined)[], early?: Buffer | null): TextMemo | null {
  const fromEarly = early === undefined || early === null ? null : parseTextMemo(early, tag, wanted);
  if (fromEarly !== null) return fromEarly;
  const headLength = headBytes(tag);
  let buf: Buffer;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const st = fs.fstatSync(fd);
      // Not by size: a directory's is 4096 on ext4 but a few bytes on tmpfs.
      if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: st.isDirectory() ? 'EISDIR' : 'EINVAL' });
      const size = st.size;
      if (size < headLength) return null;
      buf = Buffer.allocUnsafe(size);
      if (fs.readSync(fd, buf, 0, headLength, 0) !== headLength) return null;
      if (!wanted.includes(digestIn(buf, tag))) return null;
      for (let off = headLength; off < size; ) {
        const n = fs.readSync(fd, buf, off, size - off, off);
        if (n === 0) return null;
        off += n;
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    fellBack(`memo ${file} not read: made again`, e);
    return null;
  }
  return parseTextMemo(buf, tag, wanted);
}

function digestIn(buf: Buffer, tag: string): string {
  return buf.toString('latin1', tag.length + 1, tag.length + 1 + 'sha256:'.length + 64);
}

/**
 * Starts reading the file at `file` whole on the thread pool, as one read(2) (a read in pieces
 * would wait for this thread's event loop between them): the scan starts its memos this way as
 * soon as it knows the tree changed, so they arrive while it builds the result. Null when it
 * cannot be read; the memo's checks come later (readTextMemo's `early`).
 */
export function prefetchFile(file: string): Promise<Buffer | null> {
  let fd: number;
  let buf: Buffer;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    fellBack(`${file} not read ahead`, e);
    return Promise.resolve(null);
  }
  try {
    buf = Buffer.allocUnsafe(fs.fstatSync(fd).size);
  } catch (e) {
    fellBack(`${file} not read ahead`, e);
    fs.closeSync(fd);
    return Promise.resolve(null);
  }
  return new Promise((resolve) => {
    const readFrom = (off: number): void => {
      if (off === buf.length) return done(buf);
      fs.read(fd, buf, off, buf.length - off, off, (e, n) => (e !== null || n === 0 ? done(null) : readFrom(off + n)));
    };
    const done = (b: Buffer | null): void => fs.close(fd, () => resolve(b));
    readFrom(0);
  });
}

/** The memo in `buf` (a whole memo file's bytes) if it is whole, has `tag` and is of one of the `wanted` digests. */
function parseTextMemo(buf: Buffer, tag: string, wanted: readonly (string | undefined)[]): TextMemo | null {
  const headLength = headBytes(tag);
  if (buf.length < headLength) return null;
  const digest = digestIn(buf, tag);
  if (!wanted.includes(digest)) return null;
  // `digest` is one the caller wants, so a valid one: the whole first line must be as written.
  const head = buf.subarray(0, headLength).toString('latin1');
  const textLength = Number(head.slice(-13, -1));
  const rest = buf.subarray(headLength);
  if (!Number.isSafeInteger(textLength) || textLength > rest.length || head !== memoHead(tag, digest, crc32(rest), textLength)) return null;
  const table = rest.subarray(textLength);
  if (table.length < 4) return null;
  const n = table.readUInt32LE(0);
  const text = rest.subarray(0, textLength);
  const crc = Number(head.slice(-24, -14));
  if (n === NO_TABLE) return table.length === 4 ? { digest, text, starts: null, baseDigest: digest, crc } : null;
  if (table.length !== 4 + 4 * (n + 1)) return null;
  const starts = new Uint32Array(n + 1);
  // Written little-endian; copied as is where that is the machine's order.
  if (LITTLE_ENDIAN) Buffer.from(starts.buffer).set(table.subarray(4));
  else for (let j = 0; j <= n; j++) starts[j] = table.readUInt32LE(4 + 4 * j);
  for (let j = 1; j <= n; j++) if (starts[j]! < starts[j - 1]!) return null;
  if (starts[n]! > textLength) return null;
  return { digest, text, starts, baseDigest: digest, crc };
}

/**
 * One part of a text. A run of entries carries the first entry it holds, how many, and where
 * each of them starts in its bytes (null when that could not be told: the memo then gets no
 * entry table).
 */
export interface Part {
  bytes: Buffer;
  first?: number;
  count?: number;
  starts?: ArrayLike<number> | null;
  /** For a run copied from a memo's base text: the base index of its first entry. */
  base?: number;
}

/** Entries [from, to) to serialise, or the bytes that hold them already and where each starts in them. */
export interface Segment {
  from: number;
  to: number;
  bytes?: Buffer;
  starts?: Uint32Array;
  /** Bytes copied from the memo's base text: the base index of the first entry. */
  base?: number;
}

/** Entries [from, to) in pieces of `chunk`, appended to `out`. */
export function chunks(from: number, to: number, chunk: number, out: Segment[] = []): Segment[] {
  for (let i = from; i < to; i += chunk) out.push({ from: i, to: Math.min(to, i + chunk) });
  return out;
}

/**
 * The new body's entries as segments: each run of entries that came through in order and
 * unchanged (`oldIndex[k]`: entry k's index in the memo's body, or -1) is copied from the old
 * text, where it is one contiguous stretch (entries are separated by `separator` bytes there
 * too); the entries between such runs are to be serialised, `chunk` at a time. A patched memo's
 * entries lie in two texts (the base's and the patch's): a run is copied from one of them.
 */
export function splicePlan(oldIndex: Int32Array, memo: { text: Buffer; starts: Uint32Array; patch?: MemoPatch }, separator: number, chunk: number): Segment[] {
  const n = oldIndex.length;
  const patch = memo.patch;
  const oldCount = patch !== undefined ? patch.from.length : memo.starts.length - 1;
  // Where each new entry lies in the memo: its base index (≥ 0), -(1 + j) for entry j of the
  // patch text, or NOWHERE when it is to be serialised. Plain loops over typed arrays: in a
  // one-shot process this runs before the JIT has warmed up, where a call per entry costs.
  const src = new Int32Array(n);
  const from = patch?.from;
  for (let k = 0; k < n; k++) {
    const a = oldIndex[k]!;
    src[k] = a < 0 || a >= oldCount ? NOWHERE : from !== undefined ? from[a]! : a;
  }
  const plan: Segment[] = [];
  let gap = 0;
  for (let k = 0; k < n; ) {
    const first = src[k]!;
    if (first === NOWHERE) {
      k++;
      continue;
    }
    // Consecutive in one text: base indices count up, patch positions -(1 + j) count down.
    const step = first >= 0 ? 1 : -1;
    let e = k + 1;
    let expect = first + step;
    while (e < n && src[e] === expect) {
      e++;
      expect += step;
    }
    chunks(gap, k, chunk, plan);
    const inBase = first >= 0;
    const text = inBase ? memo.text : patch!.text;
    const starts = inBase ? memo.starts : patch!.starts;
    const lo = inBase ? first : -first - 1;
    const hi = lo + (e - k);
    const count = starts.length - 1;
    const at = starts[lo]!;
    const end = hi < count ? starts[hi]! - separator : starts[count]!;
    const rel = starts.slice(lo, hi);
    for (let j = 0; j < rel.length; j++) rel[j] = rel[j]! - at;
    plan.push(inBase ? { from: k, to: e, bytes: text.subarray(at, end), starts: rel, base: lo } : { from: k, to: e, bytes: text.subarray(at, end), starts: rel });
    k = e;
    gap = k;
  }
  return chunks(gap, n, chunk, plan);
}

/** splicePlan's mark for an entry not in the memo (below every -(1 + j) a patch can hold). */
const NOWHERE = -0x80000000;

/** How the entries of a text are serialised, and told apart again in the bytes. */
export interface EntryText<T> {
  entries: readonly T[];
  /** The entries given, one after the other, joined by `separator` bytes. */
  serialise(list: readonly T[]): Buffer;
  /** What begins every entry but the first, found `skip` bytes before the entry's own start (entryStarts). */
  boundary: Buffer;
  skip: number;
  separator: number;
  /** At most this many entries serialised at once. */
  chunk: number;
}

/**
 * Gives the segment at `plan[at]` (one without bytes) its bytes and entry starts, serialised in
 * one call together with the next segments without bytes, up to `chunk` entries in all: after a
 * scattered edit the gaps between copied runs are single entries, and one serialisation per
 * entry cost ~10 µs each (JSON.stringify's own set-up). Entries that cannot be told apart in
 * the joint bytes are serialised segment by segment (a segment without starts gets no table).
 */
export function serialiseGaps<T>(plan: Segment[], at: number, t: EntryText<T>): void {
  const batch: Segment[] = [];
  let entries = 0;
  for (let i = at; i < plan.length && entries < t.chunk; i++) {
    const seg = plan[i]!;
    if (seg.bytes !== undefined) continue;
    if (batch.length > 0 && entries + (seg.to - seg.from) > t.chunk) break;
    batch.push(seg);
    entries += seg.to - seg.from;
  }
  const bytes = t.serialise(batch.flatMap((seg) => t.entries.slice(seg.from, seg.to)));
  const starts = entryStarts(bytes, entries, t.boundary, t.skip);
  if (starts === null) {
    // The entries cannot be told apart in these bytes: the first segment alone, as its own piece.
    const seg = batch[0]!;
    seg.bytes = batch.length === 1 ? bytes : t.serialise(t.entries.slice(seg.from, seg.to));
    seg.starts = (batch.length === 1 ? null : entryStarts(seg.bytes, seg.to - seg.from, t.boundary, t.skip)) ?? undefined;
    return;
  }
  let a = 0;
  for (const seg of batch) {
    const b = a + (seg.to - seg.from);
    const base = starts[a]!;
    const rel = starts.slice(a, b);
    for (let j = 0; j < rel.length; j++) rel[j] = rel[j]! - base;
    seg.bytes = bytes.subarray(base, b < entries ? starts[b]! - t.separator : bytes.length);
    seg.starts = rel;
    a = b;
  }
}

/**
 * Where each of the `count` entries of a serialised run starts in its bytes, given the bytes
 * that begin every entry but the first (`boundary`, found `skip` bytes before the entry's own
 * start), or null if they cannot be told apart.
 */
export function entryStarts(bytes: Buffer, count: number, boundary: Buffer, skip: number): Uint32Array | null {
  const out = new Uint32Array(count);
  let at = 0;
  for (let j = 1; j < count; j++) {
    const i = bytes.indexOf(boundary, at);
    if (i < 0) return null;
    out[j] = i + skip;
    at = i + skip;
  }
  return bytes.indexOf(boundary, at) < 0 ? out : null;
}

/**
 * Writes to a descriptor through a 1 MiB buffer: a spliced text comes as thousands of small
 * parts (copied runs and single serialised entries), one write(2) each would cost more than
 * the copies.
 */
export class BufferedFd {
  private readonly buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;

  constructor(private readonly fd: number) {}

  write(b: Buffer): void {
    if (this.used + b.length > this.buf.length) this.flush();
    if (b.length >= this.buf.length) writeAll(this.fd, b);
    else this.used += b.copy(this.buf, this.used);
  }

  flush(): void {
    if (this.used > 0) writeAll(this.fd, this.buf.subarray(0, this.used));
    this.used = 0;
  }
}

/** How a memo is written: a whole one (TextMemoWriter) or a patch of the last one's base. */
export interface MemoWriter {
  put(part: Part): void;
  commit(digest: string): void;
  abort(): void;
}

/**
 * The writer for the memo of a text that `plan` makes from `old` (entries separated by
 * `separator`): a patch of old's base while the entries not copied from that base stay within
 * PATCH_SHARE, else a whole new memo. Null when neither can be written.
 */
export function openMemoWriter(file: string, tag: string, old: TextMemo | null, plan: readonly Segment[], separator: Buffer): MemoWriter | null {
  const n = plan.length === 0 ? 0 : plan[plan.length - 1]!.to;
  let notInBase = 0;
  for (const seg of plan) if (seg.base === undefined) notInBase += seg.to - seg.from;
  if (old !== null && old.starts !== null && n > 0 && notInBase <= n * PATCH_SHARE) return new MemoPatchWriter(file, tag, { digest: old.baseDigest, crc: old.crc, text: old.text, starts: old.starts }, separator);
  return TextMemoWriter.open(file, tag);
}

/**
 * Writes a memo piece by piece (a temp file renamed into place; no fsync: it is a cache). Any
 * failure only disables it: the next run serialises again.
 */
export class TextMemoWriter implements MemoWriter {
  private crc = 0;
  private length = 0;
  /** Entry starts so far (absolute), and where the last entry ends; null once a run could not be mapped. */
  private starts: number[] | null = [];
  private entriesEnd = 0;
  private readonly out: BufferedFd;
  private done = false;

  private constructor(
    private readonly file: string,
    private readonly tmp: string,
    private fd: number | null,
    private readonly tag: string,
  ) {
    this.out = new BufferedFd(fd!);
  }

  /** Starts a memo; the digest of its body is given at commit (the canonical memo learns it last). */
  static open(file: string, tag: string): TextMemoWriter | null {
    const tmp = tempSiblingName(file);
    try {
      const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
      const w = new TextMemoWriter(file, tmp, fd, tag);
      w.write(Buffer.alloc(headBytes(tag))); // the real first line goes in last
      return w;
    } catch (e) {
      fellBack(`memo ${file} not written`, e);
      return null;
    }
  }

  /** Appends a part of the text, noting where the entries it holds start. */
  put(part: Part): void {
    if (part.count !== undefined && part.count > 0) {
      const rel = part.starts;
      if (rel === null || rel === undefined || rel.length !== part.count || this.starts === null || this.starts.length !== part.first) this.starts = null;
      else for (let j = 0; j < rel.length; j++) this.starts.push(this.length + rel[j]!);
      this.entriesEnd = this.length + part.bytes.length;
    }
    this.length += part.bytes.length;
    this.write(part.bytes, true);
  }

  private write(b: Buffer, counted = false): void {
    if (this.fd === null) return;
    try {
      this.out.write(b);
      if (counted) this.crc = crc32(b, this.crc);
    } catch (e) {
      fellBack(`memo ${this.file} not written`, e);
      this.abort();
    }
  }

  /** Publishes the memo as the text of the body whose digest is `digest`. */
  commit(digest: string): void {
    if (this.fd === null) return;
    try {
      const starts = this.starts;
      const table = Buffer.alloc(starts === null ? 4 : 4 + 4 * (starts.length + 1));
      table.writeUInt32LE(starts === null ? NO_TABLE : starts.length, 0);
      if (starts !== null) {
        starts.forEach((v, j) => table.writeUInt32LE(v, 4 + 4 * j));
        table.writeUInt32LE(this.entriesEnd, 4 + 4 * starts.length);
      }
      this.write(table, true);
      if (this.fd === null) return;
      this.out.flush();
      const head = Buffer.from(memoHead(this.tag, digest, this.crc, this.length), 'latin1');
      fs.writeSync(this.fd, head, 0, head.length, 0);
      fs.closeSync(this.fd);
      this.fd = null;
      // Unlinked first (ext4 would flush a file renamed over another at once), its ~15 MB freed
      // off this thread; a memo missing for a moment is only a cache miss.
      replaceCacheFile(this.tmp, this.file);
      this.done = true;
      removeMemoPatch(this.file); // it patched the base just replaced
    } catch (e) {
      fellBack(`memo ${this.file} not written`, e);
      this.abort();
    }
  }

  /** Drops an unfinished memo (no-op after commit). */
  abort(): void {
    if (this.done) return;
    this.done = true;
    if (this.fd !== null) {
      try {
        fs.closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = null;
    }
    fs.rmSync(this.tmp, { force: true });
  }
}
