/**
 * vitest globalSetup: starts the real servers of the store's S3 and PostgreSQL tests (Ceph RGW,
 * PostgreSQL 15) in the background, on free loopback ports in temp dirs, and stops them after
 * the run. It does not block: test files that need a server wait for the status file in their
 * `beforeAll` (test/support/servers.ts), and runs without such files do not wait at all.
 *
 * Servers already given by CAIRN_S3_URL / CAIRN_PG_URL are used as they are; CAIRN_SKIP_SERVERS=1
 * (or CAIRN_SKIP_S3=1 / CAIRN_SKIP_PG=1) skips starting them and the tests that need them.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  externalPg,
  externalS3,
  skipReason,
  startCeph,
  startPostgres,
  stopCeph,
  stopPostgres,
  STATUS_DIR_ENV,
  type Outcome,
  type PgServerInfo,
  type S3ServerInfo,
  type ServersStatus,
} from './servers.js';

export default function setup(project: TestProject): () => Promise<void> {
  const statusDir = mkdtempSync(path.join(os.tmpdir(), 'cairn-servers-'));
  project.provide('cairnServersStatusDir', statusDir);
  process.env[STATUS_DIR_ENV] = statusDir;
  // Each outcome is written whole, then renamed, so a reader never sees half a document; each
  // server reports on its own, so PostgreSQL tests need not wait for Ceph.
  const report = <T>(kind: 's3' | 'pg', outcome: Outcome<T>): Outcome<T> => {
    const file = path.join(statusDir, `${kind}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(outcome));
    renameSync(`${file}.tmp`, file);
    return outcome;
  };
  const abort = new AbortController();

  const s3: Promise<Outcome<S3ServerInfo>> = (async () => {
    const skip = skipReason('s3');
    if (skip !== undefined) return { skip };
    const given = externalS3();
    return given !== undefined ? { ok: given } : startCeph(abort.signal);
  })().then((outcome) => report('s3', outcome));
  const pg: Promise<Outcome<PgServerInfo>> = (async () => {
    const skip = skipReason('pg');
    if (skip !== undefined) return { skip };
    const given = externalPg();
    return given !== undefined ? { ok: given } : startPostgres(abort.signal);
  })().then((outcome) => report('pg', outcome));

  const started = Promise.all([s3, pg]).then(([s3Outcome, pgOutcome]): ServersStatus => ({ s3: s3Outcome, pg: pgOutcome }));

  return async () => {
    // A run that never needed the servers may end while they are still starting: stop the start.
    abort.abort();
    const status = await started;
    const stops: Promise<void>[] = [];
    if ('ok' in status.s3 && status.s3.ok.cephDir) stops.push(stopCeph(status.s3.ok.cephDir));
    if ('ok' in status.pg && status.pg.ok.pgDir) stops.push(stopPostgres(status.pg.ok.pgDir));
    await Promise.all(stops);
    rmSync(statusDir, { recursive: true, force: true });
  };
}
