import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { abortError, prefixOf, RACY_MARGIN_MS, READ_BUFFER_BYTES, type Prepared } from './prepare.js';
import { processFile, STATUS, STAT_FIELDS } from './read-file.js';
import { resolveLink } from './walk.js';
import { computeDigestOf, freezeFiles, rememberBodyDigest } from './digest.js';
import { HAS_SHA, saveCache, type FileTable } from './stat-cache.js';
import type { RepoSnapshotEntry, ScanOptions, ScanResult, SkippedEntry } from './types.js';

/** What the stored result keeps besides its entry rows. */
export interface StoredResult {
  skipped: SkippedEntry[];
  /** Per symlink entry (entry row LINK_ROW | i): its path and the file-table key and row of its target (null, -1: bytes 0, no digest). */
  links: [path: string, target: string | null, targetRow: number][];
  /** The snapshotDigest of these entries as an untruncated body, when the scan that stored them knew it. */
  digest?: string;
}

/** Entry-row bit marking a symlink entry; the low bits index `StoredResult.links`. */
export const LINK_ROW = 0x80000000;

export function sameRows(a: Uint32Array | undefined, b: Uint32Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The stored-result fast path (git's "only look at what changed" case). The cache holds the
 * last whole result only when its tables list exactly the directories and files that result
 * depended on. Then: if no directory changed (so no entry appeared, vanished or changed type)
 * and no .gitignore changed, the set of paths is the same, and only files whose stat moved (or
 * that were racy) need reading — one lstat per path, no listing, no ignore rules, no walk.
 * Anything unusual (a skip, a size over the budget, too many changes) falls back to the walk.
 */
function storedResultFor(p: Prepared): string | null {
  const blob = p.previous.result;
  if (blob === undefined || p.cacheFile === null) return null;
  // The key is a prefix line, so a result for other limits is rejected without parsing it.
  const nl = blob.indexOf('\n');
  return nl > 0 && blob.slice(0, nl) === p.resultKey ? blob.slice(nl + 1) : null;
}

/** Recorded directories whose stat moved (or that are gone). */
function changedDirs(p: Prepared): Set<string> {
  const prefix = prefixOf(p.rootReal);
  const out = new Set<string>();
  for (const [rel, d] of p.previous.dirs) {
    const st = fs.lstatSync(rel === '' ? p.rootReal : prefix + rel, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory() || st.mtimeMs !== d.stat[0] || st.ctimeMs !== d.stat[1] || st.ino !== d.stat[2] || st.dev !== d.stat[3]) out.add(rel);
  }
  return out;
}

function dirsUnchanged(p: Prepared): boolean {
  const prefix = prefixOf(p.rootReal);
  for (const [rel, d] of p.previous.dirs) {
    const st = fs.lstatSync(rel === '' ? p.rootReal : prefix + rel, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory() || st.mtimeMs !== d.stat[0] || st.ctimeMs !== d.stat[1] || st.ino !== d.stat[2] || st.dev !== d.stat[3]) return false;
  }
  return true;
}

/**
 * Rows [from, to) of the cached file table whose file changed or is flagged racy (flag 4), or
 * null as soon as more than `limit` did. Self-contained: also runs in a worker as text.
 */
export function changedFileRows(fs: typeof import('node:fs'), prefix: string, paths: readonly string[], stats: Float64Array, flags: Uint8Array, from: number, to: number, limit: number): number[] | null {
  const out: number[] = [];
  for (let i = from; i < to; i++) {
    const o = i * 6;
    const st = (flags[i]! & 4) !== 0 ? undefined : fs.lstatSync(prefix + paths[i]!, { throwIfNoEntry: false });
    if (st === undefined || st.size !== stats[o] || st.mtimeMs !== stats[o + 1] || st.ctimeMs !== stats[o + 2] || st.ino !== stats[o + 3] || st.dev !== stats[o + 4] || st.mode !== stats[o + 5]) {
      out.push(i);
      if (out.length > limit) return null;
    }
  }
  return out;
}

function sameSha(t: FileTable, row: number, sha: Uint8Array | undefined): boolean {
  if (sha === undefined || (t.has[row]! & HAS_SHA) === 0) return false;
  for (let k = 0; k < 32; k++) if (t.shas[row * 32 + k] !== sha[k]) return false;
  return true;
}

/** Every file row was lstat-checked: all but `changed` are known good, should the walk be needed. */
function noteVerified(p: Prepared, changed: readonly number[], dirs: Set<string> = new Set()): void {
  const v = new Uint8Array(p.previous.files.size).fill(1);
  for (const i of changed) v[i] = 0;
  p.verified = v;
  p.changedDirs = dirs;
}

/** Most changed files the fast path re-reads on the main thread before the full walk is better. */
function changeLimit(rows: number): number {
  return Math.max(2000, rows >> 4);
}

/** Re-reads the changed rows, then builds the result from the cache rows; null when the walk must decide instead. */
function resultWithChanges(p: Prepared, options: ScanOptions, json: string, changed: number[], digestBody: boolean): ScanResult | null {
  const t = p.previous.files;
  const rows = p.previous.entryRows;
  if (rows === undefined) return null;
  const stored = JSON.parse(json) as StoredResult;
  const prefix = prefixOf(p.rootReal);
  const racyFrom = Date.now() - (options.racyMarginMs ?? RACY_MARGIN_MS);
  const buf = changed.length > 0 ? Buffer.allocUnsafe(READ_BUFFER_BYTES) : Buffer.alloc(0);
  let bytesHashed = 0;
  for (const i of changed) {
    if (options.signal?.aborted) throw abortError();
    const rel = t.paths[i]!;
    const o = processFile(fs, crypto, prefix + rel, null, false, p.withDigest, buf, false);
    if ((o.status !== STATUS.OK_HASHED && o.status !== STATUS.OK_STAT_ONLY) || o.stat === undefined) return null;
    // A .gitignore with new rules can change which paths are in: only the walk can tell. Same
    // bytes as recorded (typically a racy row read again) change nothing.
    if ((rel === '.gitignore' || rel.endsWith('/.gitignore')) && !sameSha(t, i, o.sha)) return null;
    t.setRow(i, o.stat, 0, o.sha ?? null, 0, o.stat[1]! >= racyFrom || o.stat[2]! >= racyFrom);
    bytesHashed += o.stat[0]!;
  }
  const files: RepoSnapshotEntry[] = new Array<RepoSnapshotEntry>(rows.length);
  // One hex string for the whole table; each digest is a slice of it (no per-entry conversion).
  const shaHex = Buffer.from(t.shas.buffer, t.shas.byteOffset, t.size * 32).toString('hex');
  let bytes = 0;
  for (let k = 0; k < rows.length; k++) {
    let i = rows[k]!;
    let kind: 'file' | 'symlink' = 'file';
    let path: string | undefined;
    if (i >= LINK_ROW) {
      // A link is resolved again (cheap: links are few); it must lead where it led last time.
      const link = stored.links[i - LINK_ROW];
      if (link === undefined) return null;
      const [linkPath, target, targetRow] = link;
      if ((resolveLink(p.rootReal, prefix + linkPath)?.targetRel ?? null) !== target) return null;
      if (target === null) {
        files[k] = { path: linkPath, bytes: 0, mode: '0644', kind: 'symlink' };
        continue;
      }
      // Rows keep their place when re-read, so the stored row still holds the target.
      if (t.paths[targetRow] !== target) return null;
      i = targetRow;
      path = linkPath;
      kind = 'symlink';
    }
    const o = i * STAT_FIELDS;
    const size = t.stats[o]!;
    const mode = (t.stats[o + 5]! & 0o100) !== 0 ? '0755' : '0644';
    const hasSha = (t.has[i]! & HAS_SHA) !== 0;
    if (hasSha !== p.withDigest) return null;
    const rel = path ?? t.paths[i]!;
    files[k] = hasSha ? { path: rel, bytes: size, sha256: shaHex.slice(i * 64, i * 64 + 64), mode, kind } : { path: rel, bytes: size, mode, kind };
    bytes += size;
  }
  if (bytes > p.maxBytes) return null; // the budget now cuts the list: let the walk do it
  if (options.signal?.aborted) throw abortError();
  const warnings = [...p.warnings];
  let digest: string | undefined;
  if (digestBody) {
    // Unchanged rows and links give the same entries, hence the digest stored with them.
    freezeFiles(files);
    digest = changed.length === 0 && stored.digest !== undefined ? stored.digest : computeDigestOf(files, bytes);
    rememberBodyDigest(files, bytes, digest);
  }
  if (changed.length > 0 && p.cacheFile !== null) {
    stored.digest = digest; // a stale digest must not survive the rewrite
    p.previous.result = `${p.resultKey}\n${JSON.stringify(stored)}`;
    const w = saveCache(p.cacheFile, p.previous, p.rootReal, p.optionsKey);
    if (w !== undefined) warnings.push(w);
  }
  for (const w of warnings) options.onWarning?.(w);
  for (const sk of stored.skipped) options.onSkip?.(sk);
  const n = files.length;
  options.onProgress?.({ phase: 'done', filesSeen: n, filesHashed: changed.length, bytesHashed, filesCached: p.withDigest ? n - changed.length : 0, filesDone: n });
  return { files, truncated: false, counts: { files: n, bytes }, skipped: stored.skipped, warnings };
}

export function tryStoredResult(p: Prepared, options: ScanOptions, digestBody = false): ScanResult | null {
  const json = storedResultFor(p);
  const t = p.previous.files;
  // A big cached tree is checked on two threads even without a stored result or with changed
  // directories: the walk that follows then takes every confirmed row from the cache instead
  // of lstat-ing it again on this one thread (iteration snapshots after files were added).
  const parallel = t.size >= PARALLEL_VERIFY_MIN && p.jobs > 0 && p.cacheFile !== null;
  if (json === null && !parallel) return null;
  const prefix = prefixOf(p.rootReal);
  const limit = changeLimit(t.size);
  let changed: number[] | null;
  let dirs: Set<string> | undefined;
  if (parallel) {
    // Synchronous callers too get a second thread: the worker reports through shared memory
    // and this thread blocks on it (Atomics.wait) once its own share is done.
    const shared = new Int32Array(new SharedArrayBuffer(4 * (3 + limit + 1)));
    const worker = startVerifier(p, prefix, limit, shared, true);
    try {
      dirs = changedDirs(p);
      const mine = claimChangedRows(fs, changedFileRows, shared, VERIFY_CHUNK, prefix, t.paths, t.stats, t.has, t.size, limit);
      if (mine === null) return null;
      // Boot takes ~30-40 ms; a worker that never reports in time sends us to the walk.
      if (Atomics.wait(shared, 1, 0, VERIFY_WORKER_TIMEOUT_MS) === 'timed-out') return null;
      const n = shared[2]!;
      if (n < 0) return null;
      changed = mine;
      for (let k = 0; k < n; k++) changed.push(shared[3 + k]!);
      if (changed.length > limit) return null;
    } finally {
      void worker.terminate();
    }
  } else {
    if (!dirsUnchanged(p)) return null;
    changed = changedFileRows(fs, prefix, t.paths, t.stats, t.has, 0, t.size, limit);
  }
  if (changed === null) return null;
  noteVerified(p, changed, dirs);
  if (json === null || (dirs !== undefined && dirs.size > 0)) return null;
  return resultWithChanges(p, options, json, changed, digestBody);
}

/** Rows checked on this thread alone; above that a worker shares the lstats (they scale ~2x). */
const PARALLEL_VERIFY_MIN = 20_000;
/** How long a synchronous scan waits for its verifying worker before walking instead. */
const VERIFY_WORKER_TIMEOUT_MS = 5000;
/** Rows claimed at a time by each verifying thread. */
const VERIFY_CHUNK = 1024;

/**
 * Claims chunks of rows from a shared counter until none are left, returning the changed rows
 * (or null past `limit`). Both threads run it, so neither waits on the other whatever the
 * worker's start-up delay. Self-contained: also runs in a worker as text.
 */
export function claimChangedRows(fs: typeof import('node:fs'), changed: typeof changedFileRows, counter: Int32Array, chunk: number, prefix: string, paths: readonly string[], stats: Float64Array, flags: Uint8Array, size: number, limit: number): number[] | null {
  const out: number[] = [];
  for (;;) {
    const from = Atomics.add(counter, 0, chunk);
    if (from >= size) return out;
    const rows = changed(fs, prefix, paths, stats, flags, from, Math.min(size, from + chunk), limit - out.length);
    if (rows === null) return null;
    for (const r of rows) out.push(r);
  }
}

export async function tryStoredResultParallel(p: Prepared, options: ScanOptions, digestBody: boolean): Promise<ScanResult | null> {
  const t = p.previous.files;
  if (t.size < PARALLEL_VERIFY_MIN) return tryStoredResult(p, options, digestBody);
  const json = storedResultFor(p);
  if (json === null) return null;
  const prefix = prefixOf(p.rootReal);
  const limit = changeLimit(t.size);
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const worker = startVerifier(p, prefix, limit, counter, false);
  const theirs = new Promise<number[] | null>((resolve) => {
    worker.once('message', (rows: number[] | null) => resolve(rows));
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(null));
  });
  try {
    if (!dirsUnchanged(p)) return null;
    const mine = claimChangedRows(fs, changedFileRows, counter, VERIFY_CHUNK, prefix, t.paths, t.stats, t.has, t.size, limit);
    if (mine === null) return null;
    const other = await theirs;
    if (other === null || mine.length + other.length > limit) return null;
    const changed = [...mine, ...other];
    noteVerified(p, changed);
    return resultWithChanges(p, options, json, changed, digestBody);
  } finally {
    void worker.terminate();
  }
}

/**
 * Starts a worker that claims rows from `shared[0]` (see claimChangedRows). It posts its
 * changed rows as a message, or with `viaMemory` writes them to shared[3..] (count in shared[2],
 * -1 when over the limit) and sets shared[1] = 1 with a notify, for a thread that cannot await.
 */
function startVerifier(p: Prepared, prefix: string, limit: number, shared: Int32Array, viaMemory: boolean): Worker {
  const t = p.previous.files;
  const source = `'use strict';
const fs = require('node:fs');
const { parentPort, workerData: w } = require('node:worker_threads');
var __name = (fn) => fn;
const changedFileRows = (${changedFileRows.toString()});
const claimChangedRows = (${claimChangedRows.toString()});
const rows = claimChangedRows(fs, changedFileRows, w.shared, w.chunk, w.prefix, w.paths.split('\\0'), w.stats, w.flags, w.size, w.limit);
if (w.viaMemory) {
  if (rows === null) w.shared[2] = -1;
  else { for (let k = 0; k < rows.length; k++) w.shared[3 + k] = rows[k]; w.shared[2] = rows.length; }
  Atomics.store(w.shared, 1, 1);
  Atomics.notify(w.shared, 1);
} else parentPort.postMessage(rows);
`;
  const workerData = { prefix, paths: t.paths.join('\0'), stats: t.stats.subarray(0, t.size * STAT_FIELDS), flags: t.has.subarray(0, t.size), size: t.size, limit, shared, chunk: VERIFY_CHUNK, viaMemory };
  const worker = new Worker(source, { eval: true, workerData });
  if (viaMemory) worker.unref(); // nothing awaits it: it must not keep the process alive
  return worker;
}
