import type { Worker } from 'node:worker_threads';
import { BATCH_CAPACITY, BATCH_SLOT_BYTES, batchViews, type BatchViews } from './read-file.js';
import { startWorker } from './worker-file.js';

/** What each hash worker (hash-worker.ts) starts with: every batch slot, in shared memory. */
export interface HashWorkerData {
  slots: SharedArrayBuffer[];
}

/** A batch to hash: its slot (where the requests and results are) and its paths, NUL-joined. */
export interface HashRequest {
  id: number;
  slot: number;
  paths: string;
  withDigest: boolean;
}

/** A batch hashed: the per-file error details (null when every file succeeded). */
export interface HashReply {
  id: number;
  details: (string | null)[] | null;
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
 * A small fixed pool fed during the walk. Each worker runs hash-worker.ts (processFile through
 * runBatch, the code scanTreeSync runs on the main thread), owns one reused 1 MiB read buffer
 * and sees every batch slot (shared memory). Batches go to the least-loaded worker; there are
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
    const workerData: HashWorkerData = { slots: this.buffers };
    for (let i = 0; i < size; i++) {
      const worker = startWorker('hash-worker', { workerData });
      const ws: WorkerSlot = { worker, inFlight: 0, pending: new Map() };
      worker.on('message', (m: HashReply) => {
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
      const request: HashRequest = { id, slot, paths: paths.join('\0'), withDigest };
      best.worker.postMessage(request);
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
