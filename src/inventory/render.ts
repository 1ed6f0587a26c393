import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { tempSiblingName, writeAll, writeFileAtomicSync } from '../core/atomic-write.js';
import { NON_ASCII, renderBasisOf, renderMemoOf, snapshotDigestOf } from './digest.js';
import { RACY_MARGIN_MS } from './prepare.js';
import type { RepoSnapshot } from './types.js';

/**
 * The CLI's text of a RepoSnapshot is `JSON.stringify(doc, null, 2)` plus a newline. For a
 * 100k-file tree that is ~26 MB, so it is produced and written in pieces of RENDER_CHUNK
 * entries (peak memory stays flat), and a warm snapshot does not produce what it already has:
 * for a document exactly as the scanner and makeRepoSnapshot built it, the last rendering is
 * kept beside the stat cache (a "render memo"). When the digest, which identifies the body,
 * matches, the memo is the text; when the scan says how the body came from the memo's (a
 * RenderBasis: entries added, removed or read again), every run of entries that came through
 * unchanged is copied from the memo as bytes and only the rest is rendered, so a scattered
 * handful of changes costs a handful of small renders. The memo's CRC-32 is checked before use
 * (a private cache, like the stat cache: the check is for torn or damaged files), so a damaged
 * one is rendered again.
 *
 * Memo layout: a fixed-width first line `cairn-render 6 <snapshotDigest> <crc32 of the rest,
 * 10 digits> <text length, 12 digits>`, the text, then the entry table: u32 n, then n + 1 u32
 * (little-endian) byte offsets in the text, where each entry starts and where the last one ends
 * (n = 0xffffffff: no table, the text alone). The line is written last (at offset 0), so a memo
 * cut short is never taken for a whole one.
 */
const MEMO_TAG = 'cairn-render 6';
const MEMO_HEAD_BYTES = MEMO_TAG.length + 1 + 'sha256:'.length + 64 + 1 + 10 + 1 + 12 + 1;
const RENDER_CHUNK = 4096;
/** Entry count of a memo written without its entry table. */
const NO_TABLE = 0xffffffff;
/** How every entry but the first of a rendered run begins: entries sit at depth 3, their keys at depth 4. */
const ENTRY_START = Buffer.from('\n      {', 'latin1');
/** A string no path can hold (JSON-escaped as \u0000…): marks where the entries go in the frame. */
const FILES_MARK = '\u0000cairn-files\u0000';

/**
 * One part of the text. A run of entries carries the first entry it renders, how many, and
 * where each of them starts in its bytes (null when that could not be told: the memo then
 * gets no entry table).
 */
interface Part {
  bytes: Buffer;
  first?: number;
  count?: number;
  starts?: ArrayLike<number> | null;
}

/** A memo read back: the digest of the body it renders, its text and, unless it has none, its entry table. */
interface Memo {
  digest: string;
  text: Buffer;
  /** Where each entry starts, then where the last one ends (n + 1 offsets). */
  starts: Uint32Array | null;
}

/** Entries [from, to) to render, or the bytes that render them already and where each starts in them. */
interface Segment {
  from: number;
  to: number;
  bytes?: Buffer;
  starts?: Uint32Array;
}

/** The whole text as bytes (the memo's when it applies). Holds the text in memory: writeRepoSnapshot streams. */
export function renderRepoSnapshot(snapshot: RepoSnapshot): Buffer {
  const memo = memoFor(snapshot);
  const last = memo === undefined ? null : readMemo(memo, [snapshot.snapshotDigest, renderBasisOf(snapshot.body)?.digest]);
  if (last?.digest === snapshot.snapshotDigest) return last.text;
  const mw = memo === undefined ? null : MemoWriter.open(memo, snapshot.snapshotDigest);
  const parts: Buffer[] = [];
  for (const part of partsFor(snapshot, last)) {
    parts.push(part.bytes);
    mw?.put(part);
  }
  mw?.commit();
  return Buffer.concat(parts);
}

/**
 * Writes the text to `file` (atomically, fsynced) or to `out` (a stream, with back-pressure),
 * piece by piece, so it is never held whole; keeps or reuses the render memo.
 */
export async function writeRepoSnapshot(snapshot: RepoSnapshot, to: { file: string } | { out: NodeJS.WritableStream }): Promise<void> {
  const memo = memoFor(snapshot);
  const digest = snapshot.snapshotDigest;
  // An unchanged tree snapshotted to the same file again: the file already says it all.
  if ('file' in to && memo !== undefined && outputStillHolds(memo, to.file, digest)) return;
  const last = memo === undefined ? null : readMemo(memo, [digest, renderBasisOf(snapshot.body)?.digest]);
  if (last?.digest === digest) {
    if ('file' in to) {
      const checkedAt = Date.now();
      const held = holdsExactly(to.file, last.text);
      if (held === null) writeFileAtomicSync(to.file, last.text);
      else stampOutput(memo!, to.file, digest, held, checkedAt);
    } else await writeOut(to.out, last.text);
    return;
  }
  const mw = memo === undefined ? null : MemoWriter.open(memo, snapshot.snapshotDigest);
  try {
    if ('file' in to) {
      writeFileAtomicSync(to.file, (fd) => {
        const out = new BufferedFd(fd);
        for (const part of partsFor(snapshot, last)) {
          out.write(part.bytes);
          mw?.put(part);
        }
        out.flush();
      });
    } else {
      // Gathered into ~1 MiB writes: a spliced text comes as thousands of small parts.
      let batch: Buffer[] = [];
      let batched = 0;
      for (const part of partsFor(snapshot, last)) {
        batch.push(part.bytes);
        batched += part.bytes.length;
        mw?.put(part);
        if (batched >= 1 << 20) {
          await writeOut(to.out, Buffer.concat(batch));
          batch = [];
          batched = 0;
        }
      }
      if (batched > 0) await writeOut(to.out, Buffer.concat(batch));
    }
    mw?.commit();
  } finally {
    mw?.abort();
  }
}

/**
 * The output stamp (`<id>.out` beside the memo): which file was last found or made to hold the
 * text of which digest, with its stat then. While the file keeps that stat (size, mtime, ctime,
 * inode, device) and its ctime is older than the check by the racy margin, so that no later
 * write could hide in the same clock tick (the stat cache's rule), it still holds that text and
 * is neither read nor written. Only a comparison stamps (a file just written is racy anyway):
 * the run after a write compares the bytes, and the runs after that only lstat the file.
 */
interface OutputStamp {
  file: string;
  digest: string;
  stat: number[];
  checkedAt: number;
}

function stampPath(memo: string): string {
  return `${memo.replace(/\.render$/, '')}.out`;
}

function statRow(st: fs.Stats): number[] {
  return [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.dev];
}

function outputStillHolds(memo: string, file: string, digest: string): boolean {
  try {
    const stamp = JSON.parse(fs.readFileSync(stampPath(memo), 'utf8')) as Partial<OutputStamp>;
    if (stamp.file !== path.resolve(file) || stamp.digest !== digest || !Array.isArray(stamp.stat) || typeof stamp.checkedAt !== 'number') return false;
    const st = fs.lstatSync(file, { throwIfNoEntry: false });
    if (st?.isFile() !== true) return false;
    const now = statRow(st);
    if (now.some((v, i) => v !== stamp.stat![i])) return false;
    return now[1]! < stamp.checkedAt - RACY_MARGIN_MS && now[2]! < stamp.checkedAt - RACY_MARGIN_MS;
  } catch {
    return false;
  }
}

/** Records that `file`, with `stat`, was found holding the text of `digest` by a read that began at `checkedAt` (best effort: a lost stamp costs one comparison). */
function stampOutput(memo: string, file: string, digest: string, stat: number[], checkedAt: number): void {
  try {
    const stamp: OutputStamp = { file: path.resolve(file), digest, stat, checkedAt };
    writeFileAtomicSync(stampPath(memo), JSON.stringify(stamp), { fsync: false, mode: 0o600 });
  } catch {
    // a cache beside a cache: never worth failing for
  }
}

/** The parts of the text, with every run of entries the memo already renders copied (see RenderBasis). */
function partsFor(snapshot: RepoSnapshot, old: Memo | null): Generator<Part> {
  const basis = old === null ? undefined : renderBasisOf(snapshot.body);
  const n = snapshot.body.files.length;
  if (basis === undefined || old === null || old.starts === null || old.digest !== basis.digest || basis.oldIndex.length !== n) return renderParts(snapshot, chunks(0, n));
  return renderParts(snapshot, splicePlan(basis.oldIndex, old.text, old.starts));
}

/** Entries [from, to) in pieces of RENDER_CHUNK. */
function chunks(from: number, to: number, out: Segment[] = []): Segment[] {
  for (let i = from; i < to; i += RENDER_CHUNK) out.push({ from: i, to: Math.min(to, i + RENDER_CHUNK) });
  return out;
}

/**
 * The new body's entries as segments: each run of entries that came through in order and
 * unchanged (`oldIndex`) is copied from the old text, where it is one contiguous stretch
 * (entries are separated by ",\n" there too); the entries between such runs are rendered,
 * RENDER_CHUNK at a time.
 */
function splicePlan(oldIndex: Int32Array, text: Buffer, starts: Uint32Array): Segment[] {
  const n = oldIndex.length;
  const oldCount = starts.length - 1;
  const endOf = (j: number): number => (j + 1 < oldCount ? starts[j + 1]! - 2 : starts[oldCount]!);
  const plan: Segment[] = [];
  let gap = 0;
  for (let k = 0; k < n; ) {
    const a = oldIndex[k]!;
    if (a < 0 || a >= oldCount) {
      k++;
      continue;
    }
    let e = k + 1;
    while (e < n && oldIndex[e] === oldIndex[e - 1]! + 1 && oldIndex[e]! < oldCount) e++;
    const b = a + (e - k);
    chunks(gap, k, plan);
    const base = starts[a]!;
    const rel = starts.slice(a, b);
    for (let j = 0; j < rel.length; j++) rel[j] = rel[j]! - base;
    plan.push({ from: k, to: e, bytes: text.subarray(base, endOf(b - 1)), starts: rel });
    k = e;
    gap = k;
  }
  return chunks(gap, n, plan);
}

/** Where each of the `count` entries of a rendered run starts in its bytes, or null if they cannot be told apart. */
function entryStarts(bytes: Buffer, count: number): Uint32Array | null {
  const out = new Uint32Array(count);
  let at = 0;
  for (let j = 1; j < count; j++) {
    const i = bytes.indexOf(ENTRY_START, at);
    if (i < 0) return null;
    out[j] = i + 1;
    at = i + 1;
  }
  return bytes.indexOf(ENTRY_START, at) < 0 ? out : null;
}

/**
 * The text in pieces, as bytes: the document's frame (every field but the entries, as
 * JSON.stringify lays it out) split where the entries go, and the entries RENDER_CHUNK at a
 * time, each piece stringified inside a frame of the same depth so its indentation is the
 * document's own.
 */
export function* renderPieces(snapshot: RepoSnapshot): Generator<Buffer> {
  for (const part of renderParts(snapshot, chunks(0, snapshot.body.files.length))) yield part.bytes;
}

/** The parts of the text, the entries as `plan` segments them (rendered unless a segment has its bytes). */
function* renderParts(snapshot: RepoSnapshot, plan: readonly Segment[]): Generator<Part> {
  const files = snapshot.body.files;
  if (files.length === 0) {
    yield { bytes: encode(`${JSON.stringify(snapshot, null, 2)}\n`) };
    return;
  }
  const frame = JSON.stringify({ ...snapshot, body: { ...snapshot.body, files: [FILES_MARK] } }, null, 2);
  const mark = `      ${JSON.stringify(FILES_MARK)}`;
  const at = frame.indexOf(mark);
  if (at < 0 || frame.indexOf(mark, at + 1) >= 0) {
    yield { bytes: encode(`${JSON.stringify(snapshot, null, 2)}\n`) }; // an unusual document: no shortcuts
    return;
  }
  yield { bytes: encode(frame.slice(0, at)) };
  const comma = Buffer.from(',\n', 'latin1');
  for (const seg of plan) {
    if (seg.from > 0) yield { bytes: comma };
    const count = seg.to - seg.from;
    if (seg.bytes !== undefined) yield { bytes: seg.bytes, first: seg.from, count, starts: seg.starts ?? null };
    else {
      const bytes = renderPiece(files, seg.from, seg.to);
      yield { bytes, first: seg.from, count, starts: entryStarts(bytes, count) };
    }
  }
  yield { bytes: encode(`${frame.slice(at + mark.length)}\n`) };
}

/** Entries [from, to) as they appear in the document. */
function renderPiece(files: readonly RepoSnapshot['body']['files'][number][], from: number, to: number): Buffer {
  const open = '{\n  "body": {\n    "files": [\n'.length;
  const close = '\n    ]\n  }\n}'.length;
  const wrapped = JSON.stringify({ body: { files: files.slice(from, to) } }, null, 2);
  // All-ASCII (the usual case): encode the whole piece as latin1 (a plain copy) and cut the
  // frame off the bytes, where byte and character offsets agree.
  if (!NON_ASCII.test(wrapped)) {
    const b = Buffer.from(wrapped, 'latin1');
    return b.subarray(open, b.length - close);
  }
  return Buffer.from(wrapped.slice(open, wrapped.length - close), 'utf8');
}

function encode(piece: string): Buffer {
  // All-ASCII text (the usual case) encodes as latin1: a plain copy, several times faster than UTF-8.
  return NON_ASCII.test(piece) ? Buffer.from(piece, 'utf8') : Buffer.from(piece, 'latin1');
}

/**
 * The stat of `file` when it is a regular file (not a link) holding exactly `bytes` and did not
 * change while being read (then synced: nearly free when it already is on disk), else null:
 * rewriting it would change nothing. Reading and comparing ~19 MB costs ~10 ms here; the
 * atomic rewrite it saves costs 27-75 ms (bench/RESULTS.md).
 */
function holdsExactly(file: string, bytes: Buffer): number[] | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const before = fs.fstatSync(fd);
    if (!before.isFile()) return null;
    const chunk = Buffer.allocUnsafe(1 << 20);
    let off = 0;
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, off);
      if (n === 0) break;
      if (off + n > bytes.length || chunk.compare(bytes, off, off + n, 0, n) !== 0) return null;
      off += n;
    }
    if (off !== bytes.length) return null;
    const stat = statRow(before);
    if (statRow(fs.fstatSync(fd)).some((v, i) => v !== stat[i])) return null;
    fs.fdatasyncSync(fd);
    return stat;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes to a descriptor through a 1 MiB buffer: a spliced text comes as thousands of small
 * parts (copied runs and single rendered entries), one write(2) each would cost more than the
 * copies.
 */
class BufferedFd {
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

function writeOut(out: NodeJS.WritableStream, b: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = out.write(b, (e?: Error | null) => (e ? reject(e) : undefined));
    if (ok) resolve();
    else out.once('drain', () => resolve());
  });
}

/** The memo path, for a document exactly as the engine built it (makeRepoSnapshot's shape and key order, the digest its body really has). */
function memoFor(s: RepoSnapshot): string | undefined {
  // The memo first: only a scanner's own body has one, and then its digest is known (no hashing here).
  const memo = renderMemoOf(s.body);
  if (memo === undefined) return undefined;
  const keys = Object.keys(s);
  const exact =
    keys.length === 5 &&
    keys[0] === 'apiVersion' &&
    keys[1] === 'kind' &&
    keys[2] === 'root' &&
    keys[3] === 'snapshotDigest' &&
    keys[4] === 'body' &&
    s.apiVersion === 'axiom.dev/v2' &&
    s.kind === 'RepoSnapshot' &&
    Object.keys(s.root).length === 1 &&
    s.root.kind === 'relative' &&
    Object.keys(s.body).join() === 'files,truncated,counts' &&
    Object.keys(s.body.counts).join() === 'files,bytes' &&
    snapshotDigestOf(s.body) === s.snapshotDigest;
  return exact ? memo : undefined;
}

/** The memo at `file` if it is whole and renders one of the `wanted` digests (read no further otherwise). */
function readMemo(file: string, wanted: readonly (string | undefined)[]): Memo | null {
  let buf: Buffer;
  let digest: string;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const size = fs.fstatSync(fd).size;
      if (size < MEMO_HEAD_BYTES) return null;
      buf = Buffer.allocUnsafe(size);
      if (fs.readSync(fd, buf, 0, MEMO_HEAD_BYTES, 0) !== MEMO_HEAD_BYTES) return null;
      digest = buf.toString('latin1', MEMO_TAG.length + 1, MEMO_TAG.length + 1 + 'sha256:'.length + 64);
      if (!wanted.includes(digest)) return null;
      for (let off = MEMO_HEAD_BYTES; off < size; ) {
        const n = fs.readSync(fd, buf, off, size - off, off);
        if (n === 0) return null;
        off += n;
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  // `digest` is one the caller wants, so a valid one: the whole first line must be as written.
  const head = buf.subarray(0, MEMO_HEAD_BYTES).toString('latin1');
  const textLength = Number(head.slice(-13, -1));
  const rest = buf.subarray(MEMO_HEAD_BYTES);
  if (!Number.isSafeInteger(textLength) || textLength > rest.length || head !== memoHead(digest, crc32(rest), textLength)) return null;
  const table = rest.subarray(textLength);
  if (table.length < 4) return null;
  const n = table.readUInt32LE(0);
  const text = rest.subarray(0, textLength);
  if (n === NO_TABLE) return table.length === 4 ? { digest, text, starts: null } : null;
  if (table.length !== 4 + 4 * (n + 1)) return null;
  const starts = new Uint32Array(n + 1);
  Buffer.from(starts.buffer).set(table.subarray(4));
  for (let j = 1; j <= n; j++) if (starts[j]! < starts[j - 1]!) return null;
  if (starts[n]! > textLength) return null;
  return { digest, text, starts };
}

function memoHead(digest: string, crc: number, textLength: number): string {
  return `${MEMO_TAG} ${digest} ${String(crc).padStart(10, '0')} ${String(textLength).padStart(12, '0')}\n`;
}

/**
 * Writes a memo beside the output, piece by piece (a temp file renamed into place; no fsync: it
 * is a cache). Any failure only disables it: the next run renders again.
 */
class MemoWriter {
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
    private readonly digest: string,
  ) {
    this.out = new BufferedFd(fd!);
  }

  static open(file: string, digest: string): MemoWriter | null {
    const tmp = tempSiblingName(file);
    try {
      const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
      const w = new MemoWriter(file, tmp, fd, digest);
      w.write(Buffer.alloc(MEMO_HEAD_BYTES)); // the real first line goes in last
      return w;
    } catch {
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
    } catch {
      this.abort();
    }
  }

  commit(): void {
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
      const head = Buffer.from(memoHead(this.digest, this.crc, this.length), 'latin1');
      fs.writeSync(this.fd, head, 0, head.length, 0);
      fs.closeSync(this.fd);
      this.fd = null;
      // Unlinked first: renaming over it would make ext4 flush the new memo at once (see
      // AtomicWriteOptions.unlinkFirst); a memo missing for a moment is only a cache miss.
      fs.rmSync(this.file, { force: true });
      fs.renameSync(this.tmp, this.file);
      this.done = true;
    } catch {
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
