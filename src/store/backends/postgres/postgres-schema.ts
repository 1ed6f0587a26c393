/**
 * The PostgreSQL schema of the snapshot store and its migration, applied once per store on first
 * use. Safe under concurrent first use: every migrator takes the same transaction-scoped advisory
 * lock before looking at the version table, so exactly one of them creates the tables.
 */
import { createHash } from 'node:crypto';
import { SessionError } from '../../contract/errors.js';

/** The schema version this code writes and reads. */
export const STORE_SCHEMA_VERSION = 1;

const SQL_NAME = /^[a-z_][a-z0-9_]{0,40}$/;

export interface PgTableNames {
  schema: string;
  /** Quoted, schema-qualified names ready to splice into SQL. */
  version: string;
  latest: string;
  history: string;
  manifest: string;
  /** The advisory-lock key of this schema + prefix (64-bit, as a decimal string). */
  lockKey: string;
}

/** Checks `schema` and `tablePrefix` (they are spliced into SQL, so only plain lower-case names). */
export function tableNames(schema: string, tablePrefix: string): PgTableNames {
  if (!SQL_NAME.test(schema)) {
    throw new SessionError(`PostgreSQL schema name '${schema}' is not allowed; use lower-case letters, digits and _ (e.g. 'cairn')`, {
      code: 'ERR_INVALID_OPTION',
    });
  }
  if (tablePrefix !== '' && !/^[a-z_][a-z0-9_]{0,30}$/.test(tablePrefix)) {
    throw new SessionError(`PostgreSQL table prefix '${tablePrefix}' is not allowed; use lower-case letters, digits and _`, {
      code: 'ERR_INVALID_OPTION',
    });
  }
  const q = (table: string): string => `"${schema}"."${tablePrefix}${table}"`;
  const digest = createHash('sha256').update(`cairn-store\u0000${schema}\u0000${tablePrefix}`).digest();
  return {
    schema,
    version: q('schema_version'),
    latest: q('latest'),
    history: q('history'),
    manifest: q('manifest'),
    lockKey: digest.readBigInt64BE(0).toString(),
  };
}

/**
 * Bodies are `text`, not `jsonb`: jsonb reorders keys and rejects `\u0000`, and a load must
 * return exactly what was saved. Ids use the "C" collation so ORDER BY is byte order, the same
 * as the file store's listing; the primary keys are the keyset-pagination index.
 */
function version1(t: PgTableNames): string[] {
  const location = `session_id text COLLATE "C" NOT NULL, scope text COLLATE "C" NOT NULL, scope_id text COLLATE "C" NOT NULL`;
  return [
    `CREATE TABLE IF NOT EXISTS ${t.latest} (${location}, body text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (session_id, scope, scope_id))`,
    `CREATE TABLE IF NOT EXISTS ${t.manifest} (${location}, body text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (session_id, scope, scope_id))`,
    `CREATE TABLE IF NOT EXISTS ${t.history} (${location}, snapshot_id text COLLATE "C" NOT NULL, body text NOT NULL,
       created_at text, stored_at timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (session_id, scope, scope_id, snapshot_id))`,
  ];
}

export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** Brings the schema to STORE_SCHEMA_VERSION; call inside no transaction (it opens its own). */
export async function migrate(client: Queryable, t: PgTableNames): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [t.lockKey]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${t.schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t.version} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query(`SELECT coalesce(max(version), 0) AS v FROM ${t.version}`);
    const current = Number(rows[0]?.v ?? 0);
    if (current > STORE_SCHEMA_VERSION) {
      throw new SessionError(
        `The store in schema '${t.schema}' has schema version ${current}, newer than this cairn understands (${STORE_SCHEMA_VERSION}); upgrade cairn`,
        { code: 'ERR_UNSUPPORTED_BACKEND' },
      );
    }
    if (current < 1) {
      for (const statement of version1(t)) await client.query(statement);
      await client.query(`INSERT INTO ${t.version} (version) VALUES (1)`);
    }
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
