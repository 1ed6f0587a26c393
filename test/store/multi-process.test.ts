import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileStorage, isSnapshot } from '../../src/store/index.js';
import { runReleasedTogether, type WorkerOutcome } from '../support/released-together.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support', 'store-worker.ts');
const location = { sessionId: 'shared', scope: 'agent' as const, scopeId: 'worker-test' };

/** Starts all workers, waits until each has loaded, then releases them together. */
function runTogether(argsList: string[][]): Promise<WorkerOutcome[]> {
  return runReleasedTogether(WORKER, argsList);
}

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-mp-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('FileStorage across processes', () => {
  it('8 processes saving latest of one location at once never fail and leave one whole write', async () => {
    const results = await runTogether(Array.from({ length: 8 }, (_, w) => ['latest', dir, String(w), '25']));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
    const storage = new FileStorage(dir);
    const latest = await storage.loadSnapshot({ location });
    expect(isSnapshot(latest)).toBe(true);
    const { writer, seq, payload } = latest!.data as { writer: number; seq: number; payload: string };
    expect(payload).toBe(`${writer}:${seq}:`.repeat(4000));
    expect(latest!.appData).toEqual({ check: payload.length });
    // Every temp file was renamed away: nothing but the latest file (no history) remains.
    expect(await fs.readdir(path.join(dir, 'shared/scopes/agent/worker-test/snapshots'))).toEqual(['snapshot_latest.json']);
    expect((await storage.verify()).ok).toBe(true);
  });

  it('8 processes appending 50 history snapshots each lose nothing and list in id order', async () => {
    const results = await runTogether(Array.from({ length: 8 }, (_, w) => ['history', dir, String(w), '50']));
    const written: string[] = [];
    for (const r of results) {
      expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
      const ids = JSON.parse(r.stdout) as string[];
      // Ids of one process are created in increasing order.
      expect(ids).toEqual([...ids].sort());
      written.push(...ids);
    }
    expect(new Set(written).size).toBe(400);
    const storage = new FileStorage(dir);
    const listed = await storage.listSnapshotIds({ location });
    expect(listed).toEqual([...written].sort());
    const report = await storage.verify();
    expect(report).toMatchObject({ ok: true, checked: 400 });
  });

  it('the next writers sweep stale temps of a killed writer, and 6 concurrent writers never lose a live temp', async () => {
    const snapDir = path.join(dir, 'shared/scopes/agent/worker-test/snapshots');
    const histDir = path.join(snapDir, 'immutable_history');
    await fs.mkdir(histDir, { recursive: true });
    // What a kill -9 leaves: temps of both documents, a minute past the grace the workers use.
    const stale = [path.join(snapDir, '.snapshot_latest.json.cairn-tmp-1-aaaaaaaaaaaa'), path.join(snapDir, 'snapshot_latest.json.tmp'), path.join(histDir, '.snapshot_01800000-0000-7000-8000-000000000000.json.cairn-tmp-2-bbbbbbbbbbbb')];
    const old = new Date(Date.now() - 60_000);
    for (const file of stale) {
      await fs.writeFile(file, '{"torn":');
      await fs.utimes(file, old, old);
    }
    // A temp inside the grace may be a live writer's: never removed.
    const young = path.join(snapDir, '.manifest.json.cairn-tmp-3-cccccccccccc');
    await fs.writeFile(young, 'a live writer owns this');
    // Every save is a new store object, so every save sweeps while the others write: a swept live
    // temp would fail its writer's rename (ENOENT), so exit 0 everywhere proves none was.
    const results = await runReleasedTogether(WORKER, Array.from({ length: 6 }, (_, w) => ['fresh', dir, String(w), '15']), { env: { ...process.env, CAIRN_TEST_TEMP_GRACE_MS: '20000' } });
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
    for (const file of stale) await expect(fs.access(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await fs.readFile(young, 'utf8')).toBe('a live writer owns this');
    const storage = new FileStorage(dir);
    expect(await storage.listSnapshotIds({ location })).toHaveLength(90);
    const report = await storage.verify();
    expect(report.issues.map((i) => [i.kind, i.where])).toEqual([['temp-file', young]]);
    expect(report.issues[0]!.message).toContain('a plain `cairn store prune`');
  });
});
