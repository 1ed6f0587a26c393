/** listSnapshotIds: byte order, the exclusive case-insensitive cursor, limits, paging. */
import assert from 'node:assert/strict';
import type { SnapshotLocation, SnapshotStorage } from '../contract/types.js';
import { createUuidV7Generator } from '../contract/uuid.js';
import { FIXTURE_IDS, UUID_MESSAGE, snapshotOf, expectSessionError, type CaseRegistrar } from './support.js';

export function listSnapshotIdsCases(test: CaseRegistrar): void {
  const saveFixtures = async (s: SnapshotStorage, location: SnapshotLocation): Promise<void> => {
    for (const id of [FIXTURE_IDS[2], FIXTURE_IDS[0], FIXTURE_IDS[1]]) {
      await s.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf({ id }) });
    }
  };

  test('returns ids sorted whatever order they were saved in', async (s, location) => {
    await saveFixtures(s, location);
    assert.deepEqual(await s.listSnapshotIds({ location }), [...FIXTURE_IDS]);
  });

  test('never lists latest', async (s, location) => {
    await saveFixtures(s, location);
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
    assert.deepEqual(await s.listSnapshotIds({ location }), [...FIXTURE_IDS]);
  });

  test('startAfter is an exclusive cursor', async (s, location) => {
    await saveFixtures(s, location);
    assert.deepEqual(await s.listSnapshotIds({ location, startAfter: FIXTURE_IDS[0] }), [FIXTURE_IDS[1], FIXTURE_IDS[2]]);
    assert.deepEqual(await s.listSnapshotIds({ location, startAfter: FIXTURE_IDS[2] }), []);
  });

  test('limit caps the number of ids, from the oldest', async (s, location) => {
    await saveFixtures(s, location);
    assert.deepEqual(await s.listSnapshotIds({ location, limit: 2 }), [FIXTURE_IDS[0], FIXTURE_IDS[1]]);
    assert.deepEqual(await s.listSnapshotIds({ location, limit: 10 }), [...FIXTURE_IDS]);
  });

  test('startAfter and limit combine', async (s, location) => {
    await saveFixtures(s, location);
    assert.deepEqual(await s.listSnapshotIds({ location, startAfter: FIXTURE_IDS[0], limit: 1 }), [FIXTURE_IDS[1]]);
  });

  test('a location with no history gives []', async (s, location) => {
    assert.deepEqual(await s.listSnapshotIds({ location }), []);
    assert.deepEqual(await s.listSnapshotIds({ location, startAfter: FIXTURE_IDS[0], limit: 5 }), []);
  });

  test('limit <= 0 gives [] before startAfter is validated, as upstream', async (s, location) => {
    await saveFixtures(s, location);
    assert.deepEqual(await s.listSnapshotIds({ location, limit: 0 }), []);
    assert.deepEqual(await s.listSnapshotIds({ location, limit: -1, startAfter: 'not-a-uuid' }), []);
  });

  test("an invalid startAfter is rejected with upstream's message", async (s, location) => {
    await saveFixtures(s, location);
    for (const bad of ['../evil', 'not-a-uuid', '01956891-2b4c-4000-8abc-123456789abc', '1772000000000']) {
      await expectSessionError(s.listSnapshotIds({ location, startAfter: bad }), UUID_MESSAGE(bad));
    }
  });

  test('startAfter is compared case-insensitively', async (s, location) => {
    await saveFixtures(s, location);
    assert.deepEqual(await s.listSnapshotIds({ location, startAfter: FIXTURE_IDS[0].toUpperCase() }), [FIXTURE_IDS[1], FIXTURE_IDS[2]]);
  });

  test('an empty startAfter is ignored, as upstream', async (s, location) => {
    await saveFixtures(s, location);
    assert.deepEqual(await s.listSnapshotIds({ location, startAfter: '' }), [...FIXTURE_IDS]);
  });

  test('a cursor between stored ids works (it need not exist)', async (s, location) => {
    await saveFixtures(s, location);
    assert.deepEqual(await s.listSnapshotIds({ location, startAfter: '019c9bf1-1d34-7eef-9a3b-1c2d3e4f5a6a' }), [FIXTURE_IDS[1], FIXTURE_IDS[2]]);
  });

  test('paging with limit and startAfter returns every id once, in order', async (s, location) => {
    const generate = createUuidV7Generator({ now: () => 1_772_000_000_000 });
    const ids = Array.from({ length: 120 }, () => generate());
    const shuffled = [...ids].sort(() => Math.random() - 0.5);
    for (let i = 0; i < shuffled.length; i += 20) {
      await Promise.all(shuffled.slice(i, i + 20).map((id) => s.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf() })));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await s.listSnapshotIds({ location, limit: 7, ...(cursor === undefined ? {} : { startAfter: cursor }) });
      if (page.length === 0) break;
      assert.ok(page.length <= 7);
      seen.push(...page);
      cursor = page[page.length - 1];
    }
    assert.deepEqual(seen, ids);
  });
}
