import { Worker } from 'node:worker_threads';
import { processFile, type CachedFile, type FileOutcome } from './read-file.js';

export interface HashJob {
  path: string;
  cached: CachedFile | null;
}

/**
 * Worker source: `processFile` is shipped as text and evaluated inside the worker, so the same
 * function hashes on the main thread (scanTreeSync) and in workers, whether cairn runs from
 * TypeScript sources or from the build. Each worker owns one reused 1 MiB read buffer.
 */
function workerSource(): string {
  return `'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');
const { parentPort, workerData } = require('node:worker_threads');
// Source transformers that keep function names (esbuild keepNames, used by tsx) wrap inner
// functions in __name(fn, "name"); give the shipped text the same no-op helper.
var __name = (fn) => fn;
const processFile = (${processFile.toString()});
const buf = Buffer.allocUnsafe(1 << 20);
parentPort.on('message', (m) => {
  const out = new Array(m.jobs.length);
  for (let i = 0; i < m.jobs.length; i++) out[i] = processFile(fs, crypto, m.jobs[i].path, m.jobs[i].cached, workerData.withDigest, buf, false);
  parentPort.postMessage({ id: m.id, out });
});
`;
}

interface Pending {
  resolve: (out: FileOutcome[]) => void;
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

  constructor(size: number, withDigest: boolean, readonly maxInFlight = 2) {
    const source = workerSource();
    for (let i = 0; i < size; i++) {
      const worker = new Worker(source, { eval: true, workerData: { withDigest } });
      const slot: Slot = { worker, inFlight: 0, pending: new Map() };
      worker.on('message', (m: { id: number; out: FileOutcome[] }) => {
        const p = slot.pending.get(m.id);
        if (p === undefined) return;
        slot.pending.delete(m.id);
        slot.inFlight--;
        p.resolve(m.out);
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

  submit(jobs: HashJob[]): Promise<FileOutcome[]> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    let best = this.slots[0]!;
    for (const s of this.slots) if (s.inFlight < best.inFlight) best = s;
    const id = this.nextId++;
    best.inFlight++;
    return new Promise<FileOutcome[]>((resolve, reject) => {
      best.pending.set(id, { resolve, reject });
      best.worker.postMessage({ id, jobs });
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
