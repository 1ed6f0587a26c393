/** saveSnapshot and loadSnapshot: latest, history by id, create-only history, what a snapshot must be. */
import assert from 'node:assert/strict';
import type { Snapshot, SnapshotLocation } from '../contract/types.js';
import { FIXTURE_IDS, snapshotOf, expectSessionError, type CaseRegistrar } from './support.js';

export function snapshotCases(test: CaseRegistrar): void {
  test('saves latest and loads it back when snapshotId is omitted', async (s, location) => {
    const snap = snapshotOf({ messages: ['hi'] });
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snap });
    assert.deepEqual(await s.loadSnapshot({ location }), snap);
  });

  test('a second latest save replaces the first', async (s, location) => {
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf({ n: 1 }) });
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf({ n: 2 }) });
    assert.deepEqual((await s.loadSnapshot({ location }))?.data, { n: 2 });
  });

  test('latest ignores snapshotId, as upstream (any id, even an invalid one)', async (s, location) => {
    await s.saveSnapshot({ location, snapshotId: 'Not A Valid Id!', isLatest: true, snapshot: snapshotOf({ n: 1 }) });
    assert.deepEqual((await s.loadSnapshot({ location }))?.data, { n: 1 });
    assert.deepEqual(await s.listSnapshotIds({ location }), []);
  });

  test("saves and loads history by id, including upstream's non-UUID ids '1' and '5'", async (s, location) => {
    const one = snapshotOf({ n: 1 });
    const five = snapshotOf({ n: 5 });
    await s.saveSnapshot({ location, snapshotId: '1', isLatest: false, snapshot: one });
    await s.saveSnapshot({ location, snapshotId: '5', isLatest: false, snapshot: five });
    assert.deepEqual(await s.loadSnapshot({ location, snapshotId: '1' }), one);
    assert.deepEqual(await s.loadSnapshot({ location, snapshotId: '5' }), five);
    assert.equal(await s.loadSnapshot({ location }), null, 'history saves do not touch latest');
  });

  test('loadSnapshot returns null when nothing is stored', async (s, location) => {
    assert.equal(await s.loadSnapshot({ location }), null);
    assert.equal(await s.loadSnapshot({ location, snapshotId: FIXTURE_IDS[0] }), null);
    await s.saveSnapshot({ location, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf() });
    assert.equal(await s.loadSnapshot({ location, snapshotId: FIXTURE_IDS[1] }), null);
  });

  test('agent and multiAgent scopes, and different scopeIds, are separate locations', async (s, location) => {
    const multi: SnapshotLocation = { sessionId: location.sessionId, scope: 'multiAgent', scopeId: 'graph-1' };
    const other: SnapshotLocation = { ...location, scopeId: 'other-agent' };
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf({ who: 'agent' }) });
    await s.saveSnapshot({ location: multi, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf({ who: 'multi' }, { scope: 'multiAgent' }) });
    await s.saveSnapshot({ location: multi, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf({}, { scope: 'multiAgent' }) });
    assert.deepEqual((await s.loadSnapshot({ location }))?.data, { who: 'agent' });
    assert.deepEqual((await s.loadSnapshot({ location: multi }))?.data, { who: 'multi' });
    assert.equal(await s.loadSnapshot({ location: other }), null);
    assert.deepEqual(await s.listSnapshotIds({ location }), []);
    assert.deepEqual(await s.listSnapshotIds({ location: multi }), [FIXTURE_IDS[0]]);
  });

  test('round-trips nested data and appData exactly (unicode, numbers, arrays, nulls)', async (s, location) => {
    const snap = snapshotOf(
      { messages: [{ role: 'user', content: [{ text: 'héllo 😀 \u2028 "quoted" \\ back' }] }], n: -1.5e-7, big: 2 ** 53 - 1, nil: null, t: true },
      { appData: { nested: { deep: [1, [2, [3]], {}] }, empty: '' } },
    );
    await s.saveSnapshot({ location, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snap });
    assert.deepEqual(await s.loadSnapshot({ location, snapshotId: FIXTURE_IDS[0] }), snap);
  });

  test('history is create-only: saving an existing id fails and keeps the original', async (s, location) => {
    await s.saveSnapshot({ location, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf({ v: 'original' }) });
    await expectSessionError(s.saveSnapshot({ location, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf({ v: 'replacement' }) }), /already exists/);
    assert.deepEqual((await s.loadSnapshot({ location, snapshotId: FIXTURE_IDS[0] }))?.data, { v: 'original' });
  });

  test('rejects a document that is not a Snapshot, and stores nothing', async (s, location) => {
    const bad: unknown[] = [
      null,
      [],
      'text',
      { ...snapshotOf(), scope: 'nobody' },
      { ...snapshotOf(), schemaVersion: 1 },
      { scope: 'agent', schemaVersion: '1.0', data: {}, appData: {} },
      { ...snapshotOf(), data: [] },
      { ...snapshotOf(), appData: null },
    ];
    for (const snapshot of bad) {
      await expectSessionError(s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshot as Snapshot }));
      await expectSessionError(s.saveSnapshot({ location, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshot as Snapshot }));
    }
    assert.equal(await s.loadSnapshot({ location }), null);
    assert.deepEqual(await s.listSnapshotIds({ location }), []);
  });
}
