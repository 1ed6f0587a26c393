import { Worker } from 'node:worker_threads';
import { processFile, runBatch, type BatchRequest, type BatchResponse } from './read-file.js';

/**
 * Worker source: `processFile` is shipped as text and evaluated inside the worker, so the same
 * function hashes on the main thread (scanTreeSync) and in workers, whether cairn runs from
 * TypeScript sources or from the build. Each worker owns one reused 1 MiB read buffer.
 */
function workerSource(): string {
  return `'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');
const { parentPort } = require('node:worker_threads');
// Source transformers that keep function names (esbuild keepNames, used by tsx) wrap inner
// functions in __name(fn, "name"); give the shipped text the same no-op helper.
var __name = (fn) => fn;
const processFile = (${processFile.toString()});
const runBatch = (${runBatch.toString()});
const buf = Buffer.allocUnsafe(1 << 20);
parentPort.on('message', (req) => {
  const res = runBatch(fs, crypto, buf, req);
  parentPort.postMessage(res, [res.status.buffer, res.bytes.buffer, res.stats.buffer, res.shas.buffer]);
});
`;
}

interface Pending {
  resolve: (out: BatchResponse) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  worker: Worker;
  inFlight: number;
  pending: Map<number, Pending>;
}

/**
 * A small fixed pool fed during the walk. Batches go to the least-loaded worker; at most
 * `maxInFlight` batches wait per worker, so a worker stuck on a big file does not collect a
 * long queue while the other idles.
 */
export class HashPool {
  private readonly slots: Slot[] = [];
  private nextId = 0;
  private waiters: (() => void)[] = [];
  private failure: Error | undefined;
  private closed = false;

  constructor(size: number, readonly maxInFlight = 2) {
    const source = workerSource();
    for (let i = 0; i < size; i++) {
      const worker = new Worker(source, { eval: true });
      const slot: Slot = { worker, inFlight: 0, pending: new Map() };
      worker.on('message', (m: BatchResponse) => {
        const p = slot.pending.get(m.id);
        if (p === undefined) return;
        slot.pending.delete(m.id);
        slot.inFlight--;
        p.resolve(m);
        this.wake();
      });
      worker.on('error', (e) => this.fail(e));
      worker.on('exit', (code) => {
        if (!this.closed) this.fail(new Error(`hash worker exited with code ${code}`));
      });
      this.slots.push(slot);
    }
  }

  get saturated(): boolean {
    return this.slots.every((s) => s.inFlight >= this.maxInFlight);
  }

  get busy(): boolean {
    return this.slots.some((s) => s.inFlight > 0);
  }

  submit(req: Omit<BatchRequest, 'id'>): Promise<BatchResponse> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    let best = this.slots[0]!;
    for (const s of this.slots) if (s.inFlight < best.inFlight) best = s;
    const id = this.nextId++;
    best.inFlight++;
    return new Promise<BatchResponse>((resolve, reject) => {
      best.pending.set(id, { resolve, reject });
      const msg: BatchRequest = { ...req, id };
      best.worker.postMessage(msg, [msg.cachedStats.buffer as ArrayBuffer, msg.cachedShas.buffer as ArrayBuffer, msg.cachedHas.buffer as ArrayBuffer]);
    });
  }

  /** Resolves when some batch completes (or the pool failed). */
  whenProgress(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private fail(e: unknown): void {
    if (this.failure !== undefined || this.closed) return;
    this.failure = e instanceof Error ? e : new Error(String(e));
    for (const s of this.slots) {
      for (const p of s.pending.values()) p.reject(this.failure);
      s.pending.clear();
    }
    this.wake();
  }

  /** Stops every worker at once (also mid-file: abort must not wait for a big hash). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const err = new Error('hash pool closed');
    for (const s of this.slots) {
      for (const p of s.pending.values()) p.reject(err);
      s.pending.clear();
    }
    this.wake();
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
