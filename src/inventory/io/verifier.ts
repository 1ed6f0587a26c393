import type { Worker } from 'node:worker_threads';
import type { LstatInto } from './fast-stat.js';
import { processFile, STAT_FIELDS, type FileReader } from './read-file.js';
import { startWorker } from './worker-file.js';

/** Verify-table row flags: the file table's digest and racy flags (a racy row is read again), and a directory row. */
const ROW_HAS_SHA = 2;
export const ROW_RACY = 4;
export const ROW_DIR = 8;
/**
 * A row a watching caller vouches for (ScanOptions.knownUnchanged): taken as unchanged without an
 * lstat. A racy one too when it holds a digest: the read that made it came after the mark the
 * caller counts events from, so a write since, even one that leaves the stat as it was (the
 * racy case), is an event that takes the vouching away. (A racy row with no digest was never read.)
 */
export const ROW_KNOWN = 16;

/**
 * The verify table as one thread lstats it: every cached file (row i < nFiles; `fileStats` row
 * i: size, mtime, ctime, inode, device, mode), then every cached directory (flag ROW_DIR;
 * `dirStats` row i - nFiles: mtime, ctime, inode, device), their paths relative to the root and
 * what to put before them ('' when the working directory is the root).
 */
export interface VerifyRows {
  lstat: LstatInto;
  prefix: string;
  paths: readonly string[];
  fileStats: Float64Array;
  dirStats: Float64Array;
  nFiles: number;
  flags: Uint8Array;
  size: number;
}

/**
 * Rows [from, to) of the table whose lstat no longer matches, or that are flagged racy, or null
 * as soon as more than `limit` did. A file matches on all six fields; a directory when it is
 * still a directory with the same four, so no entry was added, removed or renamed in it. A path
 * that cannot be looked at (gone, a parent now a file, no permission) is changed.
 */
export function changedRows(t: VerifyRows, from: number, to: number, limit: number): number[] | null {
  const { lstat, prefix, paths, fileStats, dirStats, nFiles, flags } = t;
  const out: number[] = [];
  const st = new Float64Array(STAT_FIELDS);
  for (let i = from; i < to; i++) {
    const f = flags[i]!;
    if ((f & ROW_KNOWN) !== 0 && (f & (ROW_RACY | ROW_HAS_SHA)) !== ROW_RACY) continue;
    let same = false;
    // '' is the root itself when paths are looked up from it (prefix '').
    if ((f & ROW_RACY) === 0 && lstat(prefix + paths[i]! || '.', st)) {
      if ((f & ROW_DIR) !== 0) {
        const o = (i - nFiles) * 4;
        same = (st[5]! & S_IFMT) === S_IFDIR && st[1] === dirStats[o] && st[2] === dirStats[o + 1] && st[3] === dirStats[o + 2] && st[4] === dirStats[o + 3];
      } else {
        const o = i * STAT_FIELDS;
        same = st[0] === fileStats[o] && st[1] === fileStats[o + 1] && st[2] === fileStats[o + 2] && st[3] === fileStats[o + 3] && st[4] === fileStats[o + 4] && st[5] === fileStats[o + 5];
      }
    }
    if (!same) {
      out.push(i);
      if (out.length > limit) return null;
    }
  }
  return out;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;

/**
 * Where the verifying threads meet, an Int32Array in shared memory: the next row to claim, the
 * worker's "done" flag (waited on), its changed-row count (-1: over its limit), then its rows.
 */
export const SHARED = { NEXT_ROW: 0, DONE: 1, COUNT: 2, ROWS: 3 } as const;

/**
 * Claims chunks of `chunk` rows from the shared counter (`shared[SHARED.NEXT_ROW]`) until none
 * are left, returning the changed rows (or null past `limit`). The main thread and the worker
 * both run it, so neither waits on the other whatever the worker's start-up delay.
 */
export function claimChangedRows(t: VerifyRows, shared: Int32Array, chunk: number, limit: number): number[] | null {
  const out: number[] = [];
  for (;;) {
    const from = Atomics.add(shared, SHARED.NEXT_ROW, chunk);
    if (from >= t.size) return out;
    const rows = changedRows(t, from, Math.min(t.size, from + chunk), limit - out.length);
    if (rows === null) return null;
    for (const r of rows) out.push(r);
  }
}

/**
 * Where the changed file rows a thread found are read again, before any other step needs
 * them: slot k holds the outcome for the k-th row of that thread's report (`status` NOT_READ
 * when the row was not read here: a directory, a .gitignore, whose rules are read with their
 * text, a file over the budget, or one past the slots).
 */
export interface PrereadArea {
  /** STAT_FIELDS (6) per slot. */
  stats: Float64Array;
  /** 32 bytes per slot (with digests on, for status OK_HASHED). */
  shas: Uint8Array;
  /** A read-file STATUS per slot, or NOT_READ. */
  status: Uint8Array;
}

/** PrereadArea status of a slot with no outcome. */
export const NOT_READ = 255;

/** A PrereadArea of `slots` slots in shared memory (the worker fills its own, the main thread reads it). */
export function prereadArea(slots: number): PrereadArea {
  return {
    stats: new Float64Array(new SharedArrayBuffer(slots * STAT_FIELDS * 8)),
    shas: new Uint8Array(new SharedArrayBuffer(slots * 32)),
    status: new Uint8Array(new SharedArrayBuffer(slots)).fill(NOT_READ),
  };
}

/**
 * What the verifying worker reads again at most: bytes (~45 ms of hashing) and time (a cold
 * disk, many files), well inside the main thread's wait for its report.
 */
export const PREREAD_WORKER_BUDGET_BYTES = 64 * 1024 * 1024;
export const PREREAD_WORKER_BUDGET_MS = 1000;

/** What prereadRows reads with and into (see there). */
export interface Preread {
  reader: FileReader;
  /** The root's absolute path, with a trailing slash: the worker's working directory is the process's. */
  prefix: string;
  paths: readonly string[];
  flags: Uint8Array;
  area: PrereadArea;
  budgetBytes: number;
  budgetMs: number;
  /** Polled before each file: true stops the reads (an aborted scan). */
  stop?: () => boolean;
}

/**
 * Reads again the changed file rows `rows` (processFile: open, fstat, read, hash, fstat) into
 * `job.area`, slot k for rows[k], while their sizes fit the byte budget and the time budget
 * lasts. The two threads of the check each read the rows they found, so a step that rewrote
 * hundreds of files is hashed on both cores instead of after the check on one. The worker's
 * budgets keep its report (which the main thread awaits with a timeout) from waiting on huge
 * files or a slow disk.
 */
export function prereadRows(job: Preread, rows: readonly number[]): void {
  const { reader, prefix, paths, flags, area, stop } = job;
  const size = new Float64Array(STAT_FIELDS);
  let budget = job.budgetBytes;
  const until = Date.now() + job.budgetMs;
  for (let k = 0; k < rows.length && k < area.status.length; k++) {
    if (stop?.() === true || Date.now() > until) return;
    const r = rows[k]!;
    const rel = paths[r]!;
    if ((flags[r]! & ROW_DIR) !== 0 || rel === '.gitignore' || rel.endsWith('/.gitignore')) continue;
    // Over the budget, a file is left to the main thread's reads after the pass (NOT_READ). Its
    // size is looked up only when there is a budget: the read itself fstats the file.
    if (budget !== Number.POSITIVE_INFINITY) {
      if (!reader.fast.lstat(prefix + rel, size) || size[0]! > budget) continue;
      budget -= size[0]!;
    }
    const o = processFile(reader, prefix + rel);
    if (o.stat !== undefined) area.stats.set(o.stat, k * STAT_FIELDS);
    if (o.sha !== undefined) area.shas.set(o.sha, k * 32);
    area.status[k] = o.status;
  }
}

/**
 * What the worker needs: the table and the shared report area. All of it in shared memory (the
 * paths as NUL-joined UTF-8; a loaded cache's rows and paths are views of its file's bytes), so
 * posting the job copies nothing: cloning 3-4 MB of paths and 4 MB of stats cost the main thread
 * ~9 ms, copying them into shared memory ~5 ms; decoding the paths is the worker's own time.
 */
export interface VerifyJob {
  prefix: string;
  /** NUL-joined UTF-8 (a SharedArrayBuffer's bytes). */
  paths: Uint8Array;
  fileStats: Float64Array;
  dirStats: Float64Array;
  nFiles: number;
  flags: Uint8Array;
  size: number;
  limit: number;
  chunk: number;
  /** See SHARED. */
  shared: Int32Array;
  /** With a preread area: the changed file rows found are read again there (prereadRows), with this root prefix. */
  preread?: { area: PrereadArea; prefix: string; withDigest: boolean; budgetBytes: number; budgetMs: number };
}

/**
 * A second thread for the stat-cache check, spawned before the cache is even read: a worker
 * costs ~30-40 ms to boot, which then overlaps loading the cache instead of delaying the lstat
 * pass. It reports through shared memory, so a synchronous scan can block on it (Atomics.wait)
 * and an async one can await it (Atomics.waitAsync). Unreferenced while idle: a scan that
 * never uses it does not keep the process alive, and `stop()` is idempotent.
 */
export class Verifier {
  private readonly worker: Worker = startWorker('verify-worker');
  private failed = false;
  private stopped = false;

  constructor() {
    this.worker.unref();
    // A worker that fails never reports: the waiting side times out or sees `failed` and walks.
    this.worker.on('error', () => {
      this.failed = true;
    });
  }

  start(job: VerifyJob): void {
    this.worker.postMessage(job);
  }

  /** Blocks until the worker reported (true) or `timeoutMs` passed or it failed (false). */
  waitSync(shared: Int32Array, timeoutMs: number): boolean {
    return !this.failed && Atomics.wait(shared, SHARED.DONE, 0, timeoutMs) !== 'timed-out' && shared[SHARED.DONE] === 1;
  }

  /** Resolves true once the worker reported, false on timeout or failure. */
  async wait(shared: Int32Array, timeoutMs: number): Promise<boolean> {
    if (this.failed) return false;
    // Referenced while awaited: a pending waitAsync alone does not keep the event loop running.
    this.worker.ref();
    try {
      const w = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): { async: boolean; value: Promise<string> | string } }).waitAsync(shared, SHARED.DONE, 0, timeoutMs);
      const exited = new Promise<string>((resolve) => this.worker.once('exit', () => resolve('exited')));
      const outcome = w.async ? await Promise.race([w.value as Promise<string>, exited]) : (w.value as string);
      return outcome !== 'timed-out' && shared[SHARED.DONE] === 1;
    } finally {
      this.worker.unref();
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    void this.worker.terminate();
  }
}
