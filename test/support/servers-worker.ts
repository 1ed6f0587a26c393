/**
 * A separate writer process for the S3 / PostgreSQL multi-process tests:
 *   servers-worker.ts <storeUrl> race <snapshotId> <writer>     create one history id; prints `won` or `exists`
 *   servers-worker.ts <storeUrl> history <writer> <count>      appends count history snapshots; prints their ids (JSON)
 *   servers-worker.ts <storeUrl> latest <writer> <count>       saves latest count times
 * Credentials come from the environment, as for the CLI. Prints `ready` once the store is open,
 * then waits for a line on stdin, so a test can release every writer at once.
 */
import { openPostgresStorageFromUrl } from '../../src/store/backends/postgres/postgres-storage.js';
import { openS3StorageFromUrl } from '../../src/store/backends/s3/s3-storage.js';
import { SessionError } from '../../src/store/contract/errors.js';
import type { ManagedSnapshotStorage, Snapshot, SnapshotLocation } from '../../src/store/contract/types.js';
import { uuidV7 } from '../../src/store/contract/uuid.js';

const [storeUrl, mode, a, b] = process.argv.slice(2);
const location: SnapshotLocation = { sessionId: 'shared', scope: 'agent', scopeId: 'worker-test' };

function snapshotOf(writer: number, seq: number): Snapshot {
  const payload = `${writer}:${seq}:`.repeat(4000);
  return { scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data: { writer, seq, payload }, appData: { check: payload.length } };
}

async function run(store: ManagedSnapshotStorage): Promise<void> {
  if (mode === 'race') {
    try {
      await store.saveSnapshot({ location, snapshotId: a!, isLatest: false, snapshot: snapshotOf(Number(b), 0) });
      process.stdout.write('won\n');
    } catch (e) {
      if (e instanceof SessionError && e.code === 'ERR_SNAPSHOT_EXISTS') process.stdout.write('exists\n');
      else throw e;
    }
  } else if (mode === 'history') {
    const ids: string[] = [];
    for (let i = 0; i < Number(b); i++) {
      const id = uuidV7();
      await store.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf(Number(a), i) });
      ids.push(id);
    }
    process.stdout.write(`${JSON.stringify(ids)}\n`);
  } else if (mode === 'latest') {
    for (let i = 0; i < Number(b); i++) await store.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(Number(a), i) });
  } else {
    throw new Error(`unknown mode ${String(mode)}`);
  }
}

const url = new URL(storeUrl!);
const store = await (url.protocol === 's3:' ? openS3StorageFromUrl(url, process.env) : openPostgresStorageFromUrl(url, process.env));
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  process.stdin.pause();
  run(store)
    .then(() => store.close())
    .then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}\n`);
        process.exit(1);
      },
    );
});
