/** Runs writer processes (test/support/servers-worker.ts) against one store URL, released together. */
import * as path from 'node:path';
import { expect } from 'vitest';
import type { ManagedSnapshotStorage } from '../../src/store/contract/types.js';
import { runReleasedTogether, type WorkerOutcome } from './released-together.js';
import { REPO_ROOT } from './servers.js';

const WORKER = path.join(REPO_ROOT, 'test', 'support', 'servers-worker.ts');
export const SHARED_LOCATION = { sessionId: 'shared', scope: 'agent' as const, scopeId: 'worker-test' };

/** Runs writer processes against one store URL, released together. */
export function runTogether(storeUrl: string, argsList: string[][], env: NodeJS.ProcessEnv = {}): Promise<WorkerOutcome[]> {
  return runReleasedTogether(
    WORKER,
    argsList.map((args) => [storeUrl, ...args]),
    { cwd: REPO_ROOT, env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env } },
  );
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
