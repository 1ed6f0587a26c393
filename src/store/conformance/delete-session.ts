/** deleteSession: every scope of the session goes, other sessions stay. */
import assert from 'node:assert/strict';
import type { SnapshotLocation } from '../contract/types.js';
import { FIXTURE_IDS, snapshotOf, uniqueId, type CaseRegistrar } from './support.js';

export function deleteSessionCases(test: CaseRegistrar): void {
  test('removes every scope of the session and leaves other sessions alone', async (s, location) => {
    const multi: SnapshotLocation = { sessionId: location.sessionId, scope: 'multiAgent', scopeId: 'graph-1' };
    const otherSession: SnapshotLocation = { ...location, sessionId: uniqueId('other') };
    for (const loc of [location, multi, otherSession]) {
      await s.saveSnapshot({ location: loc, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
      await s.saveSnapshot({ location: loc, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf() });
      await s.saveManifest({ location: loc, manifest: { schemaVersion: '1.0', updatedAt: '2026-01-01T00:00:00.000Z' } });
    }
    assert.equal(await s.deleteSession({ sessionId: location.sessionId }), undefined);
    for (const loc of [location, multi]) {
      assert.equal(await s.loadSnapshot({ location: loc }), null);
      assert.equal(await s.loadSnapshot({ location: loc, snapshotId: FIXTURE_IDS[0] }), null);
      assert.deepEqual(await s.listSnapshotIds({ location: loc }), []);
      assert.notEqual((await s.loadManifest({ location: loc })).updatedAt, '2026-01-01T00:00:00.000Z');
    }
    assert.notEqual(await s.loadSnapshot({ location: otherSession }), null);
    assert.deepEqual(await s.listSnapshotIds({ location: otherSession }), [FIXTURE_IDS[0]]);
  });

  test('deleting a session that does not exist resolves to undefined', async (s, location) => {
    assert.equal(await s.deleteSession({ sessionId: location.sessionId }), undefined);
  });

  test('a deleted session can be written again', async (s, location) => {
    await s.saveSnapshot({ location, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf({ v: 1 }) });
    await s.deleteSession({ sessionId: location.sessionId });
    await s.saveSnapshot({ location, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf({ v: 2 }) });
    assert.deepEqual((await s.loadSnapshot({ location, snapshotId: FIXTURE_IDS[0] }))?.data, { v: 2 });
  });
}
