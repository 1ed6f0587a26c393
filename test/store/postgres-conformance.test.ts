import { afterAll } from 'vitest';
import { runSnapshotStorageConformance } from '../../src/store/conformance/index.js';
import type { PgServerInfo } from '../support/servers.js';
import { dropSchema, pgStorageOn, serverSuite, uniqueName } from '../support/servers-stores.js';

const { describe, it, server } = serverSuite<PgServerInfo>('pg');
const schema = uniqueName('conformance');

runSnapshotStorageConformance({
  name: 'PostgresStorage on PostgreSQL 15',
  create: () => {
    const storage = pgStorageOn(server(), { schema });
    return Promise.resolve({ storage, cleanup: () => storage.close() });
  },
  test: { describe, it },
  features: { upkeep: true, concurrency: true },
});

afterAll(async () => {
  try {
    await dropSchema(server().url, schema);
  } catch {
    // no server: nothing to clean
  }
});
