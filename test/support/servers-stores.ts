/** Stores on the test servers, each in its own prefix/schema so test files never see each other's data. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PostgresStorage, type PostgresStorageConfig } from '../../src/store/backends/postgres/postgres-storage.js';
import { S3Storage, type S3StorageConfig } from '../../src/store/backends/s3/s3-storage.js';
import { pgServer, required, s3Server, skipReason, type Outcome, type PgServerInfo, type S3ServerInfo, type ServerHandle } from './servers.js';

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export function s3StorageOn(server: S3ServerInfo, config: Partial<S3StorageConfig> = {}): S3Storage {
  return new S3Storage({
    bucket: server.bucket,
    region: 'us-east-1',
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    onWarning: () => {},
    ...config,
  });
}

export function pgStorageOn(server: PgServerInfo, config: Partial<PostgresStorageConfig> = {}): PostgresStorage {
  return new PostgresStorage({ connectionString: server.url, ...config });
}

/** Drops a test schema (and everything in it). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * `describe`/`it` for a file that needs a server: skipped with a visible message when the
 * environment says so; otherwise `beforeAll` waits for the server, and every test that asks for
 * it with `server()` fails with the reason when it is missing.
 */
export function serverSuite<T>(kind: 's3' | 'pg'): {
  describe: typeof describe;
  it: typeof it;
  server: () => T;
} {
  const skip = skipReason(kind);
  if (skip !== undefined) {
    console.warn(`[cairn] ${kind === 's3' ? 'S3 (Ceph RGW)' : 'PostgreSQL'} tests SKIPPED because ${skip}`);
    return { describe: describe.skip as typeof describe, it: it.skip as typeof it, server: () => undefined as T };
  }
  let handle: ServerHandle<T> | undefined;
  let outcome: Outcome<T> = { error: `the ${kind} server was not looked up (beforeAll did not run)` };
  beforeAll(async () => {
    try {
      handle = (await (kind === 's3' ? s3Server() : pgServer())) as ServerHandle<T>;
      outcome = handle.outcome;
    } catch (e) {
      outcome = { error: (e as Error).message };
    }
  });
  afterAll(async () => {
    await handle?.stop();
  });
  return {
    describe,
    it,
    // Each test that needs the server fails with the reason it is missing (counted as failed
    // tests, not as a quietly skipped suite).
    server: () => required(outcome),
  };
}
