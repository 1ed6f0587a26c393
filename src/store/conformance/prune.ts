/** prune (upkeep): keepLast, olderThan by createdAt or the id, dry runs, refusals. */
import assert from 'node:assert/strict';
import { createUuidV7Generator, uuidV7 } from '../contract/uuid.js';
import { snapshotOf, expectSessionError, managed, fill, type CaseRegistrar } from './support.js';

export function pruneCases(test: CaseRegistrar): void {
  test('prune keepLast keeps the newest N and never touches latest or the manifest', async (s, location) => {
    const ids = await fill(s, location, 6);
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf({ latest: true }) });
    await s.saveManifest({ location, manifest: { schemaVersion: '1.0', updatedAt: '2026-01-01T00:00:00.000Z' } });
    const result = await managed(s).prune({ location, keepLast: 2 });
    assert.deepEqual(result.deleted, ids.slice(0, 4));
    assert.equal(result.kept, 2);
    assert.equal(result.dryRun, false);
    assert.deepEqual(await s.listSnapshotIds({ location }), ids.slice(4));
    assert.deepEqual((await s.loadSnapshot({ location }))?.data, { latest: true });
    assert.equal((await s.loadManifest({ location })).updatedAt, '2026-01-01T00:00:00.000Z');
    assert.deepEqual((await managed(s).prune({ location, keepLast: 0 })).deleted, ids.slice(4));
    assert.deepEqual((await s.loadSnapshot({ location }))?.data, { latest: true });
  });

  test('prune dryRun reports what it would delete and deletes nothing', async (s, location) => {
    const ids = await fill(s, location, 4);
    const result = await managed(s).prune({ location, keepLast: 1, dryRun: true });
    assert.deepEqual(result.deleted, ids.slice(0, 3));
    assert.equal(result.dryRun, true);
    assert.deepEqual(await s.listSnapshotIds({ location }), ids);
  });

  test("prune olderThan goes by each snapshot's createdAt", async (s, location) => {
    const day = 86_400_000;
    const ids = await fill(s, location, 5, (i) => new Date(Date.now() - (10 - i * 2) * day).toISOString()); // 10,8,6,4,2 days old
    const result = await managed(s).prune({ location, olderThan: '7d' });
    assert.deepEqual(result.deleted, ids.slice(0, 2));
    assert.deepEqual(await s.listSnapshotIds({ location }), ids.slice(2));
    const byDate = await managed(s).prune({ location, olderThan: new Date(Date.now() - 3 * day) });
    assert.deepEqual(byDate.deleted, ids.slice(2, 4));
  });

  test('prune olderThan falls back to the UUID v7 timestamp when createdAt is not a date', async (s, location) => {
    const old = createUuidV7Generator({ now: () => Date.now() - 30 * 86_400_000 })();
    const fresh = uuidV7();
    for (const id of [old, fresh]) await s.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf({}, { createdAt: 'unknown' }) });
    await s.saveSnapshot({ location, snapshotId: 'no-date', isLatest: false, snapshot: snapshotOf({}, { createdAt: 'unknown' }) });
    const result = await managed(s).prune({ location, olderThan: '7d' });
    assert.deepEqual(result.deleted, [old]);
    assert.deepEqual(await s.listSnapshotIds({ location }), [fresh, 'no-date'].sort());
  });

  test('prune with keepLast and olderThan deletes only what both rules let go', async (s, location) => {
    const day = 86_400_000;
    const ids = await fill(s, location, 5, (i) => new Date(Date.now() - (10 - i * 2) * day).toISOString());
    const result = await managed(s).prune({ location, keepLast: 4, olderThan: '7d' });
    assert.deepEqual(result.deleted, ids.slice(0, 1));
  });

  test('prune without keepLast or olderThan, or with bad values, is rejected', async (s, location) => {
    await fill(s, location, 2);
    await expectSessionError(managed(s).prune({ location }));
    await expectSessionError(managed(s).prune({ location, keepLast: -1 }));
    await expectSessionError(managed(s).prune({ location, keepLast: 1.5 }));
    await expectSessionError(managed(s).prune({ location, olderThan: 'soon' }));
    assert.equal((await s.listSnapshotIds({ location })).length, 2);
  });
}
