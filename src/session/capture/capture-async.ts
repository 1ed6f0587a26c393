/**
 * The async surface of `SnapshotManager` for long-running callers (servers, editors): the seed's
 * methods stay synchronous, and these run the very same capture on a worker thread, so a
 * whole-tree inventory of a big repository does not stop the caller's event loop. The worker
 * loads this package's own built session module; where there is none to load (running from
 * TypeScript sources), the capture runs in place and the promise still resolves the same record.
 *
 * The worker stays for the next call (unref'd while idle, so it never keeps a process alive): a
 * long-running caller such as the MCP server pays for a thread and for loading and compiling the
 * session library once, not per capture (on Node 20, ~60–80 ms of CPU a call), and whatever the
 * library keeps in memory stays warm. It shares the caller's environment (SHARE_ENV), so it sees
 * what a fresh one would. A capture asked for while it is busy gets a thread of its own, as before;
 * an aborted capture takes its thread down with it, and the next call starts another.
 *
 * The resident worker takes its captures with `src/daemon/`'s WatchedSnapshotManager (when built
 * beside this module, and unless CAIRN_WATCH=0): a tree watcher lets it skip what provably did not
 * change since its last capture, with the same records (`docs/long-running.md`).
 */
import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SHARE_ENV, Worker } from 'node:worker_threads';
import { CairnError } from '../../core/errors.js';
import { SnapshotManager } from './snapshot-manager.js';
import type { PostSnapshot, PreSnapshot, SnapshotManagerOptions } from '../types.js';

/** The manager's options that can cross to a worker (callbacks cannot), plus cancellation. */
export interface CaptureAsyncOptions extends Omit<SnapshotManagerOptions, 'onProgress'> {
  /** Aborting stops the worker; the promise rejects with ERR_ABORTED and nothing half-written stays (writes are atomic). */
  signal?: AbortSignal;
}

type Phase = 'pre' | 'post';

// The built session module, as tsc lays it out (dist/session/capture/ → dist/session/) or as the CLI bundle's chunks
// see it (dist/bin/chunks/ → dist/session/).
const CANDIDATES = ['../index.js', '../../session/index.js'];

function sessionModuleUrl(): string | null {
  for (const rel of CANDIDATES) {
    const url = new URL(rel, import.meta.url);
    if (url.protocol === 'file:' && fs.existsSync(fileURLToPath(url))) return url.href;
  }
  return null;
}

/** The resident worker: answers one capture per message, for as long as the process lives. */
const RESIDENT_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let loading;
parentPort.on('message', (m) => {
  // The watched manager (src/daemon/) only where this worker stays: a one-capture worker would only pay for the watcher.
  loading ??= Promise.all([import(workerData.moduleUrl), workerData.watchedUrl && process.env.CAIRN_WATCH !== '0' ? import(workerData.watchedUrl).catch(() => null) : null]);
  loading.then(([{ SnapshotManager }, watched]) => {
    const manager = watched && m.resident ? watched.residentManager(m.projectRoot, m.options) : new SnapshotManager(m.projectRoot, m.options);
    const record = m.phase === 'pre'
      ? manager.capturePreSnapshot(m.projectRoot, m.iterationDir)
      : manager.capturePostSnapshot(m.projectRoot, m.iterationDir);
    parentPort.postMessage({ ok: true, record });
  }).catch((e) => {
    parentPort.postMessage({ ok: false, error: { name: e && e.name, message: e && e.message, code: e && e.code, exitCode: e && e.exitCode, path: e && e.path, details: e && e.details } });
  });
});
`;

interface Resident {
  worker: Worker;
  moduleUrl: string;
  busy: boolean;
  /** A worker started because the resident one was busy: stopped after its one capture. */
  once?: true;
}

let resident: Resident | null = null;

/** The built watched manager (src/daemon/watched-manager.ts) beside the session module, or null. */
function watchedModuleUrl(moduleUrl: string): string | null {
  const url = new URL('../daemon/watched-manager.js', moduleUrl);
  return url.protocol === 'file:' && fs.existsSync(fileURLToPath(url)) ? url.href : null;
}

function startWorker(moduleUrl: string): Worker {
  const worker = new Worker(RESIDENT_SOURCE, { eval: true, workerData: { moduleUrl, watchedUrl: watchedModuleUrl(moduleUrl) }, env: SHARE_ENV });
  worker.unref();
  return worker;
}

/** The resident worker when it is free (started on first use); while it runs another capture, a worker for this one only. */
function freeResident(moduleUrl: string): Resident {
  if (resident !== null && resident.moduleUrl === moduleUrl && resident.busy) return { worker: startWorker(moduleUrl), moduleUrl, busy: false, once: true };
  if (resident !== null && resident.moduleUrl === moduleUrl) return resident;
  const worker = startWorker(moduleUrl);
  const r: Resident = { worker, moduleUrl, busy: false };
  const forget = (): void => {
    if (resident === r) resident = null;
  };
  worker.on('exit', forget);
  worker.on('error', forget);
  resident = r;
  return r;
}

/** The thread id of the resident capture worker, or null when none runs (for tests). */
export function residentCaptureThreadId(): number | null {
  return resident?.worker.threadId ?? null;
}

interface WorkerError {
  name?: string;
  message?: string;
  code?: string;
  exitCode?: number;
  path?: string;
  details?: Record<string, unknown>;
}

/** The worker's error as the caller would have seen it from the synchronous method. */
function rebuild(e: WorkerError): Error {
  if (typeof e.code === 'string' && e.code.startsWith('ERR_')) {
    const options: ConstructorParameters<typeof CairnError>[2] = {};
    if (e.exitCode !== undefined) options.exitCode = e.exitCode;
    if (e.path !== undefined) options.path = e.path;
    if (e.details !== undefined) options.details = e.details;
    return new CairnError(e.code, e.message ?? 'capture failed', options);
  }
  const error = new Error(e.message ?? 'capture failed');
  if (e.name) error.name = e.name;
  return error;
}

function aborted(): CairnError {
  return new CairnError('ERR_ABORTED', 'the capture was aborted', { exitCode: 1 });
}

function capture<T>(phase: Phase, projectRoot: string, iterationDir: string, options: CaptureAsyncOptions): Promise<T> {
  const { signal, ...managerOptions } = options;
  if (signal?.aborted) return Promise.reject(aborted());
  const moduleUrl = sessionModuleUrl();
  if (moduleUrl === null) {
    // From TypeScript sources there is no built module for a worker to load: run in place.
    return new Promise<T>((resolve) => {
      const manager = new SnapshotManager(projectRoot, managerOptions);
      resolve((phase === 'pre' ? manager.capturePreSnapshot(projectRoot, iterationDir) : manager.capturePostSnapshot(projectRoot, iterationDir)) as T);
    });
  }
  return onResident<T>(freeResident(moduleUrl), { phase, projectRoot, iterationDir, options: managerOptions }, signal);
}

function onResident<T>(r: Resident, request: { phase: Phase; projectRoot: string; iterationDir: string; options: Omit<CaptureAsyncOptions, 'signal'> }, signal: AbortSignal | undefined): Promise<T> {
  r.busy = true;
  r.worker.ref();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onMessage = (m: { ok: true; record: T } | { ok: false; error: WorkerError }): void => finish(() => (m.ok ? resolve(m.record) : reject(rebuild(m.error))));
    const onError = (e: Error): void => finish(() => reject(e));
    const onExit = (code: number): void => finish(() => reject(new CairnError('ERR_IO', `the capture worker stopped (exit ${code}) before it answered`, { exitCode: 1 })));
    const onAbort = (): void => {
      if (resident === r) resident = null; // no later call may reach the worker being stopped
      finish(() => reject(aborted()));
      void r.worker.terminate(); // the capture cannot be stopped halfway any other way; the next call starts a new worker
    };
    function finish(fn: () => void): void {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      r.worker.off('message', onMessage);
      r.worker.off('error', onError);
      r.worker.off('exit', onExit);
      r.busy = false;
      r.worker.unref();
      if (r.once === true) void r.worker.terminate();
      fn();
    }
    r.worker.on('message', onMessage);
    r.worker.on('error', onError);
    r.worker.on('exit', onExit);
    signal?.addEventListener('abort', onAbort, { once: true });
    r.worker.postMessage({ ...request, resident: r.once !== true });
  });
}

/** `SnapshotManager#capturePreSnapshot` on a worker thread: the same record, without blocking the event loop. */
export function capturePreSnapshotAsync(projectRoot: string, iterationDir: string, options: CaptureAsyncOptions = {}): Promise<PreSnapshot> {
  return capture<PreSnapshot>('pre', projectRoot, iterationDir, options);
}

/** `SnapshotManager#capturePostSnapshot` on a worker thread (rejects as the seed's method throws when there is no pre-snapshot). */
export function capturePostSnapshotAsync(projectRoot: string, iterationDir: string, options: CaptureAsyncOptions = {}): Promise<PostSnapshot> {
  return capture<PostSnapshot>('post', projectRoot, iterationDir, options);
}
