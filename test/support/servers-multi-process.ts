/** Runs writer processes (test/support/servers-worker.ts) against one store URL, released together. */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { expect } from 'vitest';
import type { ManagedSnapshotStorage } from '../../src/store/types.js';
import { REPO_ROOT } from './servers.js';

const WORKER = path.join(REPO_ROOT, 'test', 'support', 'servers-worker.ts');
export const SHARED_LOCATION = { sessionId: 'shared', scope: 'agent' as const, scopeId: 'worker-test' };

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startWorker(storeUrl: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; ready: Promise<void>; done: Promise<Done> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, storeUrl, ...args], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
  });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Done>((resolve) =>
    child.on('close', (code) => {
      markReady();
      resolve({ code, stdout: stdout.replace(/^ready\n/, ''), stderr });
    }),
  );
  return { child, ready, done };
}

export async function runTogether(storeUrl: string, argsList: string[][], env: NodeJS.ProcessEnv = {}): Promise<Done[]> {
  const workers = argsList.map((args) => startWorker(storeUrl, args, env));
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.child.stdin!.write('go\n');
  return Promise.all(workers.map((w) => w.done));
}

/** The three multi-process checks, the same for every backend. */
export async function expectExactlyOneCreator(storeUrl: string, env: NodeJS.ProcessEnv, store: ManagedSnapshotStorage): Promise<void> {
  const id = '019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b';
  const results = await runTogether(storeUrl, Array.from({ length: 6 }, (_, w) => ['race', id, String(w)]), env);
  for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
  const outcomes = results.map((r) => r.stdout.trim());
  expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
  expect(outcomes.filter((o) => o === 'exists')).toHaveLength(5);
  const winner = outcomes.indexOf('won');
  expect((await store.loadSnapshot({ location: SHARED_LOCATION, snapshotId: id }))?.data.writer).toBe(winner);
}

export async function expectAllAppendsKept(storeUrl: string, env: NodeJS.ProcessEnv, store: ManagedSnapshotStorage): Promise<void> {
  const results = await runTogether(storeUrl, Array.from({ length: 4 }, (_, w) => ['history', String(w), '15']), env);
  for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
  const written = results.flatMap((r) => JSON.parse(r.stdout) as string[]);
  const listed = await store.listSnapshotIds({ location: SHARED_LOCATION });
  for (const id of written) expect(listed).toContain(id);
  // Each process's own ids sort in its creation order (monotonic UUID v7 per process).
  for (const r of results) {
    const own = JSON.parse(r.stdout) as string[];
    expect(listed.filter((id) => own.includes(id))).toEqual(own);
  }
}

export async function expectOneWholeLatest(storeUrl: string, env: NodeJS.ProcessEnv, store: ManagedSnapshotStorage): Promise<void> {
  const results = await runTogether(storeUrl, Array.from({ length: 4 }, (_, w) => ['latest', String(w), '10']), env);
  for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
  const latest = await store.loadSnapshot({ location: SHARED_LOCATION });
  const { writer, seq, payload } = latest!.data as { writer: number; seq: number; payload: string };
  expect(payload).toBe(`${writer}:${seq}:`.repeat(4000));
  expect(latest!.appData).toEqual({ check: payload.length });
}
