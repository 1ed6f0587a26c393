/**
 * PostgresStorage behaviour beyond the shared conformance suite, on a real PostgreSQL 15:
 * configuration, the migration (idempotent, safe under concurrent first use, refuses a newer
 * schema), byte-exact bodies, keyset paging over many rows, one-transaction deleteSession, and
 * corrupt rows.
 */
import pg from 'pg';
import { afterAll, expect } from 'vitest';
import { SessionError } from '../../src/store/contract/errors.js';
import { openPostgresStorageFromUrl, PostgresStorage } from '../../src/store/backends/postgres/postgres-storage.js';
import type { Snapshot, SnapshotLocation } from '../../src/store/contract/types.js';
import { createUuidV7Generator } from '../../src/store/contract/uuid.js';
import { runCli } from '../support/cli.js';
import type { PgServerInfo } from '../support/servers.js';
import { dropSchema, pgStorageOn, serverSuite, uniqueName } from '../support/servers-stores.js';
import { expectSessionError } from './support/session-error.js';

const { describe, it, server } = serverSuite<PgServerInfo>('pg');
const schemas: string[] = [];

function freshSchema(): string {
  const schema = uniqueName('pgspec');
  schemas.push(schema);
  return schema;
}

function snapshot(data: Snapshot['data'] = {}, extra: Partial<Snapshot> = {}): Snapshot {
  return { scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data, appData: {}, ...extra };
}

function loc(sessionId = uniqueName('s').replace('_', '-')): SnapshotLocation {
  return { sessionId, scope: 'agent', scopeId: 'test-agent' };
}

async function withClient<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: server().url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

type Row = Record<string, unknown>;

async function rows(sql: string, params: unknown[] = []): Promise<Row[]> {
  return withClient(async (c) => (await c.query<Row>(sql, params)).rows);
}


afterAll(async () => {
  for (const schema of schemas) {
    try {
      await dropSchema(server().url, schema);
    } catch {
      // no server: nothing to clean
    }
  }
});

describe('PostgresStorage configuration (no server needed)', () => {
  it('needs exactly one of connectionString and pool', () => {
    expect(() => new PostgresStorage({})).toThrow(/exactly one of/);
    expect(() => new PostgresStorage({ connectionString: 'postgres://x', pool: new pg.Pool() })).toThrow(SessionError);
  });

  it('refuses schema and table-prefix names that are not plain lower-case SQL names', () => {
    for (const schema of ['Public', 'a-b', 'x"; DROP TABLE y; --', '', '1abc']) {
      expect(() => new PostgresStorage({ connectionString: 'postgres://x', schema })).toThrow(/schema name/);
    }
    expect(() => new PostgresStorage({ connectionString: 'postgres://x', tablePrefix: 'a b' })).toThrow(/table prefix/);
  });

  it('refuses a password in the URL and points to PGPASSWORD', async () => {
    await expectSessionError(openPostgresStorageFromUrl(new URL('postgres://u:secret@127.0.0.1/db'), {}), 'ERR_INVALID_OPTION', /PGPASSWORD/);
    await expectSessionError(openPostgresStorageFromUrl(new URL('postgres://u@127.0.0.1/db?schema=Bad-Name'), {}), 'ERR_INVALID_OPTION');
  });
});

describe('PostgresStorage on PostgreSQL', () => {
  it('opens from its URL form with ?schema= and creates the schema on first use', async () => {
    const schema = freshSchema();
    const s = await openPostgresStorageFromUrl(new URL(`${server().url}?schema=${schema}`), {});
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot({ url: true }) });
    expect((await s.loadSnapshot({ location: l }))?.data).toEqual({ url: true });
    const tables = await rows('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema]);
    expect(tables.map((r) => r.table_name)).toEqual(['cairn_history', 'cairn_latest', 'cairn_manifest', 'cairn_schema_version']);
    await s.close();
  });

  it('concurrent first use by separate stores migrates exactly once and every write lands', async () => {
    const schema = freshSchema();
    const stores = Array.from({ length: 6 }, () => pgStorageOn(server(), { schema }));
    const l = loc();
    await Promise.all(stores.map((s, i) => s.saveSnapshot({ location: l, snapshotId: `w${i}`, isLatest: false, snapshot: snapshot({ i }) })));
    expect(await stores[0]!.listSnapshotIds({ location: l })).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
    const versions = await rows(`SELECT version FROM "${schema}".cairn_schema_version`);
    expect(versions).toEqual([{ version: 1 }]);
    await Promise.all(stores.map((s) => s.close()));
    // A later store on the same schema finds it migrated and changes nothing.
    const later = pgStorageOn(server(), { schema });
    expect(await later.listSnapshotIds({ location: l })).toHaveLength(6);
    await later.close();
  });

  it('refuses a schema written by a newer cairn', async () => {
    const schema = freshSchema();
    const s = pgStorageOn(server(), { schema });
    await s.listSessions();
    await withClient((c) => c.query(`INSERT INTO "${schema}".cairn_schema_version (version) VALUES (99)`));
    const newer = pgStorageOn(server(), { schema });
    await expectSessionError(newer.listSessions(), 'ERR_UNSUPPORTED_BACKEND', /schema version 99, newer than this cairn understands/);
    await Promise.all([s.close(), newer.close()]);
  });

  it('stores bodies as text: a load returns exactly what was saved, key order and all', async () => {
    const schema = freshSchema();
    const s = pgStorageOn(server(), { schema });
    const l = loc();
    const snap = snapshot(
      { zebra: 1, apple: { z: [], a: {} }, nul: 'a\u0000b', emoji: '😀', lone: '\ud800', big: 2 ** 64, tiny: 5e-324, neg: -0.5 },
      { appData: { b: true, a: null } },
    );
    await s.saveSnapshot({ location: l, snapshotId: 'h1', isLatest: false, snapshot: snap });
    const loaded = await s.loadSnapshot({ location: l, snapshotId: 'h1' });
    expect(JSON.stringify(loaded)).toBe(JSON.stringify(snap));
    expect(Object.keys(loaded!.data)).toEqual(['zebra', 'apple', 'nul', 'emoji', 'lone', 'big', 'tiny', 'neg']);
    const [row] = await rows(`SELECT body FROM "${schema}".cairn_history`);
    expect(row?.body).toBe(JSON.stringify(snap, null, 2));
    await s.close();
  });

  it('pages 1500 history rows with a keyset cursor: every id once, in byte order', async () => {
    const schema = freshSchema();
    const s = pgStorageOn(server(), { schema });
    const l = loc();
    const generate = createUuidV7Generator({ now: () => 1_772_000_000_000 });
    const ids = Array.from({ length: 1500 }, () => generate());
    await s.listSessions(); // create the schema
    await withClient((c) =>
      c.query(
        `INSERT INTO "${schema}".cairn_history (session_id, scope, scope_id, snapshot_id, body) SELECT $1, 'agent', 'test-agent', id, $3 FROM unnest($2::text[]) AS id`,
        [l.sessionId, [...ids].reverse(), JSON.stringify(snapshot())],
      ),
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await s.listSnapshotIds({ location: l, limit: 100, ...(cursor ? { startAfter: cursor.toUpperCase() } : {}) });
      if (page.length === 0) break;
      seen.push(...page);
      cursor = page[page.length - 1];
    }
    expect(seen).toEqual(ids);
    expect(await s.listSnapshotIds({ location: l })).toEqual(ids);
    expect(await s.listSnapshotIds({ location: l, limit: Infinity })).toEqual(ids);
    expect(await s.listSnapshotIds({ location: l, limit: 2.5 })).toEqual(ids.slice(0, 2));
    const explained = await rows(
      `EXPLAIN SELECT snapshot_id FROM "${schema}".cairn_history WHERE session_id = $1 AND scope = 'agent' AND scope_id = 'test-agent' AND snapshot_id > $2 ORDER BY snapshot_id LIMIT 100`,
      [l.sessionId, ids[700]],
    );
    const plan = explained.map((x) => String(x['QUERY PLAN'])).join('\n');
    expect(plan).toMatch(/Index (Only )?Scan using cairn_history_pkey/);
    await s.close();
  });

  it('deleteSession is one transaction: when it cannot finish, nothing of the session is gone', async () => {
    const schema = freshSchema();
    const s = pgStorageOn(server(), { schema, statementTimeoutMs: 500 });
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'h1', isLatest: false, snapshot: snapshot() });
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot() });
    await s.saveManifest({ location: l, manifest: { schemaVersion: '1.0', updatedAt: '2026-01-01T00:00:00.000Z' } });
    // Another session holds the manifest row, so the last DELETE of the three times out.
    const blocker = new pg.Client({ connectionString: server().url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT * FROM "${schema}".cairn_manifest WHERE session_id = $1 FOR UPDATE`, [l.sessionId]);
    await expectSessionError(s.deleteSession({ sessionId: l.sessionId }), 'ERR_IO', /Failed to delete session/);
    await blocker.query('ROLLBACK');
    await blocker.end();
    expect(await s.listSnapshotIds({ location: l })).toEqual(['h1']);
    expect(await s.loadSnapshot({ location: l })).not.toBeNull();
    await s.deleteSession({ sessionId: l.sessionId });
    expect(await s.listSessions()).toEqual([]);
    await s.close();
  });

  it('a corrupt row is a SessionError on load and an issue in verify', async () => {
    const schema = freshSchema();
    const s = pgStorageOn(server(), { schema });
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot() });
    await s.saveSnapshot({ location: l, snapshotId: 'h1', isLatest: false, snapshot: snapshot() });
    await s.saveManifest({ location: l, manifest: { schemaVersion: '1.0', updatedAt: 'now' } });
    await withClient(async (c) => {
      await c.query(`UPDATE "${schema}".cairn_latest SET body = '{not json'`);
      await c.query(`UPDATE "${schema}".cairn_history SET body = '{"hello":"world"}'`);
      await c.query(`UPDATE "${schema}".cairn_manifest SET body = '[]'`);
    });
    await expectSessionError(s.loadSnapshot({ location: l }), 'ERR_INVALID_JSON', new RegExp(`postgres:${schema}/${l.sessionId}/agent/test-agent/latest`));
    await expectSessionError(s.loadSnapshot({ location: l, snapshotId: 'h1' }), 'ERR_CORRUPT');
    await expectSessionError(s.loadManifest({ location: l }), 'ERR_CORRUPT');
    const report = await s.verify();
    expect(report.ok).toBe(false);
    expect(report.checked).toBe(3);
    expect(report.issues.map((i) => i.kind).sort()).toEqual(['invalid-json', 'invalid-manifest', 'invalid-snapshot']);
    await s.close();
  });

  it("uses a caller's pool and leaves it open on close", async () => {
    const schema = freshSchema();
    const pool = new pg.Pool({ connectionString: server().url, max: 2 });
    const s = new PostgresStorage({ pool, schema });
    await s.saveSnapshot({ location: loc(), snapshotId: 'latest', isLatest: true, snapshot: snapshot() });
    await s.close();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it('table prefixes keep two stores in one schema apart', async () => {
    const schema = freshSchema();
    const a = pgStorageOn(server(), { schema, tablePrefix: 'a_' });
    const b = pgStorageOn(server(), { schema, tablePrefix: 'b_' });
    const l = loc();
    await a.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot({ who: 'a' }) });
    expect(await b.loadSnapshot({ location: l })).toBeNull();
    expect((await a.loadSnapshot({ location: l }))?.data).toEqual({ who: 'a' });
    await Promise.all([a.close(), b.close()]);
  });
});

describe('cairn store --store postgres://… (the built CLI against the server)', () => {
  it('lists, measures, prunes, verifies and deletes a session', async () => {
    const schema = freshSchema();
    const s = pgStorageOn(server(), { schema });
    const l = loc();
    const ids = ['019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b', '019c9bf1-1d34-7eef-9a3b-1c2d3e4f5a6b', '019c9bf1-24bb-7eef-aa3b-1c2d3e4f5a6b'];
    for (const id of ids) await s.saveSnapshot({ location: l, snapshotId: id, isLatest: false, snapshot: snapshot() });
    await s.close();
    const url = `${server().url}?schema=${schema}`;
    const list = runCli(['store', 'list', '--store', url, '--session', l.sessionId, '--json']);
    expect(list.status, list.stderr).toBe(0);
    for (const id of ids) expect(list.stdout).toContain(id);
    const prune = runCli(['store', 'prune', '--store', url, '--session', l.sessionId, '--scope', 'agent', '--scope-id', 'test-agent', '--keep-last', '1', '--json']);
    expect(prune.status, prune.stderr).toBe(0);
    const after = pgStorageOn(server(), { schema });
    expect(await after.listSnapshotIds({ location: l })).toEqual([ids[2]]);
    const verify = runCli(['store', 'verify', '--store', url]);
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    const del = runCli(['store', 'delete-session', '--store', url, '--session', l.sessionId]);
    expect(del.status, del.stderr).toBe(0);
    expect(await after.listSessions()).toEqual([]);
    await after.close();
    const down = runCli(['store', 'list', '--store', 'postgres://postgres@127.0.0.1:9/cairn']);
    expect(down.status).toBe(1);
    expect(down.stderr).toContain('ERR_BACKEND_UNAVAILABLE');
  });
});
