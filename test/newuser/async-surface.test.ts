/**
 * Issue 23, item 10: long-running callers get an async surface that leaves their event loop
 * free (the seed's synchronous SnapshotManager methods stay), `openStore` needs no options, and
 * the stage reader has an async variant consistent with the writer.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { cleanupTempDirs, tempDir, writeTree } from '../inventory/helpers.js';
import { commitAll, makeRepo, removeDir } from '../session/helpers.js';

// The built package, as a user imports it: the worker loads the built session module.
type Lib = typeof import('../../src/index.js');
const lib = (await import(pathToFileURL(path.join(REPO_ROOT, 'dist', 'index.js')).href)) as Lib;

afterAll(cleanupTempDirs);

/** How many event-loop turns happen while `work` runs. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const spin = (): void => {
    if (!running) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  const result = await work();
  running = false;
  return { result, turns };
}

function bigRepo(): string {
  const root = makeRepo();
  const files: Record<string, string> = {};
  for (let d = 0; d < 20; d++) for (let f = 0; f < 100; f++) files[`d${d}/f${f}.txt`] = `${d} ${f}\n`;
  writeTree(root, files);
  commitAll(root, 'init');
  return root;
}

describe('capturePreSnapshotAsync / capturePostSnapshotAsync', () => {
  it('take the same records as the synchronous methods while the caller\'s event loop keeps turning', async () => {
    const root = bigRepo();
    const env = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = path.join(root, '.git', 'xdg');
    try {
      const syncDir = path.join(root, '.cairn', 'iterations', '001');
      const asyncDir = path.join(root, '.cairn', 'iterations', '002');
      const blocked = await turnsDuring(() => Promise.resolve(new lib.SnapshotManager(root).capturePreSnapshot(root, syncDir)));
      expect(blocked.turns).toBe(0);
      const free = await turnsDuring(() => lib.capturePreSnapshotAsync(root, asyncDir));
      expect(free.turns).toBeGreaterThan(0);
      expect(free.result.inventory?.files).toBe(blocked.result.inventory?.files);
      expect(free.result.git.commit).toBe(blocked.result.git.commit);
      expect(fs.existsSync(path.join(asyncDir, 'pre-snapshot.json'))).toBe(true);

      fs.writeFileSync(path.join(root, 'd0', 'new.txt'), 'new\n');
      const post = await lib.capturePostSnapshotAsync(root, asyncDir);
      const diff = new lib.SnapshotManager(root).calculateDiff(free.result, post);
      expect(diff.filesAdded).toEqual(['d0/new.txt']);
    } finally {
      if (env === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = env;
      removeDir(root);
    }
  });

  it('rejects as the seed\'s method throws when there is no pre-snapshot, and with ERR_ABORTED when aborted', async () => {
    const root = makeRepo();
    try {
      await expect(lib.capturePostSnapshotAsync(root, path.join(root, 'nowhere'))).rejects.toThrow(lib.PRE_SNAPSHOT_NOT_FOUND);
      const controller = new AbortController();
      controller.abort();
      await expect(lib.capturePreSnapshotAsync(root, path.join(root, 'it'), { signal: controller.signal })).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    } finally {
      removeDir(root);
    }
  });
});

describe('openStore and the stage reader', () => {
  it('openStore() needs no options: the default store under the current directory, or CAIRN_STORE', async () => {
    const dir = tempDir();
    const before = process.env.CAIRN_STORE;
    process.env.CAIRN_STORE = path.join(dir, 'store');
    try {
      const store = await lib.openStore();
      await store.saveSnapshot({ location: { sessionId: 's', scope: 'agent', scopeId: 'a' }, snapshotId: lib.uuidV7(), isLatest: true, snapshot: { scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data: {}, appData: {} } });
      await store.close();
      expect(fs.existsSync(path.join(dir, 'store', 's'))).toBe(true);
    } finally {
      if (before === undefined) delete process.env.CAIRN_STORE;
      else process.env.CAIRN_STORE = before;
    }
  });

  it('readStageSnapshotAsync resolves to what readStageSnapshot returns and rejects with its errors', async () => {
    const root = tempDir();
    await lib.writeStageSnapshot({ root, task: 'TUNE-0001', stage: 'plan', command: '/dr-plan', capturedBy: 'agent', recommendedNext: '/dr-do', body: 'hello\n' });
    const pending = lib.readStageSnapshotAsync(root, 'TUNE-0001');
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toEqual(lib.readStageSnapshot(root, 'TUNE-0001'));
    await expect(lib.readStageSnapshotAsync(root, 'TUNE-0002')).rejects.toMatchObject({ code: 'ERR_NOT_FOUND', exitCode: 1 });
    await expect(lib.readStageSnapshotAsync(root, 'bad')).rejects.toMatchObject({ code: 'ERR_INVALID_TASK_ID', exitCode: 2 });
  });
});

// The very module dist/index.js re-exports: the same resident worker.
const { residentCaptureThreadId } = (await import(pathToFileURL(path.join(REPO_ROOT, 'dist', 'session', 'capture', 'capture-async.js')).href)) as typeof import('../../src/session/capture/capture-async.js');

describe('the resident capture worker (issue 21: a long-running caller reuses its state)', () => {
  it('serves consecutive captures from one thread that keeps the library loaded, and sees the caller\'s environment as it is now', async () => {
    const root = bigRepo();
    const env = process.env.XDG_CACHE_HOME;
    try {
      process.env.XDG_CACHE_HOME = tempDir();
      const first = await lib.capturePreSnapshotAsync(root, path.join(root, '.cairn', 'iterations', '001'));
      const thread = residentCaptureThreadId();
      expect(thread).not.toBeNull();
      fs.writeFileSync(path.join(root, 'd1', 'new.txt'), 'new\n');
      // A later change of the environment reaches the worker: its stat cache goes where the caller says now.
      const later = tempDir();
      process.env.XDG_CACHE_HOME = later;
      const post = await lib.capturePostSnapshotAsync(root, path.join(root, '.cairn', 'iterations', '001'));
      expect(residentCaptureThreadId()).toBe(thread);
      expect(fs.readdirSync(path.join(later, 'cairn', 'snapshots')).length).toBeGreaterThan(0);
      expect(new lib.SnapshotManager(root).calculateDiff(first, post).filesAdded).toEqual(['d1/new.txt']);
      // An error comes back as the seed's method throws it, and the worker stays.
      await expect(lib.capturePostSnapshotAsync(root, path.join(root, 'nowhere'))).rejects.toThrow(lib.PRE_SNAPSHOT_NOT_FOUND);
      expect(residentCaptureThreadId()).toBe(thread);
    } finally {
      if (env === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = env;
      removeDir(root);
    }
  });

  it('takes the worker down with a capture aborted under way; the next capture gets a new one', async () => {
    const root = bigRepo();
    try {
      await lib.capturePreSnapshotAsync(root, path.join(root, '.cairn', 'iterations', '001')); // a resident worker, free
      const before = residentCaptureThreadId();
      const controller = new AbortController();
      const pending = lib.capturePreSnapshotAsync(root, path.join(root, '.cairn', 'iterations', '002'), { signal: controller.signal });
      controller.abort();
      await expect(pending).rejects.toMatchObject({ code: 'ERR_ABORTED' });
      const again = await lib.capturePreSnapshotAsync(root, path.join(root, '.cairn', 'iterations', '003'));
      expect(again.inventory?.files).toBe(2000);
      expect(residentCaptureThreadId()).not.toBe(before);
    } finally {
      removeDir(root);
    }
  });

  it('gives a capture asked for while the worker is busy a thread of its own', async () => {
    const root = bigRepo();
    try {
      const [a, b] = await Promise.all([
        lib.capturePreSnapshotAsync(root, path.join(root, '.cairn', 'iterations', '001')),
        lib.capturePreSnapshotAsync(root, path.join(root, '.cairn', 'iterations', '002')),
      ]);
      expect(a.inventory?.digest).toBe(b.inventory?.digest);
    } finally {
      removeDir(root);
    }
  });
});
