import { Worker } from 'node:worker_threads';
import { makeFastStat, type FastStat, type LstatInto } from './fast-stat.js';
import { processFile } from './read-file.js';
import { splitNulUtf8 } from './nul-strings.js';

/**
 * Rows [from, to) of a verify table (cached files, then cached directories) whose lstat no
 * longer matches, or that are flagged racy (4: always re-read), or null as soon as more than
 * `limit` did. A file (row i < nFiles; `fileStats` row i: size, mtime, ctime, inode, device,
 * mode) matches on all six; a directory (flag 8; `dirStats` row i - nFiles: mtime, ctime, inode,
 * device) when it is still a directory with the same four, so no entry was added, removed or
 * renamed in it. A path that cannot be looked at (gone, a parent now a file, no permission) is
 * changed. Self-contained: also runs in the verifying worker as text.
 */
export function changedRows(lstatInto: LstatInto, prefix: string, paths: readonly string[], fileStats: Float64Array, dirStats: Float64Array, nFiles: number, flags: Uint8Array, from: number, to: number, limit: number): number[] | null {
  const out: number[] = [];
  const st = new Float64Array(6);
  for (let i = from; i < to; i++) {
    const f = flags[i]!;
    let same = false;
    // '' is the root itself when paths are looked up from it (prefix '').
    if ((f & 4) === 0 && lstatInto(prefix + paths[i]! || '.', st)) {
      if ((f & 8) !== 0) {
        const o = (i - nFiles) * 4;
        same = (st[5]! & 0o170000) === 0o040000 && st[1] === dirStats[o] && st[2] === dirStats[o + 1] && st[3] === dirStats[o + 2] && st[4] === dirStats[o + 3];
      } else {
        const o = i * 6;
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

/**
 * Claims chunks of rows from a shared counter (`counter[0]`) until none are left, returning the
 * changed rows (or null past `limit`). The main thread and the worker both run it, so neither
 * waits on the other whatever the worker's start-up delay. Self-contained: also runs as text.
 */
export function claimChangedRows(lstatInto: LstatInto, changed: typeof changedRows, counter: Int32Array, chunk: number, prefix: string, paths: readonly string[], fileStats: Float64Array, dirStats: Float64Array, nFiles: number, flags: Uint8Array, size: number, limit: number): number[] | null {
  const out: number[] = [];
  for (;;) {
    const from = Atomics.add(counter, 0, chunk);
    if (from >= size) return out;
    const rows = changed(lstatInto, prefix, paths, fileStats, dirStats, nFiles, flags, from, Math.min(size, from + chunk), limit - out.length);
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
    stats: new Float64Array(new SharedArrayBuffer(slots * 6 * 8)),
    shas: new Uint8Array(new SharedArrayBuffer(slots * 32)),
    status: new Uint8Array(new SharedArrayBuffer(slots)).fill(255),
  };
}

/**
 * What the verifying worker reads again at most: bytes (~45 ms of hashing) and time (a cold
 * disk, many files), well inside the main thread's wait for its report.
 */
export const PREREAD_WORKER_BUDGET_BYTES = 64 * 1024 * 1024;
export const PREREAD_WORKER_BUDGET_MS = 1000;

/**
 * Reads again the changed file rows `rows` (processFile: open, fstat, read, hash, fstat) into
 * `area`, slot k for rows[k], while their sizes fit `budgetBytes` and `budgetMs` lasts. The two
 * threads of the check each read the rows they found, so a step that rewrote hundreds of files
 * is hashed on both cores instead of after the check on one. The worker's budgets keep its
 * report (which the main thread awaits with a timeout) from waiting on huge files or a slow
 * disk. `prefix` is the root's absolute path: the worker's working directory is the process's.
 * Self-contained: also runs in the verifying worker as text (processFile is given).
 */
export function prereadRows(fs: typeof import('node:fs'), crypto: typeof import('node:crypto'), fast: FastStat, read: typeof processFile, prefix: string, paths: readonly string[], flags: Uint8Array, rows: readonly number[], withDigest: boolean, area: PrereadArea, budgetBytes: number, budgetMs: number, stop?: () => boolean): void {
  const buf = Buffer.allocUnsafe(1 << 20);
  const scratch = { before: new Float64Array(6), after: new Float64Array(6) };
  let budget = budgetBytes;
  const until = Date.now() + budgetMs;
  for (let k = 0; k < rows.length && k < area.status.length; k++) {
    if (stop?.() === true || Date.now() > until) return;
    const r = rows[k]!;
    const rel = paths[r]!;
    if ((flags[r]! & 8) !== 0 || rel === '.gitignore' || rel.endsWith('/.gitignore')) continue;
    // Over the budget, a file is left to the main thread's reads after the pass (NOT_READ). Its
    // size is looked up only when there is a budget: the read itself fstats the file.
    if (budget !== Number.POSITIVE_INFINITY) {
      if (!fast.lstat(prefix + rel, scratch.before) || scratch.before[0]! > budget) continue;
      budget -= scratch.before[0]!;
    }
    const o = read(fs, crypto, prefix + rel, null, false, withDigest, buf, false, fast, scratch);
    if (o.stat !== undefined) area.stats.set(o.stat, k * 6);
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
  /** [0] next row to claim, [1] set to 1 when done, [2] changed-row count (-1: over the limit), [3..] the rows. */
  shared: Int32Array;
  /** With a preread area: the changed file rows found are read again there (prereadRows), with this root prefix. */
  preread?: { area: PrereadArea; prefix: string; withDigest: boolean; budgetBytes: number; budgetMs: number };
}

const SOURCE = `'use strict';
const fs = require('node:fs');
const { parentPort } = require('node:worker_threads');
var __name = (fn) => fn;
const makeFastStat = (${makeFastStat.toString()});
const changedRows = (${changedRows.toString()});
const claimChangedRows = (${claimChangedRows.toString()});
const processFile = (${processFile.toString()});
const prereadRows = (${prereadRows.toString()});
const splitNulUtf8 = (${splitNulUtf8.toString()});
parentPort.once('message', (w) => {
  const fast = makeFastStat(fs, '/');
  const paths = splitNulUtf8(Buffer.from(w.paths.buffer, w.paths.byteOffset, w.paths.byteLength), require('node:buffer').isAscii);
  const rows = claimChangedRows(fast.lstat, changedRows, w.shared, w.chunk, w.prefix, paths, w.fileStats, w.dirStats, w.nFiles, w.flags, w.size, w.limit);
  if (rows === null) w.shared[2] = -1;
  else {
    if (w.preread) prereadRows(fs, require('node:crypto'), fast, processFile, w.preread.prefix, paths, w.flags, rows, w.preread.withDigest, w.preread.area, w.preread.budgetBytes, w.preread.budgetMs);
    for (let k = 0; k < rows.length; k++) w.shared[3 + k] = rows[k];
    w.shared[2] = rows.length;
  }
  Atomics.store(w.shared, 1, 1);
  Atomics.notify(w.shared, 1);
});
`;

/**
 * A second thread for the stat-cache check, spawned before the cache is even read: a worker
 * costs ~30-40 ms to boot, which then overlaps loading the cache instead of delaying the lstat
 * pass. It reports through shared memory, so a synchronous scan can block on it (Atomics.wait)
 * and an async one can await it (Atomics.waitAsync). Unreferenced while idle: a scan that
 * never uses it does not keep the process alive, and `stop()` is idempotent.
 */
export class Verifier {
  private readonly worker = new Worker(SOURCE, { eval: true });
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
    return !this.failed && Atomics.wait(shared, 1, 0, timeoutMs) !== 'timed-out' && shared[1] === 1;
  }

  /** Resolves true once the worker reported, false on timeout or failure. */
  async wait(shared: Int32Array, timeoutMs: number): Promise<boolean> {
    if (this.failed) return false;
    // Referenced while awaited: a pending waitAsync alone does not keep the event loop running.
    this.worker.ref();
    try {
      const w = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): { async: boolean; value: Promise<string> | string } }).waitAsync(shared, 1, 0, timeoutMs);
      const exited = new Promise<string>((resolve) => this.worker.once('exit', () => resolve('exited')));
      const outcome = w.async ? await Promise.race([w.value as Promise<string>, exited]) : (w.value as string);
      return outcome !== 'timed-out' && shared[1] === 1;
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
