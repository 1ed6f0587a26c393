/**
 * `SnapshotStorage` on PostgreSQL: the file store's logical model (latest, manifest, immutable
 * history per session/scope/scopeId) in three tables. `pg` is an optional peer dependency,
 * imported only when a store first connects.
 */
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { NETWORK_ERROR_CODES, SessionError } from '../../contract/errors.js';
import { migrate, tableNames, type PgTableNames, type Queryable } from './postgres-schema.js';
import { selectPrunable, type PrunePlan } from '../../contract/retention.js';
import { byteOrder, documentIssue, snapshotExistsError } from '../../contract/rules.js';
import type { PruneResult, Scope, Snapshot, SnapshotLocation, StoreUsage, VerifyIssue, VerifyReport } from '../../contract/types.js';
import { SnapshotStorageBase, type HistoryPage, type StoredText } from '../base.js';

/** The part of a `pg.Pool` the store uses. */
export type PgPoolLike = Pick<Pool, 'connect' | 'query'>;

export interface PostgresStorageConfig {
  /** `postgres://user@host:port/db`; the password comes from PGPASSWORD, not the URL. */
  connectionString?: string;
  /** A pool you own: the store never ends it. Give exactly one of `pool` and `connectionString`. */
  pool?: PgPoolLike;
  /** Schema holding the tables (default `public`); created if missing. */
  schema?: string;
  /** Prefix of the table names (default `cairn_`). */
  tablePrefix?: string;
  /** Extra `pg.Pool` options when the store makes the pool (password, ssl, max, …). */
  poolOptions?: PoolConfig;
  /** Timeouts in ms: to get a connection (default 5 000) and per statement (default 15 000). */
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
}

type PgModule = typeof import('pg');

const VERIFY_BATCH = 500;
/** SQLSTATE classes meaning "no usable connection": connection exceptions, operator intervention, and the client's own errors. */
const UNAVAILABLE = /^(08|57P0[1-3])/;

function pgCode(e: unknown): string {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : '';
}

function isUnavailable(e: unknown): boolean {
  const code = pgCode(e);
  if (UNAVAILABLE.test(code) || NETWORK_ERROR_CODES.has(code)) return true;
  const message = e instanceof Error ? e.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection timeout|Client has encountered a connection error/i.test(message);
}

export class PostgresStorage extends SnapshotStorageBase {
  readonly schema: string;
  private readonly t: PgTableNames;
  private readonly config: PostgresStorageConfig;
  private readonly ownsPool: boolean;
  private pool: PgPoolLike | undefined;
  private opening: Promise<PgPoolLike> | undefined;
  private ready: Promise<void> | undefined;

  constructor(config: PostgresStorageConfig) {
    super();
    if (typeof config !== 'object' || config === null || (config.pool === undefined) === (config.connectionString === undefined)) {
      throw new SessionError('PostgresStorage needs exactly one of { connectionString } or { pool }', { code: 'ERR_INVALID_OPTION' });
    }
    this.config = config;
    this.schema = config.schema ?? 'public';
    this.t = tableNames(this.schema, config.tablePrefix ?? 'cairn_');
    this.pool = config.pool;
    this.ownsPool = config.pool === undefined;
  }

  // ---- SnapshotStorage ----

  protected async writeLatest(location: SnapshotLocation, body: string): Promise<void> {
    await this.upsert(this.t.latest, location, 'latest', body);
  }

  protected async createHistory(location: SnapshotLocation, snapshotId: string, body: string, snapshot: Snapshot): Promise<void> {
    const where = this.where(location, snapshotId);
    try {
      await this.run(`Failed to write ${where}`, (c) =>
        c.query(`INSERT INTO ${this.t.history} (session_id, scope, scope_id, snapshot_id, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
          location.sessionId,
          location.scope,
          location.scopeId,
          snapshotId,
          body,
          snapshot.createdAt,
        ]),
      );
    } catch (e) {
      if (e instanceof SessionError && pgCode(e.cause) === '23505') {
        throw snapshotExistsError(snapshotId, where, e.cause);
      }
      throw e;
    }
  }

  protected async readSnapshot(location: SnapshotLocation, snapshotId: string | undefined): Promise<StoredText | null> {
    const where = this.where(location, snapshotId ?? 'latest');
    const rows = await this.run(`Failed to read ${where}`, (c) =>
      snapshotId === undefined
        ? c.query(`SELECT body FROM ${this.t.latest} WHERE session_id = $1 AND scope = $2 AND scope_id = $3`, [
            location.sessionId,
            location.scope,
            location.scopeId,
          ])
        : c.query(`SELECT body FROM ${this.t.history} WHERE session_id = $1 AND scope = $2 AND scope_id = $3 AND snapshot_id = $4`, [
            location.sessionId,
            location.scope,
            location.scopeId,
            snapshotId,
          ]),
    );
    const body = rows.rows[0]?.body;
    return typeof body === 'string' && body !== '' ? { text: body, where } : null;
  }

  protected async historyPage(location: SnapshotLocation, page: HistoryPage): Promise<string[]> {
    // Keyset pagination on the primary key: the cost is one page, however long the history.
    const { rows } = await this.run(`Failed to list snapshots for session ${location.sessionId}`, (c) =>
      c.query(
        `SELECT snapshot_id FROM ${this.t.history}
         WHERE session_id = $1 AND scope = $2 AND scope_id = $3 AND ($4::text IS NULL OR snapshot_id > $4::text)
         ORDER BY snapshot_id LIMIT $5`,
        [location.sessionId, location.scope, location.scopeId, page.after ?? null, page.limit === undefined || !Number.isFinite(page.limit) ? null : Math.floor(page.limit)],
      ),
    );
    return rows.map((r) => r.snapshot_id as string);
  }

  protected async removeSession(sessionId: string): Promise<void> {
    await this.run(`Failed to delete session ${sessionId}`, async (c) => {
      await c.query('BEGIN');
      try {
        for (const table of [this.t.history, this.t.latest, this.t.manifest]) {
          await c.query(`DELETE FROM ${table} WHERE session_id = $1`, [sessionId]);
        }
        await c.query('COMMIT');
      } catch (e) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  protected async readManifest(location: SnapshotLocation): Promise<StoredText | null> {
    const where = this.where(location, 'manifest');
    const { rows } = await this.run(`Failed to read ${where}`, (c) =>
      c.query(`SELECT body FROM ${this.t.manifest} WHERE session_id = $1 AND scope = $2 AND scope_id = $3`, [
        location.sessionId,
        location.scope,
        location.scopeId,
      ]),
    );
    const body = rows[0]?.body;
    return typeof body === 'string' && body !== '' ? { text: body, where } : null;
  }

  protected async writeManifest(location: SnapshotLocation, body: string): Promise<void> {
    await this.upsert(this.t.manifest, location, 'manifest', body);
  }

  // ---- upkeep ----

  async listSessions(): Promise<string[]> {
    const { rows } = await this.run('Failed to list sessions', (c) =>
      c.query(
        `SELECT session_id FROM ${this.t.latest} UNION SELECT session_id FROM ${this.t.manifest}
         UNION SELECT session_id FROM ${this.t.history} ORDER BY 1`,
      ),
    );
    return rows.map((r) => r.session_id as string).sort(byteOrder);
  }

  protected async locationsOf(sessionId: string): Promise<SnapshotLocation[]> {
    const cols = 'session_id, scope, scope_id';
    const { rows } = await this.run(`Failed to list locations of session ${sessionId}`, (c) =>
      c.query(
        `SELECT ${cols} FROM ${this.t.latest} WHERE session_id = $1 UNION SELECT ${cols} FROM ${this.t.manifest} WHERE session_id = $1
         UNION SELECT ${cols} FROM ${this.t.history} WHERE session_id = $1 ORDER BY 2, 3`,
        [sessionId],
      ),
    );
    return rows.map((r) => ({ sessionId: r.session_id as string, scope: r.scope as Scope, scopeId: r.scope_id as string }));
  }

  protected async pruneHistory(location: SnapshotLocation, plan: PrunePlan, dryRun: boolean): Promise<PruneResult> {
    const key = [location.sessionId, location.scope, location.scopeId];
    return this.run(`Failed to prune ${this.where(location, 'history')}`, async (c) => {
      await c.query('BEGIN');
      try {
        // Lock the location's history rows so a concurrent prune sees the same set.
        const { rows } = await c.query(
          `SELECT snapshot_id, created_at FROM ${this.t.history} WHERE session_id = $1 AND scope = $2 AND scope_id = $3
           ORDER BY snapshot_id FOR UPDATE`,
          key,
        );
        const createdAt = new Map(rows.map((r) => [r.snapshot_id as string, (r.created_at as string | null) ?? undefined]));
        const ids = [...createdAt.keys()];
        const doomed = await selectPrunable(ids, plan, (id) => Promise.resolve(createdAt.get(id)));
        if (!dryRun && doomed.length > 0) {
          await c.query(`DELETE FROM ${this.t.history} WHERE session_id = $1 AND scope = $2 AND scope_id = $3 AND snapshot_id = ANY($4::text[])`, [
            ...key,
            doomed,
          ]);
        }
        await c.query('COMMIT');
        return { location, deleted: doomed, kept: ids.length - doomed.length, dryRun };
      } catch (e) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  protected async verifyDocuments(sessionId: string | undefined): Promise<VerifyReport> {
    const issues: VerifyIssue[] = [];
    let checked = 0;
    const check = (where: string, body: unknown, kind: 'snapshot' | 'manifest'): void => {
      checked++;
      const found = documentIssue(typeof body === 'string' ? body : '', where, kind);
      if (found !== undefined) issues.push(found);
    };
    const filter = sessionId === undefined ? '' : 'WHERE session_id = $1';
    const args = sessionId === undefined ? [] : [sessionId];
    await this.run('Failed to verify the store', async (c) => {
      for (const [table, name, kind] of [
        [this.t.latest, 'latest', 'snapshot'],
        [this.t.manifest, 'manifest', 'manifest'],
      ] as const) {
        const { rows } = await c.query(`SELECT session_id, scope, scope_id, body FROM ${table} ${filter}`, args);
        for (const r of rows) check(this.where(locationOf(r), name), r.body, kind);
      }
      // History can be large: walk it in keyset pages rather than one huge result.
      let last: string[] | undefined;
      for (;;) {
        const cursor = last === undefined ? 'TRUE' : `(session_id, scope, scope_id, snapshot_id) > ($${args.length + 1}, $${args.length + 2}, $${args.length + 3}, $${args.length + 4})`;
        const { rows } = await c.query(
          `SELECT session_id, scope, scope_id, snapshot_id, body FROM ${this.t.history}
           WHERE ${filter === '' ? 'TRUE' : 'session_id = $1'} AND ${cursor}
           ORDER BY session_id, scope, scope_id, snapshot_id LIMIT ${VERIFY_BATCH}`,
          [...args, ...(last ?? [])],
        );
        for (const r of rows) check(this.where(locationOf(r), r.snapshot_id as string), r.body, 'snapshot');
        if (rows.length < VERIFY_BATCH) break;
        const end = rows[rows.length - 1]!;
        last = [end.session_id as string, end.scope as string, end.scope_id as string, end.snapshot_id as string];
      }
    });
    return { ok: issues.length === 0, checked, issues };
  }

  protected async usage(sessionId: string | undefined): Promise<StoreUsage[]> {
    const filter = sessionId === undefined ? '' : 'WHERE session_id = $1';
    const args = sessionId === undefined ? [] : [sessionId];
    const { rows } = await this.run('Failed to measure the store', (c) =>
      c.query(
        `SELECT session_id, scope, scope_id, sum(history)::int AS history, bool_or(latest) AS has_latest,
                bool_or(manifest) AS has_manifest, sum(bytes)::bigint AS bytes
         FROM (
           SELECT session_id, scope, scope_id, count(*) AS history, false AS latest, false AS manifest, sum(octet_length(body)) AS bytes
             FROM ${this.t.history} ${filter} GROUP BY 1, 2, 3
           UNION ALL SELECT session_id, scope, scope_id, 0, true, false, octet_length(body) FROM ${this.t.latest} ${filter}
           UNION ALL SELECT session_id, scope, scope_id, 0, false, true, octet_length(body) FROM ${this.t.manifest} ${filter}
         ) AS parts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        args,
      ),
    );
    return rows.map((r) => ({
      ...locationOf(r),
      history: Number(r.history),
      hasLatest: r.has_latest === true,
      hasManifest: r.has_manifest === true,
      bytes: Number(r.bytes),
    }));
  }

  override async close(): Promise<void> {
    const pool = this.pool;
    this.ready = undefined;
    if (this.ownsPool && pool !== undefined) {
      this.pool = undefined;
      await (pool as Pool).end();
    }
  }

  // ---- internals ----

  /** The one row of a location in `table` (latest or manifest), replaced in one statement, so concurrent saves never interleave: the row is one of them, whole. */
  private async upsert(table: string, location: SnapshotLocation, what: string, body: string): Promise<void> {
    await this.run(`Failed to write ${this.where(location, what)}`, (c) =>
      c.query(
        `INSERT INTO ${table} (session_id, scope, scope_id, body) VALUES ($1, $2, $3, $4)
         ON CONFLICT (session_id, scope, scope_id) DO UPDATE SET body = EXCLUDED.body, updated_at = now()`,
        [location.sessionId, location.scope, location.scopeId, body],
      ),
    );
  }

  private where(location: SnapshotLocation, what: string): string {
    return `postgres:${this.schema}/${location.sessionId}/${location.scope}/${location.scopeId}/${what}`;
  }

  /** One pool per store, even when the first calls arrive together. */
  private getPool(): Promise<PgPoolLike> {
    if (this.pool !== undefined) return Promise.resolve(this.pool);
    this.opening ??= this.createPool().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async createPool(): Promise<PgPoolLike> {
    let pg: PgModule;
    try {
      pg = await import('pg');
    } catch (e) {
      throw new SessionError('PostgresStorage needs the pg driver, which is an optional peer dependency: run `npm install pg`', {
        code: 'ERR_MISSING_DEPENDENCY',
        cause: e,
      });
    }
    const PoolCtor = (pg as unknown as { default?: PgModule }).default?.Pool ?? pg.Pool;
    const statementTimeout = this.config.statementTimeoutMs ?? 15_000;
    const pool = new PoolCtor({
      connectionString: this.config.connectionString,
      connectionTimeoutMillis: this.config.connectTimeoutMs ?? 5_000,
      statement_timeout: statementTimeout,
      // The client-side bound too: a server that stops answering must not hang a call.
      query_timeout: statementTimeout + 5_000,
      max: 10,
      ...this.config.poolOptions,
    });
    // An idle connection dropped by the server must not crash the process; the next call reports it.
    pool.on('error', () => undefined);
    this.pool = pool;
    return pool;
  }

  /**
   * The schema, created once per store (and again after a failed attempt), on the connection the
   * first caller already holds: taking a second one could deadlock a pool full of waiting callers.
   */
  private ensureSchema(client: PoolClient): Promise<void> {
    this.ready ??= migrate(client, this.t).catch((e: unknown) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  /**
   * Runs `fn` on one pooled connection. Failing to get a connection is retried with bounded
   * backoff (nothing was sent yet, so it is always safe); a failure after that is reported, not
   * retried, because a history insert whose commit may have landed cannot be blindly repeated.
   */
  private async run<T>(what: string, fn: (client: Queryable) => Promise<T>): Promise<T> {
    let pool: PgPoolLike;
    try {
      pool = await this.getPool();
    } catch (e) {
      if (e instanceof SessionError) throw e;
      throw this.failure(what, e);
    }
    let client: PoolClient | undefined;
    // pg emits 'error' on a checked-out client whose server goes away between queries; with no
    // listener that would crash the process. Remember it and drop the connection on release.
    let broken: Error | undefined;
    const onError = (e: Error): void => {
      broken ??= e;
    };
    try {
      client = await connectWithRetry(pool);
      client.on('error', onError);
      await this.ensureSchema(client);
      return await fn(client);
    } catch (e) {
      if (client !== undefined && isUnavailable(e)) broken ??= e as Error;
      if (e instanceof SessionError) throw e;
      throw this.failure(what, e);
    } finally {
      if (client !== undefined) {
        client.removeListener('error', onError);
        // A broken connection is destroyed, not handed back to the pool.
        client.release(broken);
      }
    }
  }

  private failure(what: string, e: unknown): SessionError {
    const message = e instanceof Error ? e.message : String(e);
    const code = pgCode(e);
    if (isUnavailable(e)) {
      return new SessionError(`${what}: the PostgreSQL server did not answer (${code ? `${code}: ` : ''}${message}); check that it is running and reachable`, {
        code: 'ERR_BACKEND_UNAVAILABLE',
        cause: e,
      });
    }
    const hint = code === '28P01' || code === '28000' ? '; check the user and PGPASSWORD' : code === '3D000' ? '; create the database first' : '';
    return new SessionError(`${what}: ${code ? `${code} ` : ''}${message}${hint}`, { code: 'ERR_IO', cause: e });
  }
}

function locationOf(r: Record<string, unknown>): SnapshotLocation {
  return { sessionId: r.session_id as string, scope: r.scope as Scope, scopeId: r.scope_id as string };
}

const CONNECT_ATTEMPTS = 3;

async function connectWithRetry(pool: PgPoolLike): Promise<PoolClient> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await pool.connect();
    } catch (e) {
      if (attempt >= CONNECT_ATTEMPTS || !isUnavailable(e)) throw e;
      // Jittered exponential backoff: ~100 ms, ~200 ms.
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 1) * (0.5 + Math.random())));
    }
  }
}

/**
 * Opens a PostgreSQL store from `postgres://user@host:port/db?schema=cairn&tablePrefix=cairn_`.
 * The password comes from PGPASSWORD (or ~/.pgpass), never from the URL.
 */
// async so that a bad URL becomes a rejected promise, like every other store failure
// eslint-disable-next-line @typescript-eslint/require-await
export async function openPostgresStorageFromUrl(url: URL, env: NodeJS.ProcessEnv): Promise<PostgresStorage> {
  if (url.password !== '') {
    throw new SessionError('Do not put the password in the store URL (it ends up in shell history); set PGPASSWORD in the environment', {
      code: 'ERR_INVALID_OPTION',
    });
  }
  const connection = new URL(url.href);
  const schema = connection.searchParams.get('schema') ?? undefined;
  const tablePrefix = connection.searchParams.get('tablePrefix') ?? undefined;
  connection.searchParams.delete('schema');
  connection.searchParams.delete('tablePrefix');
  const config: PostgresStorageConfig = { connectionString: connection.href };
  if (schema !== undefined) config.schema = schema;
  if (tablePrefix !== undefined) config.tablePrefix = tablePrefix;
  if (env.PGPASSWORD) config.poolOptions = { password: env.PGPASSWORD };
  // Validate the names now, so a bad URL fails before any connection is made.
  return new PostgresStorage(config);
}
