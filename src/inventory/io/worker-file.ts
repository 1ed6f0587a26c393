import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker, WorkerOptions } from 'node:worker_threads';

/** io/'s worker modules. */
export type WorkerName = 'hash-worker' | 'verify-worker';

/**
 * Starts a worker thread on one of io/'s worker modules, which import what they run like any
 * module. Where that module is depends on how cairn runs:
 * - from the build (tsc): `dist/inventory/io/<name>.js`, beside this module;
 * - from the CLI bundle (scripts/bundle-cli.mjs makes each worker an entry of its own):
 *   `dist/bin/<name>.mjs`, beside the entry or one level above the chunk this code landed in;
 * - from the TypeScript sources (vitest): `src/inventory/io/<name>.ts`, which Node 20 cannot
 *   load itself, so the worker loads it through tsx (a dev dependency, as the sources are).
 */
export function startWorker(name: WorkerName, options: WorkerOptions = {}): Worker {
  // Loaded on first use: a scan with nothing to hash starts no worker (~5 ms of a Node 20 start).
  const { Worker } = process.getBuiltinModule('node:worker_threads');
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const file = new URL(`./${name}.ts`, here).href;
    // The ES module entry of tsx's API (import.meta.resolve where the runner provides it, else
    // resolved from the working directory: the repository's, under vitest).
    const tsx = typeof import.meta.resolve === 'function' ? import.meta.resolve('tsx/esm/api') : 'tsx/esm/api';
    const boot = `import(${JSON.stringify(tsx)}).then((tsx) => tsx.tsImport(${JSON.stringify(file)}, ${JSON.stringify(file)}));`;
    return new Worker(boot, { ...options, eval: true });
  }
  return new Worker(workerFile(name, here), options);
}

const found = new Map<WorkerName, URL>();

function workerFile(name: WorkerName, here: string): URL {
  let url = found.get(name);
  if (url === undefined) {
    // The bundle's ES modules are .mjs (scripts/bundle-cli.mjs), tsc's are .js: the worker's is this
    // module's; the bundle's CommonJS snapshot lane (.js beside the workers) finds their .mjs.
    const ext = here.endsWith('.mjs') ? '.mjs' : '.js';
    const candidates = [new URL(`./${name}${ext}`, here), new URL(`../${name}${ext}`, here), ...(ext === '.js' ? [new URL(`./${name}.mjs`, here)] : [])];
    url = candidates.find((u) => fs.existsSync(fileURLToPath(u))) ?? candidates[0]!;
    found.set(name, url);
  }
  return url;
}
