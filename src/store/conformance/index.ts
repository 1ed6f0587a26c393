/**
 * The backend conformance suite for `SnapshotStorage`, shipped as `cairn/conformance` so anyone
 * can check their own backend. It registers behaviour tests on whatever runner it is given
 * (vitest, jest, node:test) and asserts with node:assert only; it never imports a test runner.
 *
 *     import { describe, it } from 'vitest';
 *     import { runSnapshotStorageConformance } from 'cairn/conformance';
 *     runSnapshotStorageConformance({ name: 'my store', create: async () => ({ storage: new MyStorage() }), test: { describe, it } });
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ManagedSnapshotStorage, Snapshot, SnapshotLocation, SnapshotStorage } from '../contract/types.js';
import { createUuidV7Generator, uuidV7 } from '../contract/uuid.js';

export interface ConformanceTestApi {
  describe: (name: string, fn: () => void) => unknown;
  it: (name: string, fn: () => Promise<void>) => unknown;
  beforeEach?: (fn: () => unknown) => unknown;
  afterEach?: (fn: () => unknown) => unknown;
}

export interface ConformanceBackend {
  storage: SnapshotStorage;
  /** Called after each test, even a failed one. */
  cleanup?: () => Promise<void>;
}

export interface ConformanceOptions {
  /** Shown in the suite name. */
  name: string;
  /** A fresh, empty store for one test. */
  create: () => Promise<ConformanceBackend>;
  test: ConformanceTestApi;
  features?: {
    /** The storage is a `ManagedSnapshotStorage` (prune, verify, du, listSessions, listLocations). */
    upkeep?: boolean;
    /** Run the parallel-writer tests (default true). */
    concurrency?: boolean;
  };
}

const IDENTIFIER_MESSAGE = (id: string) => `Identifier '${id}' can only contain lowercase letters, numbers, hyphens, and underscores`;
const UUID_MESSAGE = (id: string) => `'${id}' is not a valid UUID v7 snapshot ID`;

/** Ids that must never pass as session, scope or snapshot ids (path tricks, case, NUL, unicode, size). */
export const HOSTILE_IDENTIFIERS: readonly string[] = [
  '',
  '.',
  '..',
  '../evil',
  'a/b',
  'a\\b',
  'a\0b',
  'UPPER',
  'with space',
  'café',
  '😀',
  'a.json',
  `A${'a'.repeat(10_000)}`,
];

/** Upstream's three fixture ids (out of order on purpose in tests). */
const FIXTURE_IDS = ['019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b', '019c9bf1-1d34-7eef-9a3b-1c2d3e4f5a6b', '019c9bf1-24bb-7eef-aa3b-1c2d3e4f5a6b'] as const;

function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

function snapshotOf(data: Snapshot['data'] = {}, extra: Partial<Snapshot> = {}): Snapshot {
  return { scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data, appData: {}, ...extra };
}

async function expectSessionError(promise: Promise<unknown>, message?: string | RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof Error, `expected an Error, got ${String(e)}`);
    assert.equal(e.name, 'SessionError', `expected a SessionError, got ${e.name}: ${e.message}`);
    if (typeof message === 'string') assert.equal(e.message, message);
    else if (message !== undefined) assert.match(e.message, message);
    return true;
  });
}

/** Registers the conformance tests for one backend. */
export function runSnapshotStorageConformance(options: ConformanceOptions): void {
  const { describe, it } = options.test;
  const features = { upkeep: false, concurrency: true, ...options.features };

  /** One test on a fresh store, in a fresh session. */
  const test = (name: string, body: (storage: SnapshotStorage, location: SnapshotLocation) => Promise<void>): void => {
    it(name, async () => {
      const backend = await options.create();
      try {
        await body(backend.storage, { sessionId: uniqueId('conf'), scope: 'agent', scopeId: 'test-agent' });
      } finally {
        await backend.cleanup?.();
      }
    });
  };
  const managed = (storage: SnapshotStorage) => storage as ManagedSnapshotStorage;

  describe(`SnapshotStorage conformance: ${options.name}`, () => {
    describe('saveSnapshot and loadSnapshot', () => {
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
    });

    describe('listSnapshotIds', () => {
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
    });

    describe('deleteSession', () => {
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
    });

    describe('manifest', () => {
      test('saveManifest then loadManifest round-trips', async (s, location) => {
        const manifest = { schemaVersion: '1.0', updatedAt: '2026-03-11T10:00:00.000Z' };
        await s.saveManifest({ location, manifest });
        assert.deepEqual(await s.loadManifest({ location }), manifest);
      });

      test("loadManifest gives a default {schemaVersion: '1.0', updatedAt: now} when none is stored", async (s, location) => {
        const before = Date.now();
        const manifest = await s.loadManifest({ location });
        assert.equal(manifest.schemaVersion, '1.0');
        assert.equal(typeof manifest.updatedAt, 'string');
        const t = Date.parse(manifest.updatedAt);
        assert.ok(!Number.isNaN(t) && t >= before - 1000 && t <= Date.now() + 1000, `updatedAt ${manifest.updatedAt} is not now`);
      });

      test('rejects a manifest without string schemaVersion and updatedAt', async (s, location) => {
        for (const manifest of [null, {}, { schemaVersion: 1, updatedAt: 'x' }, { schemaVersion: '1.0' }]) {
          await expectSessionError(s.saveManifest({ location, manifest: manifest as never }));
        }
      });
    });

    describe('validation of ids and scopes', () => {
      test("rejects hostile session ids in every method with upstream's message", async (s, location) => {
        for (const sessionId of HOSTILE_IDENTIFIERS) {
          const loc = { ...location, sessionId };
          const msg = IDENTIFIER_MESSAGE(sessionId);
          await expectSessionError(s.saveSnapshot({ location: loc, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() }), msg);
          await expectSessionError(s.loadSnapshot({ location: loc }), msg);
          await expectSessionError(s.listSnapshotIds({ location: loc }), msg);
          await expectSessionError(s.deleteSession({ sessionId }), msg);
          await expectSessionError(s.loadManifest({ location: loc }), msg);
          await expectSessionError(s.saveManifest({ location: loc, manifest: { schemaVersion: '1.0', updatedAt: 'now' } }), msg);
        }
      });

      test("rejects hostile scope ids with upstream's message", async (s, location) => {
        for (const scopeId of HOSTILE_IDENTIFIERS) {
          const loc = { ...location, scopeId };
          const msg = IDENTIFIER_MESSAGE(scopeId);
          await expectSessionError(s.saveSnapshot({ location: loc, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf() }), msg);
          await expectSessionError(s.loadSnapshot({ location: loc }), msg);
          await expectSessionError(s.listSnapshotIds({ location: loc }), msg);
          await expectSessionError(s.loadManifest({ location: loc }), msg);
        }
      });

      test('rejects scopes other than agent and multiAgent', async (s, location) => {
        for (const scope of ['Agent', 'multiagent', 'other', '', '../agent', 'agent/..', 'a\0']) {
          const loc = { ...location, scope } as unknown as SnapshotLocation;
          await expectSessionError(s.saveSnapshot({ location: loc, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() }), /Scope .* is not valid/);
          await expectSessionError(s.loadSnapshot({ location: loc }), /Scope .* is not valid/);
          await expectSessionError(s.listSnapshotIds({ location: loc }), /Scope .* is not valid/);
          await expectSessionError(s.loadManifest({ location: loc }), /Scope .* is not valid/);
        }
      });

      test("rejects hostile history ids on save and load with upstream's message", async (s, location) => {
        for (const snapshotId of HOSTILE_IDENTIFIERS) {
          const msg = IDENTIFIER_MESSAGE(snapshotId);
          await expectSessionError(s.saveSnapshot({ location, snapshotId, isLatest: false, snapshot: snapshotOf() }), msg);
          await expectSessionError(s.loadSnapshot({ location, snapshotId }), msg);
        }
        assert.deepEqual(await s.listSnapshotIds({ location }), []);
      });
    });

    if (features.concurrency) {
      describe('concurrency', () => {
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
      });
    }

    if (features.upkeep) {
      describe('upkeep (prune, verify, du, listSessions, listLocations)', () => {
        const fill = async (s: SnapshotStorage, location: SnapshotLocation, count: number, createdAt?: (i: number) => string): Promise<string[]> => {
          const ids = Array.from({ length: count }, () => uuidV7());
          for (const [i, id] of ids.entries()) {
            await s.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf({ i }, createdAt ? { createdAt: createdAt(i) } : {}) });
          }
          return ids;
        };

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

        test('listSessions and listLocations show what was written', async (s, location) => {
          const multi: SnapshotLocation = { sessionId: location.sessionId, scope: 'multiAgent', scopeId: 'graph-1' };
          const second: SnapshotLocation = { ...location, sessionId: uniqueId('second') };
          await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
          await s.saveSnapshot({ location: multi, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf({}, { scope: 'multiAgent' }) });
          await s.saveManifest({ location: second, manifest: { schemaVersion: '1.0', updatedAt: 'now' } });
          const sessions = await managed(s).listSessions();
          assert.ok(sessions.includes(location.sessionId) && sessions.includes(second.sessionId));
          assert.deepEqual(sessions, [...sessions].sort());
          assert.deepEqual(await managed(s).listLocations({ sessionId: location.sessionId }), [location, multi]);
          assert.deepEqual(await managed(s).listLocations({ sessionId: uniqueId('absent') }), []);
          await s.deleteSession({ sessionId: location.sessionId });
          assert.ok(!(await managed(s).listSessions()).includes(location.sessionId));
        });

        test('verify passes on a clean store and counts what it checked', async (s, location) => {
          await fill(s, location, 3);
          await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
          await s.saveManifest({ location, manifest: { schemaVersion: '1.0', updatedAt: 'now' } });
          const report = await managed(s).verify({ sessionId: location.sessionId });
          assert.deepEqual(report.issues, []);
          assert.equal(report.ok, true);
          assert.equal(report.checked, 5);
        });

        test('du reports history count, latest and manifest presence, and bytes per location', async (s, location) => {
          await fill(s, location, 3);
          await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
          const multi: SnapshotLocation = { sessionId: location.sessionId, scope: 'multiAgent', scopeId: 'graph-1' };
          await s.saveManifest({ location: multi, manifest: { schemaVersion: '1.0', updatedAt: 'now' } });
          const usage = await managed(s).du({ sessionId: location.sessionId });
          assert.equal(usage.length, 2);
          const [agent, orchestrator] = usage;
          assert.deepEqual({ ...agent, bytes: 0 }, { ...location, history: 3, hasLatest: true, hasManifest: false, bytes: 0 });
          assert.deepEqual({ ...orchestrator, bytes: 0 }, { ...multi, history: 0, hasLatest: false, hasManifest: true, bytes: 0 });
          assert.ok(agent!.bytes > 0 && orchestrator!.bytes > 0);
          assert.ok(agent!.bytes > orchestrator!.bytes);
        });

        test('loadManifest does not persist the default', async (s, location) => {
          await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
          await s.loadManifest({ location });
          const [usage] = await managed(s).du({ sessionId: location.sessionId });
          assert.equal(usage?.hasManifest, false);
        });
      });
    }
  });
}
