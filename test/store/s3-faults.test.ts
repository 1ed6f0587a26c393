/**
 * Fault test on a real gateway: the RADOS Gateway this store talks to is killed (SIGKILL) in the
 * middle of a burst of writes. Every call then fails with a clear SessionError (bounded by the
 * client's timeouts and retry budget), nothing half-written is visible afterwards, and the same
 * store object works again once the gateway is back.
 */
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { S3Storage } from '../../src/store/backends/s3/s3-storage.js';
import type { SnapshotLocation } from '../../src/store/contract/types.js';
import { ExtraGateway, freePort, startCeph, stopCeph, required, type S3ServerInfo } from '../support/servers.js';
import { burstThenCut, expectAllUnavailable, expectIntactAfterRestart } from '../support/servers-faults.js';
import { s3StorageOn, serverSuite, uniqueName } from '../support/servers-stores.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

const { describe, it, server } = serverSuite<S3ServerInfo>('s3');
let gateway: ExtraGateway | undefined;
let ownCluster: string | undefined;
let info: S3ServerInfo;
let setupError: Error | undefined;

beforeAll(async () => {
  try {
    const shared = server(); // throws the reason when the shared server is missing
    let cephDir = shared.cephDir;
    info = shared;
    if (cephDir === undefined) {
      // The shared server came from CAIRN_S3_URL: we may not kill it, so bring up a cluster of our own.
      info = required(await startCeph());
      cephDir = ownCluster = info.cephDir!;
    }
    gateway = new ExtraGateway(cephDir, await freePort(), uniqueName('rgw-fault'));
    await gateway.start();
  } catch (e) {
    setupError = e as Error; // reported by the test itself, so it counts as a failed test
  }
}, WHOLE_PROCESS_BUDGET_MS);

afterAll(async () => {
  await gateway?.kill();
  if (ownCluster) await stopCeph(ownCluster);
}, WHOLE_PROCESS_BUDGET_MS);

describe('S3Storage when the gateway dies mid-run', () => {
  it('fails every call with a clear SessionError, shows nothing half-written, and recovers after a restart', async () => {
    if (setupError) throw setupError;
    const g = gateway!;
    const store: S3Storage = s3StorageOn({ ...info, endpoint: g.endpoint }, {
      prefix: uniqueName('faults'),
      maxAttempts: 2,
      requestTimeoutMs: 5_000,
      connectTimeoutMs: 1_000,
    });
    const location: SnapshotLocation = { sessionId: 'fault-session', scope: 'agent', scopeId: 'agent' };
    await store.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: { scope: 'agent', schemaVersion: '1.0', createdAt: 'x', data: {}, appData: {} } });

    const { acknowledged, failures } = await burstThenCut(store, location, 60, 10, () => g.kill());
    expect(acknowledged.size).toBeGreaterThanOrEqual(10);
    for (const f of failures) expect(['ERR_BACKEND_UNAVAILABLE', 'ERR_IO']).toContain(f.code);

    await expectAllUnavailable(store, location);
    // A store opened while the server is down cannot even probe; it says so the same way.
    const late = s3StorageOn({ ...info, endpoint: g.endpoint }, { maxAttempts: 1, connectTimeoutMs: 1_000 });
    await expect(late.probe()).rejects.toMatchObject({ name: 'SessionError', code: 'ERR_BACKEND_UNAVAILABLE' });
    await late.close();

    await g.start();
    await expectIntactAfterRestart(store, location, acknowledged);
    await store.saveSnapshot({ location, snapshotId: 'after-restart', isLatest: false, snapshot: { scope: 'agent', schemaVersion: '1.0', createdAt: 'x', data: { back: true }, appData: {} } });
    expect((await store.loadSnapshot({ location, snapshotId: 'after-restart' }))?.data).toEqual({ back: true });
    await store.deleteSession({ sessionId: location.sessionId });
    await store.close();
  }, WHOLE_PROCESS_BUDGET_MS);
});
