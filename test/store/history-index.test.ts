import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStorage, uuidV7, type Snapshot, type SnapshotLocation } from '../../src/store/index.js';
import { encodeIndex, HISTORY_INDEX_NAME, stampOf } from '../../src/store/backends/file/history-index.js';

const location: SnapshotLocation = { sessionId: 'sess', scope: 'agent', scopeId: 'agent-1' };
const snapshot: Snapshot = { scope: 'agent', schemaVersion: '1.0', createdAt: '2026-01-01T00:00:00.000Z', data: {}, appData: {} };
const QUIET_MS = 40;

let root: string;
let snapDir: string;
let histDir: string;
let indexFile: string;
let storage: FileStorage;
const quiet = () => new Promise((r) => setTimeout(r, QUIET_MS * 3));

async function saveMany(s: FileStorage, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => uuidV7());
  await Promise.all(ids.map((id) => s.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot })));
  return ids;
}

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-index-'));
  storage = new FileStorage(root, { fsync: false, historyIndex: { minEntries: 10, quietMs: QUIET_MS } });
  snapDir = path.join(root, 'sess/scopes/agent/agent-1/snapshots');
  histDir = path.join(snapDir, 'immutable_history');
  indexFile = path.join(snapDir, HISTORY_INDEX_NAME);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('the sorted listing index beside immutable_history/', () => {
  it('is built from a quiet directory and answers pages identical to a scan', async () => {
    const ids = await saveMany(storage, 60);
    await quiet();
    expect(await storage.listSnapshotIds({ location, limit: 5 })).toEqual(ids.slice(0, 5));
    await fs.access(indexFile);
    const scanner = new FileStorage(root, { historyIndex: false });
    for (const params of [{}, { limit: 7 }, { startAfter: ids[10]! }, { startAfter: ids[10]!.toUpperCase(), limit: 3 }, { startAfter: ids[59]! }, { limit: 1000 }, { limit: 2.5 }]) {
      expect(await storage.listSnapshotIds({ location, ...params })).toEqual(await scanner.listSnapshotIds({ location, ...params }));
    }
  });

  it('is not built while the directory is changing (racy window) nor for short histories', async () => {
    // A quiet window no busy machine can outlast between the writes and the listing.
    const racy = new FileStorage(root, { fsync: false, historyIndex: { minEntries: 10, quietMs: 10 * 60_000 } });
    await saveMany(racy, 60);
    await racy.listSnapshotIds({ location }); // right after the writes: inside the quiet window
    await expect(fs.access(indexFile)).rejects.toMatchObject({ code: 'ENOENT' });
    const small = new FileStorage(root, { historyIndex: { minEntries: 1000, quietMs: QUIET_MS } });
    await quiet();
    await small.listSnapshotIds({ location });
    await expect(fs.access(indexFile)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is really used: a current index answers listings (and verify flags one that lies)', async () => {
    const ids = await saveMany(storage, 20);
    await quiet();
    await storage.listSnapshotIds({ location });
    // Rewrite the index with an extra id but the directory's true stamp: listing trusts it.
    const stamp = stampOf(await fs.lstat(histDir, { bigint: true }));
    await fs.writeFile(indexFile, encodeIndex(stamp, [...ids, 'zzz-not-on-disk']));
    expect(await storage.listSnapshotIds({ location, startAfter: ids[19]! })).toEqual(['zzz-not-on-disk']);
    const report = await storage.verify();
    expect(report.issues).toEqual([expect.objectContaining({ kind: 'invalid-index', where: indexFile })]);
  });

  it('goes stale on any change to the directory: new saves, prunes and foreign files show at once', async () => {
    const ids = await saveMany(storage, 30);
    await quiet();
    await storage.listSnapshotIds({ location });
    await fs.access(indexFile);
    const extra = uuidV7();
    await storage.saveSnapshot({ location, snapshotId: extra, isLatest: false, snapshot });
    expect(await storage.listSnapshotIds({ location })).toEqual([...ids, extra]);
    await storage.prune({ location, keepLast: 10 });
    expect(await storage.listSnapshotIds({ location })).toEqual([...ids, extra].slice(-10));
    // An upstream writer (or a person) drops a file in directly.
    await fs.writeFile(path.join(histDir, 'snapshot_zz-foreign.json'), JSON.stringify(snapshot));
    expect((await storage.listSnapshotIds({ location })).at(-1)).toBe('zz-foreign');
    await fs.unlink(path.join(histDir, 'snapshot_zz-foreign.json'));
    expect(await storage.listSnapshotIds({ location })).toEqual([...ids, extra].slice(-10));
  });

  it('a torn, foreign or linked index is ignored and listing stays correct', async () => {
    const ids = await saveMany(storage, 20);
    await quiet();
    const scanner = new FileStorage(root, { historyIndex: false });
    for (const junk of ['', 'garbage', 'x'.repeat(300), (await fs.readFile(indexFile).catch(() => Buffer.from('')))]) {
      await fs.writeFile(indexFile, junk);
      expect(await storage.listSnapshotIds({ location, limit: 3 })).toEqual(ids.slice(0, 3));
      expect(await scanner.listSnapshotIds({ location, limit: 3 })).toEqual(ids.slice(0, 3));
    }
    const full = await fs.readFile(indexFile);
    await fs.writeFile(indexFile, full.subarray(0, full.length - 5));
    expect(await storage.listSnapshotIds({ location })).toEqual(ids);
    await fs.rm(indexFile);
    await fs.writeFile(path.join(root, 'elsewhere'), encodeIndex(stampOf(await fs.lstat(histDir, { bigint: true })), ['planted']));
    await fs.symlink(path.join(root, 'elsewhere'), indexFile);
    expect(await storage.listSnapshotIds({ location })).toEqual(ids);
  });

  it('stays correct while several writers append and a reader pages concurrently', async () => {
    const seed = await saveMany(storage, 50);
    await quiet();
    await storage.listSnapshotIds({ location });
    const written = [...seed];
    const writers = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 25; i++) {
        const id = uuidV7();
        await storage.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot });
        written.push(id);
        if (i % 10 === 0) await new Promise((r) => setTimeout(r, QUIET_MS * 2));
      }
    });
    let done = false;
    const reader = (async () => {
      while (!done) {
        const listed = await storage.listSnapshotIds({ location });
        // Everything written before this listing started must be there, in order.
        expect(listed).toEqual([...listed].sort());
        for (const id of seed) expect(listed).toContain(id);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await Promise.all(writers);
    done = true;
    await reader;
    await quiet();
    expect(await storage.listSnapshotIds({ location })).toEqual([...written].sort());
    expect(await storage.listSnapshotIds({ location, limit: 10, startAfter: [...written].sort()[99]! })).toEqual([...written].sort().slice(100, 110));
    expect((await storage.verify()).ok).toBe(true);
  });
});
