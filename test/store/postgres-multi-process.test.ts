/** Several processes using one PostgreSQL store at once, starting with a schema nobody created yet. */
import pg from 'pg';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { PostgresStorage } from '../../src/store/backends/postgres/postgres-storage.js';
import type { PgServerInfo } from '../support/servers.js';
import { expectAllAppendsKept, expectExactlyOneCreator, expectOneWholeLatest } from '../support/servers-multi-process.js';
import { dropSchema, pgStorageOn, serverSuite, uniqueName } from '../support/servers-stores.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

const { describe, it, server } = serverSuite<PgServerInfo>('pg');
const schema = uniqueName('mp');
let store: PostgresStorage | undefined;
let url: string;

beforeAll(() => {
  try {
    const info = server();
    store = pgStorageOn(info, { schema });
    url = `${info.url}?schema=${schema}`;
  } catch {
    // every test reports the missing server through server()
  }
});

afterAll(async () => {
  await store?.close();
  if (store) await dropSchema(server().url, schema);
});

describe('PostgresStorage across processes', () => {
  it('6 processes on a fresh schema creating one history id: the migration runs once, exactly one create wins', async () => {
    server();
    await expectExactlyOneCreator(url, {}, store!);
    const client = new pg.Client({ connectionString: server().url });
    await client.connect();
    const { rows } = await client.query<{ version: number }>(`SELECT version FROM "${schema}".cairn_schema_version`);
    await client.end();
    expect(rows).toEqual([{ version: 1 }]);
  }, WHOLE_PROCESS_BUDGET_MS);

  it('4 processes appending history at once lose nothing', async () => {
    server();
    await expectAllAppendsKept(url, {}, store!);
  }, WHOLE_PROCESS_BUDGET_MS);

  it('4 processes saving latest at once leave one whole write', async () => {
    server();
    await expectOneWholeLatest(url, {}, store!);
  }, WHOLE_PROCESS_BUDGET_MS);
});
