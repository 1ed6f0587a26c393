import { Worker } from 'node:worker_threads';
import { makeFastStat } from './fast-stat.js';
import { BATCH_CAPACITY, BATCH_SLOT_BYTES, batchViews, processFile, runBatch, type BatchViews } from './read-file.js';

/**
 * Worker source: `processFile`, `runBatch` and `batchViews` are shipped as text and evaluated
 * inside the worker, so the same code hashes on the main thread (scanTreeSync) and in workers,
 * whether cairn runs from TypeScript sources or from the build. Each worker owns one reused
 * 1 MiB read buffer and sees every batch slot (shared memory).
 */
function workerSource(): string {
  return `'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');
const { parentPort, workerData } = require('node:worker_threads');
// Source transformers that keep function names (esbuild keepNames, used by tsx) wrap inner
// functions in __name(fn, "name"); give the shipped text the same no-op helper.
var __name = (fn) => fn;
const makeFastStat = (${makeFastStat.toString()});
const fast = makeFastStat(fs, '/');
const processFile = (${processFile.toString()});
const runBatch = (${runBatch.toString()});
const batchViews = (${batchViews.toString()});
const views = workerData.slots.map((b) => batchViews(b, ${BATCH_CAPACITY}));
const buf = Buffer.allocUnsafe(1 << 20);
parentPort.on('message', (m) => {
  const details = runBatch(fs, crypto, buf, m.paths.split('\\0'), views[m.slot], m.withDigest, fast);
  parentPort.postMessage({ id: m.id, details });
});
`;
}

interface Pending {
  resolve: (details: (string | null)[] | null) => void;
  reject: (e: unknown) => void;
}

interface WorkerSlot {
  worker: Worker;
  inFlight: number;
  pending: Map<number, Pending>;
}

/**
 * A small fixed pool fed during the walk. Batches go to the least-loaded worker; there are
 * `maxInFlight` batch slots per worker, so a worker stuck on a big file does not collect a
 * long queue while the other idles.
 */
export class HashPool {
  private readonly workers: WorkerSlot[] = [];
  private readonly buffers: SharedArrayBuffer[] = [];
  private readonly viewsOf: BatchViews[] = [];
  private readonly free: number[] = [];
  private nextId = 0;
  private waiters: (() => void)[] = [];
  private failure: Error | undefined;
  private closed = false;

  constructor(size: number, maxInFlight = 3) {
    for (let i = 0; i < size * maxInFlight; i++) {
      const b = new SharedArrayBuffer(BATCH_SLOT_BYTES);
      this.buffers.push(b);
      this.viewsOf.push(batchViews(b, BATCH_CAPACITY));
      this.free.push(i);
    }
    const source = workerSource();
    for (let i = 0; i < size; i++) {
      const worker = new Worker(source, { eval: true, workerData: { slots: this.buffers } });
      const ws: WorkerSlot = { worker, inFlight: 0, pending: new Map() };
      worker.on('message', (m: { id: number; details: (string | null)[] | null }) => {
        const p = ws.pending.get(m.id);
        if (p === undefined) return;
        ws.pending.delete(m.id);
        ws.inFlight--;
        p.resolve(m.details);
      });
      worker.on('error', (e) => this.fail(e));
      worker.on('exit', (code) => {
        if (!this.closed) this.fail(new Error(`hash worker exited with code ${code}`));
      });
      this.workers.push(ws);
    }
  }

  /** No batch slot is free: wait (`whenFree`) before filling the next one. */
  get saturated(): boolean {
    return this.free.length === 0;
  }

  /** Takes a free slot; its views are where the caller writes the batch. */
  acquire(): { slot: number; views: BatchViews } {
    const slot = this.free.pop();
    if (slot === undefined) throw new Error('internal: no free batch slot');
    return { slot, views: this.viewsOf[slot]! };
  }

  /** Returns a slot once its results were read. */
  release(slot: number): void {
    this.free.push(slot);
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Hashes the batch in `slot`; resolves to the per-file error details (null if none). */
  submit(slot: number, paths: readonly string[], withDigest: boolean): Promise<(string | null)[] | null> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    let best = this.workers[0]!;
    for (const w of this.workers) if (w.inFlight < best.inFlight) best = w;
    const id = this.nextId++;
    best.inFlight++;
    return new Promise((resolve, reject) => {
      best.pending.set(id, { resolve, reject });
      best.worker.postMessage({ id, slot, paths: paths.join('\0'), withDigest });
    });
  }

  /** Resolves when a slot is released (or the pool failed). */
  whenFree(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private fail(e: unknown): void {
    if (this.failure !== undefined || this.closed) return;
    this.failure = e instanceof Error ? e : new Error(String(e));
    for (const w of this.workers) {
      for (const p of w.pending.values()) p.reject(this.failure);
      w.pending.clear();
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const f of waiters) f();
  }

  /** Stops every worker at once (also mid-file: abort must not wait for a big hash). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const err = new Error('hash pool closed');
    for (const w of this.workers) {
      for (const p of w.pending.values()) p.reject(err);
      w.pending.clear();
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const f of waiters) f();
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}
