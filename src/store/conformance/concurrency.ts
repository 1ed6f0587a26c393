/** Parallel writers: one whole latest, no lost history, one winner per history id. */
import assert from 'node:assert/strict';
import { uuidV7 } from '../contract/uuid.js';
import { FIXTURE_IDS, snapshotOf, type CaseRegistrar } from './support.js';

export function concurrencyCases(test: CaseRegistrar): void {
  test('parallel saves of latest all succeed and leave exactly one of them, whole', async (s, location) => {
    const writes = Array.from({ length: 16 }, (_, i) => snapshotOf({ writer: i, payload: 'x'.repeat(2000 + i) }));
    await Promise.all(writes.map((snapshot) => s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot })));
    const latest = await s.loadSnapshot({ location });
    assert.ok(latest !== null);
    const writer = latest.data.writer as number;
    assert.deepEqual(latest, writes[writer]);
  });

  test('parallel history appends lose nothing and list in id order', async (s, location) => {
    const ids = Array.from({ length: 40 }, () => uuidV7());
    await Promise.all(ids.map((id) => s.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf({ id }) })));
    assert.deepEqual(await s.listSnapshotIds({ location }), ids);
    for (const id of [ids[0]!, ids[39]!]) assert.deepEqual((await s.loadSnapshot({ location, snapshotId: id }))?.data, { id });
  });

  test('parallel saves of one history id: exactly one wins, the others fail', async (s, location) => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => s.saveSnapshot({ location, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf({ writer: i }) })),
    );
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    assert.equal(won.length, 1, `expected one winner, got ${won.length}`);
    assert.deepEqual((await s.loadSnapshot({ location, snapshotId: FIXTURE_IDS[0] }))?.data, { writer: won[0] });
  });
}
