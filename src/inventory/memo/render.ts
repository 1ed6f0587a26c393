import * as fs from 'node:fs';
import * as path from 'node:path';
import { debugChannel, fallbackReason } from '../../core/debug.js';
import { removeStaleTemps, STALE_TEMP_AGE_MS, writeFileAtomicSync } from '../../core/atomic-write.js';
import { NON_ASCII, PIECE_ENTRIES, scannedFacts, snapshotDigestOf, takeRenderRead, textBytes, type ScannedBody } from '../digest.js';
import { racyMarginOf } from '../rules/racy.js';
import { outputStampOfRenderMemo, RENDER_MEMO_TAG } from '../cache/artefacts.js';
import { BufferedFd, chunks as chunksOf, openMemoWriter, readTextMemo, serialiseGaps, splicePlan, type EntryText, type Part, type Segment, type TextMemo } from './text-memo.js';
import type { RepoSnapshot, RepoSnapshotEntry } from '../types.js';

/** `CAIRN_DEBUG=inventory`: why the output stamp or a comparison did not spare a write (each costs only speed). */
const debug = debugChannel('inventory');
const fellBack = (what: string, e: unknown): void => {
  const why = debug === null ? null : fallbackReason(e);
  if (why !== null) debug!(`fallback: ${what} (${why})`);
};

/**
 * The CLI's text of a RepoSnapshot is `JSON.stringify(doc, null, 2)` plus a newline. For a
 * 100k-file tree that is ~26 MB, so it is produced and written in pieces of PIECE_ENTRIES
 * entries (or the scan's ScanTuning.pieceEntries; peak memory stays flat), and a warm snapshot does not produce what it already has:
 * for a document exactly as the scanner and makeRepoSnapshot built it, whose scan's handle
 * (ScannedBody, from scanForSnapshot) the caller passes on, the last rendering is kept beside
 * the stat cache (a "render memo"). When the digest, which identifies the body,
 * matches, the memo is the text; when the scan says how the body came from the memo's (a
 * RenderBasis: entries added, removed or read again), every run of entries that came through
 * unchanged is copied from the memo as bytes and only the rest is rendered, so a scattered
 * handful of changes costs a handful of small renders. The memo is a text memo (text-memo.ts:
 * CRC-32 checked, an entry table, written last-line-first), so a damaged one is rendered again.
 */
/** How every entry but the first of a rendered run begins: entries sit at depth 3, their keys at depth 4. */
const ENTRY_START = Buffer.from('\n      {', 'latin1');
/** Between two entries of the text. */
const ENTRY_SEPARATOR = Buffer.from(',\n', 'latin1');
/** A string no path can hold (JSON-escaped as \u0000…): marks where the entries go in the frame. */
const FILES_MARK = '\u0000cairn-files\u0000';

/** The whole text as bytes (the memo's when it applies). Holds the text in memory: writeRepoSnapshot streams. */
export function renderRepoSnapshot(snapshot: RepoSnapshot, scanned?: ScannedBody): Buffer {
  const known = memoFor(snapshot, scanned);
  const memo = known?.renderMemo;
  const last = memo === undefined ? null : readTextMemo(memo, RENDER_MEMO_TAG, [snapshot.snapshotDigest, known?.basis?.digest]);
  const piece = pieceEntriesFor(snapshot, scanned);
  if (last?.digest === snapshot.snapshotDigest) return wholeText(snapshot, last, piece);
  const plan = planFor(snapshot, last, known, piece);
  const mw = memo === undefined ? null : openMemoWriter(memo, RENDER_MEMO_TAG, last, plan, ENTRY_SEPARATOR);
  const parts: Buffer[] = [];
  for (const part of renderParts(snapshot, plan, piece)) {
    parts.push(part.bytes);
    mw?.put(part);
  }
  mw?.commit(snapshot.snapshotDigest);
  return Buffer.concat(parts);
}

/**
 * Writes the text to `file` (atomically, fsynced) or to `out` (a stream, with back-pressure),
 * piece by piece, so it is never held whole; keeps or reuses the render memo (given the scan's
 * handle of this very body).
 */
export async function writeRepoSnapshot(snapshot: RepoSnapshot, to: { file: string } | { out: NodeJS.WritableStream }, scanned?: ScannedBody): Promise<void> {
  const known = memoFor(snapshot, scanned);
  const memo = known?.renderMemo;
  const digest = snapshot.snapshotDigest;
  const piece = pieceEntriesFor(snapshot, scanned);
  // An unchanged tree snapshotted to the same file again: the file already says it all.
  if ('file' in to && memo !== undefined && outputStillHolds(memo, to.file, digest)) return;
  // The scan may have started reading the memo already (takeRenderRead).
  const early = known === undefined ? undefined : await takeRenderRead(known);
  const last = memo === undefined ? null : readTextMemo(memo, RENDER_MEMO_TAG, [digest, known?.basis?.digest], early);
  if (last?.digest === digest) {
    const text = wholeText(snapshot, last, piece);
    if ('file' in to) {
      const checkedAt = Date.now();
      const held = holdsExactly(to.file, text);
      if (held !== null) stampOutput(memo!, to.file, digest, held, checkedAt);
      else {
        sweepBeside(to.file);
        writeFileAtomicSync(to.file, text, { freeOldLater: true });
      }
    } else await writeOut(to.out, text);
    return;
  }
  const plan = planFor(snapshot, last, known, piece);
  const mw = memo === undefined ? null : openMemoWriter(memo, RENDER_MEMO_TAG, last, plan, ENTRY_SEPARATOR);
  try {
    if ('file' in to) {
      sweepBeside(to.file);
      const writeParts = (fd: number): void => {
        const out = new BufferedFd(fd);
        for (const part of renderParts(snapshot, plan, piece)) {
          out.write(part.bytes);
          mw?.put(part);
        }
        out.flush();
      };
      writeFileAtomicSync(to.file, writeParts, { freeOldLater: true });
    } else {
      // Gathered into ~1 MiB writes: a spliced text comes as thousands of small parts.
      let batch: Buffer[] = [];
      let batched = 0;
      for (const part of renderParts(snapshot, plan, piece)) {
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
    mw?.commit(snapshot.snapshotDigest);
  } finally {
    mw?.abort();
  }
}

/** A run killed while writing `file` left its temp file beside it: removed once its writer is dead. */
function sweepBeside(file: string): void {
  removeStaleTemps(path.dirname(file), [path.basename(file)], { minAgeMs: STALE_TEMP_AGE_MS });
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
  return outputStampOfRenderMemo(memo);
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
    // The racy margin of the output's own file system (racy.ts): 100 ms on a local one, else 2 s.
    const margin = racyMarginOf(file);
    return now[1]! < stamp.checkedAt - margin && now[2]! < stamp.checkedAt - margin;
  } catch (e) {
    fellBack(`output stamp of ${file} not read: the output is compared`, e);
    return false;
  }
}

/** Records that `file`, with `stat`, was found holding the text of `digest` by a read that began at `checkedAt` (best effort: a lost stamp costs one comparison). */
function stampOutput(memo: string, file: string, digest: string, stat: number[], checkedAt: number): void {
  try {
    const stamp: OutputStamp = { file: path.resolve(file), digest, stat, checkedAt };
    writeFileAtomicSync(stampPath(memo), JSON.stringify(stamp), { fsync: false, mode: 0o600 });
  } catch (e) {
    // a cache beside a cache: never worth failing for
    fellBack(`output stamp of ${file} not written`, e);
  }
}

/** How the entries are made: every run of them the memo already renders copied (see RenderBasis), the rest rendered. */
function planFor(snapshot: RepoSnapshot, old: TextMemo | null, known: ScannedBody | undefined, piece: number): Segment[] {
  const basis = old === null ? undefined : known?.basis;
  const n = snapshot.body.files.length;
  if (basis === undefined || old === null || old.starts === null || old.digest !== basis.digest || basis.oldIndex.length !== n) return chunksOf(0, n, piece);
  return splicePlan(basis.oldIndex, { text: old.text, starts: old.starts, patch: old.patch }, ENTRY_SEPARATOR.length, piece);
}

/** The memo's text of this very body: its own bytes, or (a patched memo) its runs put together. */
function wholeText(snapshot: RepoSnapshot, memo: TextMemo, piece: number): Buffer {
  if (memo.patch === undefined || memo.starts === null) return memo.text;
  const same = new Int32Array(snapshot.body.files.length);
  for (let k = 0; k < same.length; k++) same[k] = k;
  const parts: Buffer[] = [];
  for (const part of renderParts(snapshot, splicePlan(same, { text: memo.text, starts: memo.starts, patch: memo.patch }, ENTRY_SEPARATOR.length, piece), piece)) parts.push(part.bytes);
  return Buffer.concat(parts);
}

/** Entries rendered at a time: the scan's (ScanTuning.pieceEntries) for a body it made, else PIECE_ENTRIES. */
function pieceEntriesFor(snapshot: RepoSnapshot, scanned: ScannedBody | undefined): number {
  return scannedFacts(snapshot.body, scanned)?.pieceEntries ?? PIECE_ENTRIES;
}

/**
 * The text in pieces, as bytes: the document's frame (every field but the entries, as
 * JSON.stringify lays it out) split where the entries go, and the entries a piece at a time
 * (pieceEntriesFor), each piece stringified inside a frame of the same depth so its indentation
 * is the document's own.
 */
export function* renderPieces(snapshot: RepoSnapshot, scanned?: ScannedBody): Generator<Buffer> {
  const piece = pieceEntriesFor(snapshot, scanned);
  for (const part of renderParts(snapshot, chunksOf(0, snapshot.body.files.length, piece), piece)) yield part.bytes;
}

/** The parts of the text, the entries as `plan` segments them (rendered unless a segment has its bytes, `piece` at a time). */
function* renderParts(snapshot: RepoSnapshot, plan: Segment[], piece: number): Generator<Part> {
  const files = snapshot.body.files;
  if (files.length === 0) {
    yield { bytes: textBytes(`${JSON.stringify(snapshot, null, 2)}\n`) };
    return;
  }
  const frame = JSON.stringify({ ...snapshot, body: { ...snapshot.body, files: [FILES_MARK] } }, null, 2);
  const mark = `      ${JSON.stringify(FILES_MARK)}`;
  const at = frame.indexOf(mark);
  if (at < 0 || frame.indexOf(mark, at + 1) >= 0) {
    yield { bytes: textBytes(`${JSON.stringify(snapshot, null, 2)}\n`) }; // an unusual document: no shortcuts
    return;
  }
  yield { bytes: textBytes(frame.slice(0, at)) };
  const text: EntryText<RepoSnapshotEntry> = { entries: files, serialise: renderList, boundary: ENTRY_START, skip: 1, separator: ENTRY_SEPARATOR.length, chunk: piece };
  for (let i = 0; i < plan.length; i++) {
    const seg = plan[i]!;
    if (seg.from > 0) yield { bytes: ENTRY_SEPARATOR };
    const rendered = seg.bytes === undefined;
    if (rendered) serialiseGaps(plan, i, text);
    yield { bytes: seg.bytes!, first: seg.from, count: seg.to - seg.from, starts: seg.starts ?? null, base: seg.base };
    // Rendered bytes are let go once written: a whole rendering stays `piece` entries at a time.
    if (rendered) plan[i] = { from: seg.from, to: seg.to };
  }
  yield { bytes: textBytes(`${frame.slice(at + mark.length)}\n`) };
}

/** Entries as they appear in the document, one after the other. */
function renderList(list: readonly RepoSnapshotEntry[]): Buffer {
  const open = '{\n  "body": {\n    "files": [\n'.length;
  const close = '\n    ]\n  }\n}'.length;
  const wrapped = JSON.stringify({ body: { files: list } }, null, 2);
  // All-ASCII (the usual case): encode the whole piece as latin1 (a plain copy) and cut the
  // frame off the bytes, where byte and character offsets agree.
  if (!NON_ASCII.test(wrapped)) {
    const b = Buffer.from(wrapped, 'latin1');
    return b.subarray(open, b.length - close);
  }
  return Buffer.from(wrapped.slice(open, wrapped.length - close), 'utf8');
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
  } catch (e) {
    fellBack(`output ${file} not compared: written`, e);
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
  } catch (e) {
    fellBack(`output ${file} not compared: written`, e);
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function writeOut(out: NodeJS.WritableStream, b: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = out.write(b, (e?: Error | null) => (e ? reject(e) : undefined));
    if (ok) resolve();
    else out.once('drain', () => resolve());
  });
}

/**
 * The scan's handle when it applies: its body is this document's, which is exactly as the engine
 * built it (makeRepoSnapshot's shape and key order, the digest its body really has), and it
 * names a render memo.
 */
function memoFor(s: RepoSnapshot, scanned: ScannedBody | undefined): ScannedBody | undefined {
  // The handle first: only a scanner's own body has one, and then its digest is known (no hashing here).
  const known = scannedFacts(s.body, scanned);
  if (known?.renderMemo === undefined) return undefined;
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
    snapshotDigestOf(s.body, known) === s.snapshotDigest;
  return exact ? known : undefined;
}
