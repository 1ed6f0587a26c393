/**
 * A separate writer process for the multi-process and crash tests:
 *   store-worker.ts latest <baseDir> <writer> <count>   saves `latest` count times
 *   store-worker.ts history <baseDir> <writer> <count>  appends count history snapshots, prints their ids
 *   store-worker.ts forever <baseDir> <writer>          alternates latest and history saves until killed,
 *                                                       printing `saved` after each pair
 *   store-worker.ts fresh <baseDir> <writer> <count>    count pairs of latest + history saves, each through a
 *                                                       new store object (so each is a "next writer" that sweeps
 *                                                       stale temps; grace $CAIRN_TEST_TEMP_GRACE_MS)
 * It prints `ready` once loaded, then waits for a line on stdin, so a test can release every writer at once.
 */
import { FileStorage, uuidV7, type Snapshot, type SnapshotLocation } from '../../../src/store/index.js';

const [mode, baseDir, writer, countArg] = process.argv.slice(2);
const location: SnapshotLocation = { sessionId: 'shared', scope: 'agent', scopeId: 'worker-test' };
const storage = new FileStorage(baseDir!);

function snapshotOf(seq: number): Snapshot {
  // A payload large enough to span several write(2) calls if a write were ever torn.
  const payload = `${writer}:${seq}:`.repeat(4000);
  return { scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data: { writer: Number(writer), seq, payload }, appData: { check: payload.length } };
}

async function run(): Promise<void> {
  const count = Number(countArg ?? 0);
  if (mode === 'latest') {
    for (let i = 0; i < count; i++) await storage.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(i) });
  } else if (mode === 'history') {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = uuidV7();
      await storage.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf(i) });
      ids.push(id);
    }
    process.stdout.write(`${JSON.stringify(ids)}\n`);
  } else if (mode === 'fresh') {
    const tempFileGraceMs = Number(process.env.CAIRN_TEST_TEMP_GRACE_MS ?? 60_000);
    for (let i = 0; i < count; i++) {
      await new FileStorage(baseDir!, { tempFileGraceMs }).saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(i) });
      await new FileStorage(baseDir!, { tempFileGraceMs }).saveSnapshot({ location, snapshotId: uuidV7(), isLatest: false, snapshot: snapshotOf(i) });
    }
  } else if (mode === 'forever') {
    for (let i = 0; ; i++) {
      await storage.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(i) });
      await storage.saveSnapshot({ location, snapshotId: uuidV7(), isLatest: false, snapshot: snapshotOf(i) });
      process.stdout.write('saved\n');
    }
  } else {
    throw new Error(`unknown mode ${String(mode)}`);
  }
}

process.stdout.write('ready\n');
process.stdin.once('data', () => {
  process.stdin.pause();
  run().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}\n`);
      process.exit(1);
    },
  );
});
