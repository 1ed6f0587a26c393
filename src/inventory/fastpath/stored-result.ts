import * as fs from 'node:fs';
import { compareUtf8 } from '../../core/utf8.js';
import { abortError, keepSaved, keepUnchanged, prefixOf, type Prepared } from '../walk/prepare.js';
import { isRacy, racyFromNow, type RacyFrom } from '../rules/racy.js';
import { fileReader, processFile, STATUS, STAT_FIELDS, type FileOutcome, type FileReader } from '../io/read-file.js';
import { resolveLink } from '../walk/walk.js';
import { changedRows, claimChangedRows, NOT_READ, PREREAD_WORKER_BUDGET_MS, prereadArea, prereadRows, ROW_DIR, ROW_KNOWN, SHARED, Verifier, type PrereadArea, type VerifyRows } from '../io/verifier.js';
import { fastStatHere } from '../io/fast-stat.js';
import { applyDirChanges } from './incremental.js';
import { isWalk, walk, type Confirmed, type FastPathOutcome, type Walk } from './outcome.js';
import { entryMode } from '../entry-mode.js';
import { computeDigestOf, freezeFiles, scannedBody, type ScannedBody } from '../digest.js';
import { digestWithMemo } from '../memo/digest-memo.js';
import { canonicalMemoPath, renderMemoPath } from '../cache/artefacts.js';
import { dirRowsOf, saveCache, startCacheSave, HAS_SHA, type FileTable, type PendingCacheSave } from '../cache/stat-cache.js';
import { prefetchFile } from '../memo/text-memo.js';
import { LINK_ROW, type StoredResult } from '../cache/result.js';
import type { BuiltEntries } from '../cache/resident.js';
import type { RepoSnapshotEntry, ScanOptions, ScanResult, ScanWarning } from '../types.js';

/**
 * The stored-result fast path (git's "only look at what changed" case). The cache holds the
 * last whole result only when its tables list exactly the directories and files that result
 * depended on. Then: if no directory changed (so no entry appeared, vanished or changed type)
 * and no .gitignore changed, the set of paths is the same, and only files whose stat moved (or
 * that were racy) need reading — one lstat per path, no listing, no ignore rules, no walk.
 * Anything unusual (a skip, a size over the budget, too many changes) falls back to the walk.
 */
function storedResultFor(p: Prepared): string | Walk {
  const blob = p.previous.result;
  if (blob === undefined || p.cacheFile === null) return walk('the last scan stored no result (it depended on more than the cache records)');
  // The key is a prefix line, so a result for other limits is rejected without parsing it.
  const nl = blob.indexOf('\n');
  return nl > 0 && blob.slice(0, nl) === p.resultKey ? blob.slice(nl + 1) : walk('the stored result is for other limits (maxFiles, maxBytes)');
}

export type { Confirmed, FastPathOutcome } from './outcome.js';

/**
 * How the result is built, decided by the caller: make the body's digest (`digestBody`, the
 * caller makes a RepoSnapshot), write the cache on the thread pool while the result is built
 * (`background`, the caller awaits the save), with the memos already being read (`memoReads`:
 * the canonical memo's bytes, the render memo's coming).
 */
interface BuildMode {
  digestBody: boolean;
  background: boolean;
  memoReads: { canonical: Buffer | null; render: Promise<Buffer | null> } | undefined;
}


/** Every cached file and directory as one table of rows to lstat: files first (row = file row), then directories. */
interface VerifyTable {
  nFiles: number;
  size: number;
  /** Row paths relative to the root ('' is the root itself). */
  paths: string[];
  /** File rows (6 fields each), then directory rows (mtime, ctime, inode, device). */
  fileStats: Float64Array;
  dirStats: Float64Array;
  flags: Uint8Array;
}

function verifyTable(p: Prepared): VerifyTable {
  const t = p.previous.files;
  const nFiles = t.size;
  const dirs = dirRowsOf(p.previous);
  const size = nFiles + dirs.paths.length;
  const flags = new Uint8Array(new SharedArrayBuffer(size));
  flags.set(t.has.subarray(0, nFiles));
  flags.fill(ROW_DIR, nFiles);
  if (p.trustDir === undefined) return { nFiles, size, paths: t.paths.concat(dirs.paths), fileStats: inShared(t.stats.subarray(0, nFiles * STAT_FIELDS)), dirStats: inShared(dirs.stats), flags };
  const plan = rowPlanOf(p.previous, t.paths, dirs.paths);
  const paths = plan.paths;
  // No event anywhere: every directory is vouched for, and no parent need be asked about.
  const trust = p.trustEveryDir?.() === true ? TRUST_EVERY_DIR : p.trustDir;
  markKnownUnchanged(trust, p.trustEntry, fs.lstatSync(p.rootReal).dev, plan, nFiles, t.stats, dirs.stats, flags);
  // Shared memory, handed to the verifying worker without a copy: a loaded cache's rows are
  // views of its file's bytes, in shared memory already.
  return { nFiles, size, paths, fileStats: inShared(t.stats.subarray(0, nFiles * STAT_FIELDS)), dirStats: inShared(dirs.stats), flags };
}

/**
 * The verify table's paths (files, then directories) with each row's directory as a number: a
 * watching process scans the same rows again and again, so the paths are taken apart once, not
 * at every scan (~50k string slices and set lookups at 50k files). `parentOf[i]`: the index in
 * `dirs` of row i's directory, -1 for a path outside the watched tree; `selfOf[j]`: directory
 * row j's own index in `dirs`.
 */
interface RowPlan {
  paths: string[];
  nFiles: number;
  dirs: string[];
  parentOf: Int32Array;
  selfOf: Int32Array;
}

/** The last plan made from each cache's rows; reused only while its paths are exactly the rows' paths. */
const rowPlans = new WeakMap<object, RowPlan>();

function rowPlanOf(data: object, files: readonly string[], dirs: readonly string[]): RowPlan {
  const kept = rowPlans.get(data);
  if (kept !== undefined && samePaths(kept, files, dirs)) return kept;
  const plan = makeRowPlan(files, dirs);
  rowPlans.set(data, plan);
  return plan;
}

/** True when `plan` was made from these very paths, in this order (the same strings compare by pointer first). */
function samePaths(plan: RowPlan, files: readonly string[], dirs: readonly string[]): boolean {
  const { paths, nFiles } = plan;
  if (nFiles !== files.length || paths.length !== nFiles + dirs.length) return false;
  for (let i = 0; i < nFiles; i++) if (paths[i] !== files[i]) return false;
  for (let j = 0; j < dirs.length; j++) if (paths[nFiles + j] !== dirs[j]) return false;
  return true;
}

function makeRowPlan(files: readonly string[], dirRows: readonly string[]): RowPlan {
  const paths = files.concat(dirRows);
  const nFiles = files.length;
  const index = new Map<string, number>();
  const dirs: string[] = [];
  const numberOf = (dir: string): number => {
    let k = index.get(dir);
    if (k === undefined) {
      k = dirs.length;
      dirs.push(dir);
      index.set(dir, k);
    }
    return k;
  };
  const parentOf = new Int32Array(paths.length);
  const selfOf = new Int32Array(dirRows.length);
  // Rows come directory by directory: the last parent's number is kept.
  let lastParent = '\0';
  let lastNumber = -1;
  for (let i = 0; i < paths.length; i++) {
    const rel = paths[i]!;
    if (rel.startsWith('..') || rel.startsWith('/')) {
      parentOf[i] = -1; // not a path inside the watched tree
      if (i >= nFiles) selfOf[i - nFiles] = -1;
      continue;
    }
    const slash = rel.lastIndexOf('/');
    if (slash !== lastParent.length || !rel.startsWith(lastParent)) {
      lastParent = slash < 0 ? '' : rel.slice(0, slash);
      lastNumber = numberOf(lastParent);
    }
    parentOf[i] = lastNumber;
    if (i >= nFiles) selfOf[i - nFiles] = numberOf(rel);
  }
  return { paths, nFiles, dirs, parentOf, selfOf };
}

/**
 * Flags ROW_KNOWN on the rows a watching caller vouches for: a file or symlink-free entry whose
 * directory did not change, a directory when neither it nor its parent did. A symlink is always
 * looked at (where it leads is not watched), and so is a row on another device than the root's
 * (a mount inside the tree, maybe a network one, whose changes made elsewhere raise no event).
 * The caller is asked once per directory, not once per row.
 */
function markKnownUnchanged(trustDir: ((rel: string) => boolean) | typeof TRUST_EVERY_DIR, trustEntry: ((rel: string) => boolean) | undefined, rootDev: number, plan: RowPlan, nFiles: number, fileStats: Float64Array, dirStats: Float64Array, flags: Uint8Array): void {
  const { parentOf, selfOf, dirs, paths } = plan;
  const trusted = new Uint8Array(dirs.length);
  if (trustDir === TRUST_EVERY_DIR) trusted.fill(1);
  else for (let k = 0; k < dirs.length; k++) trusted[k] = trustDir(dirs[k]!) ? 1 : 0;
  const size = parentOf.length;
  for (let i = 0; i < nFiles; i++) {
    const parent = parentOf[i]!;
    // (In a directory with events, a file no event named: KnownUnchanged.entry.)
    if (parent < 0 || (trusted[parent] === 0 && trustEntry?.(paths[i]!) !== true)) continue;
    if ((fileStats[i * STAT_FIELDS + 5]! & S_IFMT) !== S_IFLNK && fileStats[i * STAT_FIELDS + 4] === rootDev) flags[i]! |= ROW_KNOWN;
  }
  for (let i = nFiles; i < size; i++) {
    const parent = parentOf[i]!;
    if (parent < 0 || trusted[parent] === 0 || trusted[selfOf[i - nFiles]!] === 0) continue;
    if (dirStats[(i - nFiles) * 4 + 3] === rootDev) flags[i]! |= ROW_KNOWN;
  }
}

/** markKnownUnchanged's trust when no directory had an event. */
const TRUST_EVERY_DIR = Symbol('every directory');
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** `a` itself when it lives in shared memory, else a copy there. */
function inShared<T extends Float64Array | Uint8Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const copy = (a instanceof Float64Array ? new Float64Array(new SharedArrayBuffer(a.byteLength)) : new Uint8Array(new SharedArrayBuffer(a.byteLength))) as T;
  copy.set(a);
  return copy;
}

/** What the lstat pass found: changed file rows and the directories whose stat moved (or that are gone). */
interface Verified {
  files: number[];
  dirs: Set<string>;
}

function splitRows(v: VerifyTable, rows: readonly number[]): Verified {
  const files: number[] = [];
  const dirs = new Set<string>();
  for (const r of rows) {
    if (r < v.nFiles) files.push(r);
    else dirs.add(v.paths[r]!);
  }
  return { files, dirs };
}

/**
 * Whether row `i`, read again with this stat and digest, still gives the entry it gave: same
 * size, same mode bits the entry shows, and the same digest (with digests on; a row that had
 * none, such as a file added since, is a new entry).
 */
function sameEntry(t: FileTable, i: number, stat: readonly number[], sha: Uint8Array | undefined, withDigest: boolean): boolean {
  const o = i * STAT_FIELDS;
  // st_mode 0: a row never read (a file added since); it has no entry to compare with.
  if (t.stats[o + 5] === 0 || t.stats[o] !== stat[0] || entryMode(t.stats[o + 5]!) !== entryMode(stat[5]!)) return false;
  return !withDigest || sameSha(t, i, sha);
}

function sameSha(t: FileTable, row: number, sha: Uint8Array | undefined): boolean {
  if (sha === undefined || (t.has[row]! & HAS_SHA) === 0) return false;
  for (let k = 0; k < 32; k++) if (t.shas[row * 32 + k] !== sha[k]) return false;
  return true;
}

/** Every file row was lstat-checked: all but `changed` are known good, should the walk be needed. */
function verifiedMarks(rows: number, changed: readonly number[]): Uint8Array {
  const v = new Uint8Array(rows).fill(1);
  for (const i of changed) v[i] = 0;
  return v;
}

/** The marks of the rows that stayed, at their new index, once the update removed rows (rowsNow[i]: -1 gone). */
function remapMarks(v: Uint8Array, rowsNow: Int32Array, size: number): Uint8Array {
  const next = new Uint8Array(size);
  for (let i = 0; i < rowsNow.length; i++) if (rowsNow[i]! >= 0) next[rowsNow[i]!] = v[i]!;
  return next;
}

/**
 * Most changed rows the fast path takes (a quarter of them, at least tuning.fastPathChangeMin, 2,000 by default); past that the walk
 * decides. The changed files are read during the lstat pass on both threads, so the fast path
 * stays ahead of the walk far beyond a typical step: 8,000 changed rows of 93k took ~530 ms
 * against ~880 ms walking, 20,000 ~650 ms against ~1,030 ms (bench tree).
 */
function changeLimit(rows: number, atLeast: number): number {
  return Math.max(atLeast, rows >> 2);
}

/** What happened before resultWithChanges: listings updated (the cache must be saved), entries added or removed (the stored digest is stale), rules files read. */
interface PriorChanges {
  listings: boolean;
  entries: boolean;
  /** With `entries`: each entry's index in the stored result, -1 for one added. */
  entryFrom?: Int32Array;
  /** The .gitignore rows read again for their rules. */
  read: RulesRead;
  /** Digests of the .gitignore texts the update classified with (a new .gitignore has no recorded digest yet). */
  rulesRead?: ReadonlyMap<string, Buffer>;
  /** Changed files already read again during the lstat pass, by path (see prereadRows). */
  preread?: ReadonlyMap<string, FileOutcome>;
}

function isGitignore(rel: string): boolean {
  return rel === '.gitignore' || rel.endsWith('/.gitignore');
}

function sameBytes(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a !== undefined && b !== undefined && a.equals(b);
}

/**
 * Re-reads the changed rows, then builds the result from the cache rows; null when the walk
 * must decide instead.
 */
function resultWithChanges(p: Prepared, options: ScanOptions, stored: StoredResult, changed: number[], racyFrom: RacyFrom, mode: BuildMode, prior: PriorChanges): Draft | Walk {
  const t = p.previous.files;
  const rows = p.previous.entryRows;
  if (rows === undefined) return walk('the cache holds no entry rows');
  if (rows.length > p.maxFiles) return walk('the stored result is longer than maxFiles: the walk cuts'); // new files may now cross the budget
  const prefix = prefixOf(p.rootReal);
  let reader: FileReader | undefined; // made for the first row not read during the pass
  let bytesHashed = prior.read.bytes;
  // Rows read again whose entry is not what it was: a racy row read again (a file written just
  // before the last scan) usually is, and then its entry, the digest and the rendering stand.
  const entryChanged = new Set<number>();
  for (const i of changed) {
    if (options.signal?.aborted) throw abortError();
    const rel = t.paths[i]!;
    const o = prior.preread?.get(rel) ?? processFile((reader ??= fileReader(p.withDigest)), prefix + rel);
    if ((o.status !== STATUS.OK_HASHED && o.status !== STATUS.OK_STAT_ONLY) || o.stat === undefined) return walk(`${rel} changed and is now a skip or not a regular file`);
    if (stored.cut === 'bytes' && o.stat[0] !== t.stats[i * STAT_FIELDS]) return walk(`${rel} changed size in a result cut by maxBytes: the cut may move`);
    // A .gitignore with new rules can change which paths are in: only the walk can tell. Same
    // bytes as recorded (typically a racy row read again) change nothing.
    if (isGitignore(rel) && !sameSha(t, i, o.sha) && !sameBytes(prior.rulesRead?.get(rel), o.sha)) return walk(`${rel} has new rules`);
    if (!sameEntry(t, i, o.stat, o.sha, p.withDigest)) entryChanged.add(i);
    t.setRow(i, o.stat, 0, o.sha ?? null, 0, isRacy(racyFrom, o.stat[1]!, o.stat[2]!, o.stat[4]!));
    bytesHashed += o.stat[0]!;
  }
  const mustSave = (changed.length > 0 || prior.read.files > 0 || prior.listings) && p.cacheFile !== null;
  // The table is final: in the background its bytes go to disk while the result is built.
  const early = mustSave && mode.background ? startCacheSave(p.cacheFile, p.previous, p.rootReal, p.optionsKey) : null;
  let draft: Draft | Walk | null = null;
  try {
    draft = draftResult(p, options, stored, prior, rows, entryChanged, mode);
  } finally {
    if (draft === null || isWalk(draft)) early?.abort();
  }
  if (isWalk(draft)) return draft;
  draft.hashed = changed.length + prior.read.files;
  draft.bytesHashed = bytesHashed;
  draft.save = mustSave ? (early ?? 'now') : null;
  return draft;
}

/** A result built whose cache save may still be under way: settle or settleSync finishes it and reports. */
interface Draft {
  result: ScanResult;
  /** The body's handle, when its digest was made (digestBody). */
  body: ScannedBody | undefined;
  stored: StoredResult;
  digest: string | undefined;
  /** 'now': to save at settling; a save under way (settle); null: nothing to save. */
  save: PendingCacheSave | 'now' | null;
  /** Every entry of a result whose array is the caller's is frozen: they may be kept (builtOf). */
  entriesFrozen?: boolean;
  hashed: number;
  bytesHashed: number;
}

/** The entries from the cache rows (the changed ones already set again), and their digest; a Walk when the walk must decide. */
function draftResult(p: Prepared, options: ScanOptions, stored: StoredResult, prior: PriorChanges, rows: Uint32Array, entryChanged: Set<number>, mode: BuildMode): Draft | Walk {
  const t = p.previous.files;
  const prefix = prefixOf(p.rootReal);
  const unchanged = entryChanged.size === 0 && prior.read.changed.length === 0 && !prior.entries && !prior.listings && stored.digest !== undefined;
  // Nothing changed since the scan that kept these rows with the entries it built: the same
  // rows give the same entries, once every link is found leading where it led.
  const built = unchanged && mode.digestBody ? p.cacheSource?.built : undefined;
  if (built !== undefined) {
    for (let k = 0; k < rows.length; k++) {
      const link = rows[k]! >= LINK_ROW ? linkNow(p, stored, prefix, rows[k]!) : null;
      if (link !== null && isWalk(link)) return link;
    }
    builtReused.count++;
    return finishDraft(p, options, stored, prior, mode, built.files as RepoSnapshotEntry[], built.bytes, entryChanged, null, new Int32Array(0));
  }
  const files: RepoSnapshotEntry[] = new Array<RepoSnapshotEntry>(rows.length);
  // Where each entry stood in the stored result (-1: added, or read again and changed, a
  // .gitignore read for its rules included): the stored result's rendering is then reused for
  // every run of entries that came through unchanged.
  const from = stored.digest !== undefined && (!prior.entries || prior.entryFrom !== undefined) ? (prior.entryFrom ?? null) : undefined;
  const reread = from !== undefined ? entryChanged : null;
  const rulesReread = new Set(prior.read.changed);
  const oldIndex = new Int32Array(from === undefined ? 0 : rows.length);
  // The entries the last scan of this process built from these rows, when no entry was added,
  // removed or moved since (entry k is still row rows[k]'s): only the rows read again with
  // another entry, and links, are built anew (~50k objects and a 3 MB hex string spared).
  const keptEntries = !prior.entries && !prior.listings && prior.read.changed.length === 0 ? p.cacheSource?.built?.files : undefined;
  const kept = keptEntries !== undefined && keptEntries.length === rows.length ? keptEntries : undefined;
  if (kept !== undefined) builtPatched.count++;
  // One hex string for the whole table; each digest is a slice of it (no per-entry conversion).
  // Patching kept entries, only the few built anew convert their own.
  const shaHex = kept === undefined ? Buffer.from(t.shas.buffer, t.shas.byteOffset, t.size * 32).toString('hex') : '';
  const shaBytes = Buffer.from(t.shas.buffer, t.shas.byteOffset, t.size * 32);
  let bytes = 0;
  // A watching caller scans again soon: every entry is frozen as built (links too), so the
  // next scan may take them (the result's array stays the caller's).
  const keepAll = !mode.digestBody && options.knownUnchanged !== undefined;
  for (let k = 0; k < rows.length; k++) {
    let i = rows[k]!;
    let kind: 'file' | 'symlink' = 'file';
    let path: string | undefined;
    if (from !== undefined) oldIndex[k] = from === null ? k : from[k]!;
    if (i >= LINK_ROW) {
      const link = linkNow(p, stored, prefix, i);
      if (isWalk(link)) return link;
      if (link.targetRow === null) {
        const entry: RepoSnapshotEntry = { path: link.path, bytes: 0, mode: '0644', kind: 'symlink' };
        files[k] = keepAll ? Object.freeze(entry) : entry;
        continue;
      }
      i = link.targetRow;
      path = link.path;
      kind = 'symlink';
    }
    if (reread !== null && (reread.has(i) || (rulesReread.size > 0 && rulesReread.has(t.paths[i]!)))) oldIndex[k] = -1;
    const o = i * STAT_FIELDS;
    const size = t.stats[o]!;
    const hasSha = (t.has[i]! & HAS_SHA) !== 0;
    if (hasSha !== p.withDigest) return walk(`${t.paths[i]!} has no digest recorded`);
    if (kept !== undefined && kind === 'file' && !entryChanged.has(i)) {
      // A row not read again, or read again with the same entry: the entry it gave last time.
      files[k] = kept[k]!;
      bytes += size;
      continue;
    }
    const mode = entryMode(t.stats[o + 5]!);
    const rel = path ?? t.paths[i]!;
    const sha256 = !hasSha ? '' : kept === undefined ? shaHex.slice(i * 64, i * 64 + 64) : shaBytes.toString('hex', i * 32, i * 32 + 32);
    const entry: RepoSnapshotEntry = hasSha ? { path: rel, bytes: size, sha256, mode, kind } : { path: rel, bytes: size, mode, kind };
    files[k] = keepAll ? Object.freeze(entry) : entry;
    bytes += size;
  }
  const draft = finishDraft(p, options, stored, prior, mode, files, bytes, entryChanged, reread, oldIndex);
  if (!isWalk(draft) && keepAll) draft.entriesFrozen = true;
  return draft;
}

/** Link row `i` of the stored result, resolved again (cheap: links are few): where it leads must be where it led (targetRow null: nowhere in the tree). */
function linkNow(p: Prepared, stored: StoredResult, prefix: string, i: number): { path: string; targetRow: number | null } | Walk {
  const link = stored.links[i - LINK_ROW];
  if (link === undefined) return walk('the stored result names a symlink it does not hold');
  const [linkPath, target, targetRow] = link;
  if ((resolveLink(p.rootReal, prefix + linkPath)?.targetRel ?? null) !== target) return walk(`the symlink ${linkPath} leads elsewhere now`);
  if (target === null) return { path: linkPath, targetRow: null };
  // Rows keep their place when re-read, so the stored row still holds the target.
  if (p.previous.files.paths[targetRow] !== target) return walk(`the target of the symlink ${linkPath} lost its row`);
  return { path: linkPath, targetRow };
}

/** Times a scan took the entries kept with its rows (cache/resident.ts) instead of building them: for tests. */
export const builtReused = { count: 0 };
/** Times a scan built only the entries of rows read again, taking the others kept with its rows: for tests. */
export const builtPatched = { count: 0 };

/** The draft from the entries: their bytes against the budget, the digest (stored, or made with the memo) and the body's handle. */
function finishDraft(p: Prepared, options: ScanOptions, stored: StoredResult, prior: PriorChanges, mode: BuildMode, files: RepoSnapshotEntry[], bytes: number, entryChanged: Set<number>, reread: Set<number> | null, oldIndex: Int32Array): Draft | Walk {
  if (bytes > p.maxBytes) return walk('the entries now pass maxBytes: the walk cuts');
  const truncated = stored.cut !== undefined;
  if (options.signal?.aborted) throw abortError();
  const warnings = [...p.warnings];
  let digest: string | undefined;
  let body: ScannedBody | undefined;
  if (mode.digestBody) {
    // Unchanged rows and links give the same entries, hence the digest stored with them.
    freezeFiles(files);
    const basis = reread !== null && stored.digest !== undefined ? { digest: stored.digest, oldIndex } : undefined;
    if (entryChanged.size === 0 && prior.read.changed.length === 0 && !prior.entries && stored.digest !== undefined) digest = stored.digest;
    else digest = p.cacheFile === null ? computeDigestOf(files, bytes, truncated, p.tuning.pieceEntries) : digestWithMemo(files, bytes, truncated, canonicalMemoPath(p.cacheFile), basis, mode.memoReads?.canonical, p.tuning.pieceEntries);
    body = scannedBody(files, {
      bytes,
      digest,
      truncated,
      renderMemo: p.cacheFile === null ? undefined : renderMemoPath(p.cacheFile),
      basis: digest !== stored.digest ? basis : undefined,
      renderRead: mode.memoReads?.render,
      pieceEntries: p.tuning.pieceEntries,
    });
  }
  return { result: { files, truncated, counts: { files: files.length, bytes }, skipped: stored.skipped, warnings }, body, stored, digest, save: null, hashed: 0, bytesHashed: 0 };
}

/** The stored result as the cache keeps it, with the digest of this result (a stale one must not survive the rewrite). */
function storedText(p: Prepared, d: Draft): string {
  d.stored.digest = d.digest;
  p.previous.result = `${p.resultKey}\n${JSON.stringify(d.stored)}`;
  return p.previous.result;
}

function settleSync(p: Prepared, options: ScanOptions, d: Draft): ScanResult {
  if (d.save === 'now') {
    storedText(p, d);
    // The entries were built from these rows as saved: they go with them (see below).
    const data = p.previous;
    const keep = keepSaved(p, data, builtOf(d));
    const save = (): ScanWarning | undefined => saveCache(p.cacheFile!, data, p.rootReal, p.optionsKey, keep);
    // A watching caller may make the save once it answered (KnownUnchanged.deferSave): the same bytes.
    if (options.knownUnchanged?.deferSave !== undefined && p.cacheSource !== undefined) {
      p.cacheSource.deferred = () => void save();
      return report(p, options, d, undefined);
    }
    return report(p, options, d, save());
  }
  // Nothing to save: no row, listing or result was changed (each change sets save), so the rows
  // are still the file's.
  if (d.save === null) keepUnchanged(p, builtOf(d));
  // A save under way needs settle (only tryStoredResultParallel starts one).
  if (d.save !== null) throw new Error('a background cache save must be settled asynchronously');
  return report(p, options, d, undefined);
}

/** The entries to keep with the rows they were built from, when frozen (the body's digest was made, or a watching caller scans): shared, they cannot change. */
function builtOf(d: Draft): BuiltEntries | undefined {
  if (d.entriesFrozen === true) return { files: [...d.result.files], bytes: d.result.counts.bytes };
  return Object.isFrozen(d.result.files) ? { files: d.result.files, bytes: d.result.counts.bytes } : undefined;
}

async function settle(p: Prepared, options: ScanOptions, d: Draft): Promise<ScanResult> {
  if (d.save === null || d.save === 'now') return settleSync(p, options, d);
  return report(p, options, d, await d.save.finish(storedText(p, d)));
}

function report(p: Prepared, options: ScanOptions, d: Draft, saveNotice: ScanWarning | undefined): ScanResult {
  const { result } = d;
  if (saveNotice !== undefined) result.warnings.push(saveNotice);
  for (const w of result.warnings) options.onWarning?.(w);
  for (const sk of d.stored.skipped) options.onSkip?.(sk);
  const n = result.files.length;
  options.onProgress?.({ phase: 'done', filesSeen: n, filesHashed: d.hashed, bytesHashed: d.bytesHashed, filesCached: !p.withDigest ? 0 : Math.max(0, n - d.hashed), filesDone: n });
  return result;
}

/**
 * The stored-result check: lstat every cached file and directory on this thread and, for a big
 * tree, on the verifier worker started by `prepare` (blocked on with Atomics.wait, so
 * synchronous callers get a second thread too). Whenever every row was checked, a walk outcome
 * carries what the pass confirmed (Confirmed), so the walk reuses every confirmed listing and
 * file row without another lstat.
 */
export function tryStoredResult(p: Prepared, options: ScanOptions, digestBody = false): FastPathOutcome {
  try {
    const pass = startPass(p, options);
    if (isWalk(pass)) return { kind: 'walk', reason: pass.walk, confirmed: undefined };
    const done = pass.verifier === null || (pass.mine !== null && pass.verifier.waitSync(pass.shared, VERIFY_WORKER_TIMEOUT_MS));
    const rows = done ? withTheirs(pass) : null;
    const draft = afterVerify(p, options, pass, rows, { digestBody, background: false, memoReads: undefined }, done);
    return isWalk(draft) ? { kind: 'walk', reason: draft.walk, confirmed: draft.confirmed } : outcome(settleSync(p, options, draft), draft.body, rows!.length);
  } finally {
    p.verifier?.stop();
  }
}

/**
 * Same as tryStoredResult, the worker awaited instead of blocked on. Once this thread's share
 * of the pass found a change, the memos the new result is made from are read on the thread
 * pool (the other core idles after the pass) while this thread reads the changed files again
 * and builds the result. Started from inside the pass, before those reads: starting them once
 * startPass returned cost ~4.5 ms a 1 % step (two 12-round A/Bs).
 */
export async function tryStoredResultParallel(p: Prepared, options: ScanOptions, digestBody: boolean): Promise<FastPathOutcome> {
  try {
    let reads = null as { canonical: Promise<Buffer | null>; render: Promise<Buffer | null> } | null;
    const pass = startPass(p, options, (cacheFile) => {
      reads = { canonical: prefetchFile(canonicalMemoPath(cacheFile)), render: prefetchFile(renderMemoPath(cacheFile)) };
    });
    if (isWalk(pass)) return { kind: 'walk', reason: pass.walk, confirmed: undefined };
    const done = pass.verifier === null || (pass.mine !== null && (await pass.verifier.wait(pass.shared, VERIFY_WORKER_TIMEOUT_MS)));
    let memoReads: BuildMode['memoReads'];
    if (reads !== null) {
      const { canonical, render } = reads;
      memoReads = { canonical: await canonical, render };
    }
    const rows = done ? withTheirs(pass) : null;
    const draft = afterVerify(p, options, pass, rows, { digestBody, background: true, memoReads }, done);
    return isWalk(draft) ? { kind: 'walk', reason: draft.walk, confirmed: draft.confirmed } : outcome(await settle(p, options, draft), draft.body, rows!.length);
  } finally {
    p.verifier?.stop();
  }
}

/** One lstat pass under way: this thread's share is done; `verifier` (if any) may still be at work. */
interface Pass {
  v: VerifyTable;
  limit: number;
  verifier: Verifier | null;
  /** Put before each relative path: '' when the working directory is the root. */
  prefix: string;
  shared: Int32Array;
  /** This thread's changed rows, or null past twice the limit. */
  mine: number[] | null;
  /** Where each thread read its changed file rows again (null: not read during the pass). */
  mineRead: PrereadArea | null;
  theirsRead: PrereadArea | null;
  /**
   * Files whose mtime or ctime is at or after this are racy. Taken before the pass, so every
   * read, during the pass or after it, comes later than the instant it is measured from.
   */
  racyFrom: RacyFrom;
}

function outcome(result: ScanResult, body: ScannedBody | undefined, rowsChanged: number): FastPathOutcome {
  return { kind: rowsChanged === 0 ? 'reused' : 'updated', result, body, rowsChanged };
}

/** Builds the verify table and runs this thread's share of the pass (all of it for a small table); `onChange` is told when that share found a change. */
function startPass(p: Prepared, options: ScanOptions, onChange?: (cacheFile: string) => void): Pass | Walk {
  const racyFrom = racyFromNow(p.racy);
  if (p.cacheFile === null) return walk('no cache (--no-cache, or no cache directory)');
  const v = verifyTable(p);
  if (v.size === 0) return walk('the cache is empty (a first scan, or it was discarded)');
  const prefix = lookupPrefix(p.rootReal);
  const fast = fastStatHere();
  const limit = changeLimit(v.size, p.tuning.fastPathChangeMin);
  // Each thread notes up to twice the limit: past the limit the walk decides, and up to twice it
  // takes every row checked and every file read here, however the threads shared the rows.
  const cap = 2 * limit;
  // Rows a watching caller vouches for need no lstat: the few left are not worth a second thread.
  const verifier = v.size >= p.tuning.parallelVerifyMin && p.jobs > 0 && p.trustDir === undefined ? (p.verifier ?? new Verifier()) : null;
  const rows: VerifyRows = { lstat: fast.lstat, prefix, paths: v.paths, fileStats: v.fileStats, dirStats: v.dirStats, nFiles: v.nFiles, flags: v.flags, size: v.size };
  if (verifier === null) return { v, limit, verifier, prefix, shared: new Int32Array(0), mine: changedRows(rows, 0, v.size, cap), mineRead: null, theirsRead: null, racyFrom };
  const theirsRead = prereadArea(cap + 1);
  const shared = startJob(p, verifier, v, prefix, cap, theirsRead);
  const mine = claimChangedRows(rows, shared, p.tuning.verifyChunkRows, cap);
  if (mine === null) Atomics.store(shared, SHARED.NEXT_ROW, v.size); // over the cap: the worker stops claiming too
  else if (mine.length > 0) onChange?.(p.cacheFile);
  // While the worker finishes its share, this thread reads again the files it found changed.
  let mineRead: PrereadArea | null = null;
  if (mine !== null && mine.length > 0) {
    mineRead = prereadArea(mine.length);
    const reader = fileReader(p.withDigest, undefined, fast);
    prereadRows({ reader, prefix: prefixOf(p.rootReal), paths: v.paths, flags: v.flags, area: mineRead, budgetBytes: Number.POSITIVE_INFINITY, budgetMs: Number.POSITIVE_INFINITY, stop: () => options.signal?.aborted === true }, mine);
  }
  return { v, limit, verifier, prefix, shared, mine, mineRead, theirsRead, racyFrom };
}

/** The outcomes of the rows read again during the pass, by path (`rows` as reported: this thread's, then the worker's). */
function prereadOutcomes(pass: Pass, rows: readonly number[]): Map<string, FileOutcome> {
  const out = new Map<string, FileOutcome>();
  const mineCount = pass.mineRead?.status.length ?? 0;
  for (let j = 0; j < rows.length; j++) {
    const area = j < mineCount ? pass.mineRead : pass.theirsRead;
    const k = j < mineCount ? j : j - mineCount;
    if (area === null || k >= area.status.length) continue;
    const status = area.status[k]!;
    if (status === NOT_READ) continue;
    const o: FileOutcome = { status };
    if (status === STATUS.OK_HASHED || status === STATUS.OK_STAT_ONLY) o.stat = Array.from(area.stats.subarray(k * STAT_FIELDS, k * STAT_FIELDS + STAT_FIELDS));
    if (status === STATUS.OK_HASHED) o.sha = Buffer.from(area.shas.subarray(k * 32, k * 32 + 32));
    out.set(pass.v.paths[rows[j]!]!, o);
  }
  return out;
}

/**
 * What the pass puts before each relative path: nothing when the process's working directory is
 * the root (the CLI moves there), as the kernel then resolves a few components per lookup
 * instead of the root's whole path (~15% of each lstat on a deep root); else the root's path.
 * The working directory is checked again after the pass (see cwdHeld).
 */
function lookupPrefix(rootReal: string): string {
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch {
    return prefixOf(rootReal); // no working directory (removed): whole paths, as any other
  }
  return cwd === rootReal ? '' : prefixOf(rootReal);
}

/** Relative lookups were right only if the working directory stayed the root all along. */
function cwdHeld(p: Prepared, pass: Pass): boolean {
  if (pass.prefix !== '') return true;
  try {
    return process.cwd() === p.rootReal;
  } catch {
    return false;
  }
}

function startJob(p: Prepared, verifier: Verifier, v: VerifyTable, prefix: string, cap: number, preread: PrereadArea): Int32Array {
  const shared = new Int32Array(new SharedArrayBuffer(4 * (SHARED.ROWS + cap + 1)));
  // The loaded cache's string table is exactly the row list (files, then directories), already joined.
  const paths = inShared<Uint8Array>(p.previous.pathsTable?.raw ?? Buffer.from(v.paths.join('\0'), 'utf8'));
  verifier.start({ prefix, paths, fileStats: v.fileStats, dirStats: v.dirStats, nFiles: v.nFiles, flags: v.flags, size: v.size, limit: cap, chunk: p.tuning.verifyChunkRows, shared, preread: { area: preread, prefix: prefixOf(p.rootReal), withDigest: p.withDigest, budgetBytes: p.tuning.prereadWorkerBytes, budgetMs: PREREAD_WORKER_BUDGET_MS } });
  return shared;
}

/** This thread's changed rows plus the worker's (null when either went over twice the limit). */
function withTheirs(pass: Pass): number[] | null {
  const { mine, shared, verifier } = pass;
  if (mine === null || verifier === null) return mine;
  const n = shared[SHARED.COUNT]!;
  if (n < 0) return null;
  for (let k = 0; k < n; k++) mine.push(shared[SHARED.ROWS + k]!);
  return mine;
}

/** The walk decides, with what the pass confirmed (when it checked every row). */
type WalkAfterPass = Walk & { confirmed: Confirmed | undefined };

function afterVerify(p: Prepared, options: ScanOptions, pass: Pass, rows: number[] | null, mode: BuildMode, done: boolean): Draft | WalkAfterPass {
  const walkWith = (w: Walk, confirmed: Confirmed | undefined): WalkAfterPass => ({ walk: w.walk, confirmed });
  if (rows === null) return walkWith(walk(!done && pass.mine !== null ? 'the verifying worker did not finish its share in time' : `more than ${2 * pass.limit} of ${pass.v.size} rows changed`), undefined);
  if (!cwdHeld(p, pass)) return walkWith(walk('the working directory moved during the lstat pass'), undefined);
  const { files, dirs } = splitRows(pass.v, rows);
  // Every row was checked (each thread stayed within twice the limit): the walk, should it decide
  // after all, takes the confirmed rows and the reads made during the pass as they are.
  const preread = prereadOutcomes(pass, rows);
  const confirmed: Confirmed = { verified: verifiedMarks(p.previous.files.size, files), changedDirs: dirs, preread, racyFrom: pass.racyFrom };
  // Past the limit, the walk (listing only the directories that moved, hashing on every core) is the better way.
  if (rows.length > pass.limit) return walkWith(walk(`${rows.length} of ${pass.v.size} rows changed, over the limit of ${pass.limit}`), confirmed);
  const json = storedResultFor(p);
  if (typeof json !== 'string') return walkWith(json, confirmed);
  const stored = JSON.parse(json) as StoredResult;
  const draft = updateStored(p, options, pass, stored, files, dirs, preread, mode);
  if (!isWalk(draft)) return draft;
  // The update removed rows from the table before the walk was found needed: the marks follow.
  return walkWith(draft, draft.rowsNow === undefined ? confirmed : { ...confirmed, verified: remapMarks(confirmed.verified, draft.rowsNow, p.previous.files.size) });
}

/**
 * The stored result brought up to date with what the pass found: the changed .gitignore files
 * read for their rules, the directories that moved listed again and compared, the subtrees under
 * new rules classified again (incremental.ts), then the changed files read again. What the update
 * cannot place, the walk decides; `rowsNow` says how an update that applied renumbered the rows.
 */
function updateStored(p: Prepared, options: ScanOptions, pass: Pass, stored: StoredResult, files: number[], dirs: Set<string>, preread: Map<string, FileOutcome>, mode: BuildMode): Draft | (Walk & { rowsNow?: Int32Array }) {
  const racyFrom = pass.racyFrom;
  const newRules = readChangedRules(p, files, racyFrom);
  if (isWalk(newRules)) return newRules;
  const { rules, read } = newRules;
  let rest = newRules.rest;
  if (stored.cut !== undefined) {
    // A cut result is a prefix of the tree: a change inside it may move the cut, so only the
    // walk can say. Cut at maxFiles, what lies wholly after its last entry does not matter
    // (a directory there, a file there that no link in the prefix leads to).
    const after = afterPrefix(p, stored);
    if ([...dirs].some((d) => !after(d, true)) || [...rules.keys()].some((d) => !after(d, true))) return walk('a directory or ignore rule inside a cut result moved: the cut may move');
    const targets = new Set(stored.links.map((l) => l[2]));
    const paths = p.previous.files.paths;
    rest = rest.filter((i) => targets.has(i) || !after(paths[i]!, false));
    return resultWithChanges(p, options, stored, rest, racyFrom, mode, { listings: false, entries: false, read, preread });
  }
  if (dirs.size === 0 && rules.size === 0) return resultWithChanges(p, options, stored, rest, racyFrom, mode, { listings: false, entries: false, read, preread });
  const update = applyDirChanges(p, stored, rest, dirs, rules, racyFrom);
  if (isWalk(update)) return walk(`${dirs.size} director${dirs.size === 1 ? 'y' : 'ies'} moved${rules.size > 0 ? ` and ${rules.size} ignore file(s) changed` : ''} beyond what the update places: ${update.walk}`);
  const draft = resultWithChanges(p, options, stored, update.changed, racyFrom, mode, { listings: true, entries: update.entriesChanged, entryFrom: update.entryFrom, read, rulesRead: update.rulesRead, preread });
  return isWalk(draft) && update.rowsNow !== null ? { walk: draft.walk, rowsNow: update.rowsNow } : draft;
}

/**
 * For a result cut at maxFiles: whether a path (a directory's whole subtree, with `dir`) comes
 * wholly after the result's last entry in walk order. Never, for a cut by bytes: a new or
 * smaller entry after the last one could then fit.
 */
function afterPrefix(p: Prepared, stored: StoredResult): (rel: string, dir: boolean) => boolean {
  const rows = p.previous.entryRows;
  if (stored.cut !== 'files' || rows === undefined || rows.length === 0) return () => false;
  const lastRow = rows[rows.length - 1]!;
  const last = lastRow >= LINK_ROW ? stored.links[lastRow - LINK_ROW]![0] : p.previous.files.paths[lastRow]!;
  return (rel, dir) => {
    if (!dir) return compareUtf8(rel, last) > 0;
    if (rel === '' || last.startsWith(`${rel}/`)) return false;
    return compareUtf8(`${rel}/`, last) > 0;
  };
}

/** The .gitignore rows read again for their rules: how many, their bytes, and the paths of those whose entry changed (sameEntry). */
interface RulesRead {
  files: number;
  bytes: number;
  changed: string[];
}

/**
 * Reads the changed .gitignore rows first (when ignore rules apply): one whose bytes are as
 * recorded (a racy row read again) changes nothing; one with new bytes is recorded from this
 * very read, and its text returned by directory so the rules used are the ones recorded. The
 * other changed rows are returned in `rest`. A Walk when one cannot be read (the walk reports it).
 */
function readChangedRules(p: Prepared, changed: readonly number[], racyFrom: RacyFrom): { rules: Map<string, string>; rest: number[]; read: RulesRead } | Walk {
  const t = p.previous.files;
  const rules = new Map<string, string>();
  const rest: number[] = [];
  const read: RulesRead = { files: 0, bytes: 0, changed: [] };
  const reader = fileReader(p.withDigest, Buffer.allocUnsafe(64 * 1024));
  for (const i of changed) {
    const rel = t.paths[i]!;
    if (!p.respectGitignore || !isGitignore(rel)) {
      rest.push(i);
      continue;
    }
    const o = processFile(reader, prefixOf(p.rootReal) + rel, null, true);
    if (o.status === STATUS.VANISHED) {
      rest.push(i); // deleted: its directory moved too, and the update sees the rules go
      continue;
    }
    if (o.stat === undefined || o.text === undefined || (o.status !== STATUS.OK_HASHED && o.status !== STATUS.OK_STAT_ONLY)) return walk(`the changed ${rel} cannot be read`);
    if (!sameSha(t, i, o.sha)) rules.set(rel === '.gitignore' ? '' : rel.slice(0, -'/.gitignore'.length), o.text);
    // The same rule as for every file read again (resultWithChanges): an unchanged entry stands.
    if (!sameEntry(t, i, o.stat, o.sha, p.withDigest)) read.changed.push(rel);
    t.setRow(i, o.stat, 0, o.sha ?? null, 0, isRacy(racyFrom, o.stat[1]!, o.stat[2]!, o.stat[4]!));
    read.files++;
    read.bytes += o.stat[0]!;
  }
  return { rules, rest, read };
}

/** How long a scan waits for its verifying worker before walking instead. */
const VERIFY_WORKER_TIMEOUT_MS = 5000;
