/**
 * Runs several worker processes that each print `ready` once loaded and then wait for `go` on
 * stdin, so they all start their real work at the same moment (the contention the multi-process
 * tests are about), not staggered by Node's start-up time.
 */
import { spawn, type SpawnOptions } from 'node:child_process';

export interface WorkerOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startWorker(script: string, args: string[], options: SpawnOptions): { go: () => void; ready: Promise<void>; done: Promise<WorkerOutcome> } {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<WorkerOutcome>((resolve) =>
    child.on('close', (code) => {
      markReady();
      resolve({ code, stdout: stdout.replace(/^ready\n/, ''), stderr });
    }),
  );
  // A child that died before the release must surface through `done`, not as an EPIPE here.
  child.stdin.on('error', () => undefined);
  return { go: () => child.stdin.write('go\n'), ready, done };
}

/** Starts one worker per argument list, waits until each is loaded, then releases them together. */
export async function runReleasedTogether(script: string, argsList: string[][], options: SpawnOptions = {}): Promise<WorkerOutcome[]> {
  const workers = argsList.map((args) => startWorker(script, args, options));
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.go();
  return Promise.all(workers.map((w) => w.done));
}
