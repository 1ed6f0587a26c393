/** The "server dies in the middle of a run" scenario both distributed backends must survive. */
import { expect } from 'vitest';
import { SessionError } from '../../src/store/contract/errors.js';
import type { ManagedSnapshotStorage, Snapshot, SnapshotLocation } from '../../src/store/contract/types.js';
import { uuidV7 } from '../../src/store/contract/uuid.js';

export function payloadSnapshot(i: number): Snapshot {
  // Big enough that a request is still on the wire when the server dies.
  return { scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data: { i, blob: `${i}:`.padEnd(64 * 1024, 'x') }, appData: {} };
}

/**
 * Fires `count` parallel history saves and calls `cut` once `cutAfter` of them were acknowledged.
 * Every save must settle: acknowledged, or rejected with a SessionError.
 */
export async function burstThenCut(
  store: ManagedSnapshotStorage,
  location: SnapshotLocation,
  count: number,
  cutAfter: number,
  cut: () => Promise<void>,
): Promise<{ acknowledged: Map<string, Snapshot>; failures: SessionError[] }> {
  const acknowledged = new Map<string, Snapshot>();
  let cutting: Promise<void> | undefined;
  const saves = Array.from({ length: count }, (_, i) => {
    const id = uuidV7();
    const snapshot = payloadSnapshot(i);
    return store.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot }).then(() => {
      acknowledged.set(id, snapshot);
      if (acknowledged.size === cutAfter) cutting = cut();
    });
  });
  const settled = await Promise.allSettled(saves);
  await (cutting ?? cut());
  const failures: SessionError[] = [];
  for (const r of settled) {
    if (r.status === 'rejected') {
      expect(r.reason, String(r.reason)).toBeInstanceOf(SessionError);
      failures.push(r.reason as SessionError);
    }
  }
  return { acknowledged, failures };
}

/** Every operation of the store, each expected to fail while the server is down. */
export function everyOperation(store: ManagedSnapshotStorage, location: SnapshotLocation): [string, () => Promise<unknown>][] {
  const snapshot = payloadSnapshot(-1);
  return [
    ['saveSnapshot latest', () => store.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot })],
    ['saveSnapshot history', () => store.saveSnapshot({ location, snapshotId: uuidV7(), isLatest: false, snapshot })],
    ['loadSnapshot latest', () => store.loadSnapshot({ location })],
    ['loadSnapshot history', () => store.loadSnapshot({ location, snapshotId: uuidV7() })],
    ['listSnapshotIds', () => store.listSnapshotIds({ location, limit: 10 })],
    ['deleteSession', () => store.deleteSession({ sessionId: `${location.sessionId}-gone` })],
    ['loadManifest', () => store.loadManifest({ location })],
    ['saveManifest', () => store.saveManifest({ location, manifest: { schemaVersion: '1.0', updatedAt: new Date().toISOString() } })],
    ['listSessions', () => store.listSessions()],
    ['listLocations', () => store.listLocations({ sessionId: location.sessionId })],
    ['prune', () => store.prune({ location, keepLast: 1000 })],
    ['verify', () => store.verify({ sessionId: location.sessionId })],
    ['du', () => store.du({ sessionId: location.sessionId })],
  ];
}

export async function expectAllUnavailable(store: ManagedSnapshotStorage, location: SnapshotLocation): Promise<void> {
  for (const [name, op] of everyOperation(store, location)) {
    const e = await op().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e, `${name} should fail while the server is down`).toBeInstanceOf(SessionError);
    expect((e as SessionError).code, `${name}: ${(e as Error).message}`).toBe('ERR_BACKEND_UNAVAILABLE');
    expect((e as SessionError).message, name).toMatch(/did not answer .*check that .* running/);
  }
}

/** After the restart: every acknowledged save is there, whole; nothing listed is torn. */
export async function expectIntactAfterRestart(store: ManagedSnapshotStorage, location: SnapshotLocation, acknowledged: Map<string, Snapshot>): Promise<void> {
  const listed = await store.listSnapshotIds({ location });
  for (const id of acknowledged.keys()) expect(listed, `acknowledged ${id} is listed`).toContain(id);
  for (const id of listed) {
    const loaded = await store.loadSnapshot({ location, snapshotId: id });
    expect(loaded, `listed ${id} loads`).not.toBeNull();
    const i = loaded!.data.i as number;
    expect(loaded).toEqual({ ...payloadSnapshot(i), createdAt: loaded!.createdAt });
    if (acknowledged.has(id)) expect(loaded).toEqual(acknowledged.get(id));
  }
  const report = await store.verify({ sessionId: location.sessionId });
  expect(report.issues).toEqual([]);
}
