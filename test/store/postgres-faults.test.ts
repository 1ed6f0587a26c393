/**
 * Fault test on a real PostgreSQL: the server (our own, so other test files keep theirs) is
 * stopped with `pg_ctl stop -m immediate` in the middle of a burst of writes. Every call then
 * fails with a clear SessionError within the connect timeout and retry budget, every write that
 * was acknowledged survives, nothing half-written is visible, and the same store object works
 * again once the server is back.
 */
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { PostgresStorage } from '../../src/store/backends/postgres/postgres-storage.js';
import type { SnapshotLocation } from '../../src/store/contract/types.js';
import { required, runScript, skipReason, startPostgres, stopPostgres, type PgServerInfo } from '../support/servers.js';
import { burstThenCut, expectAllUnavailable, expectIntactAfterRestart } from '../support/servers-faults.js';
import { pgStorageOn, serverSuite } from '../support/servers-stores.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

const { describe, it } = serverSuite<PgServerInfo>('pg');
let own: PgServerInfo | undefined;
let setupError: Error | undefined;

beforeAll(async () => {
  if (skipReason('pg') !== undefined) return;
  try {
    own = required(await startPostgres());
  } catch (e) {
    setupError = e as Error; // reported by the test itself, so it counts as a failed test
  }
}, WHOLE_PROCESS_BUDGET_MS);

afterAll(async () => {
  if (own?.pgDir) await stopPostgres(own.pgDir);
}, WHOLE_PROCESS_BUDGET_MS);

async function restart(info: PgServerInfo): Promise<void> {
  const port = new URL(info.url).port;
  const r = await runScript('pg-up.sh', [info.pgDir!, port], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`restart failed: ${r.stderr}`);
}

describe('PostgresStorage when the server stops mid-run', () => {
  it('fails every call with a clear SessionError, loses no acknowledged write, and recovers after a restart', async () => {
    if (setupError) throw setupError;
    const info = own!;
    const store: PostgresStorage = pgStorageOn(info, { schema: 'faults', connectTimeoutMs: 2_000, statementTimeoutMs: 5_000 });
    const location: SnapshotLocation = { sessionId: 'fault-session', scope: 'agent', scopeId: 'agent' };
    await store.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: { scope: 'agent', schemaVersion: '1.0', createdAt: 'x', data: {}, appData: {} } });

    const { acknowledged, failures } = await burstThenCut(store, location, 60, 10, () => stopPostgres(info.pgDir!, 'immediate', false));
    expect(acknowledged.size).toBeGreaterThanOrEqual(10);
    for (const f of failures) expect(['ERR_BACKEND_UNAVAILABLE', 'ERR_IO']).toContain(f.code);

    await expectAllUnavailable(store, location);

    await restart(info);
    await expectIntactAfterRestart(store, location, acknowledged);
    await store.saveSnapshot({ location, snapshotId: 'after-restart', isLatest: false, snapshot: { scope: 'agent', schemaVersion: '1.0', createdAt: 'x', data: { back: true }, appData: {} } });
    expect((await store.loadSnapshot({ location, snapshotId: 'after-restart' }))?.data).toEqual({ back: true });
    await store.close();
  }, WHOLE_PROCESS_BUDGET_MS);
});
