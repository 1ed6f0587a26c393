import * as fs from 'node:fs/promises';
import { mkfifo } from '../support/mkfifo.js';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStorage, SessionError, uuidV7, type Snapshot, type SnapshotLocation } from '../../src/store/index.js';
import { canMountTmpfs, mountTmpfs, treeOf, unmount } from './support/fs-faults.js';
import { expectSessionError } from './support/session-error.js';

const SCOPE_ID = 'test-agent';
const location: SnapshotLocation = { sessionId: 'test-session', scope: 'agent', scopeId: SCOPE_ID };
const snapshot: Snapshot = { scope: 'agent', schemaVersion: '1.0', createdAt: '2026-03-11T10:00:00.000Z', data: { messages: ['hi'] }, appData: { k: 'v' } };
const IDS = ['019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b', '019c9bf1-1d34-7eef-9a3b-1c2d3e4f5a6b', '019c9bf1-24bb-7eef-aa3b-1c2d3e4f5a6b'];

let root: string;
let base: string;
let storage: FileStorage;
const snapDir = () => path.join(base, 'test-session', 'scopes', 'agent', SCOPE_ID, 'snapshots');
const historyDir = () => path.join(snapDir(), 'immutable_history');

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-fs-'));
  base = path.join(root, 'store');
  storage = new FileStorage(base);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('FileStorage layout on disk (upstream file-storage tests)', () => {
  it("writes a history snapshot with id '1' to …/agent/test-agent/snapshots/immutable_history/snapshot_1.json, as 2-space JSON without a trailing newline", async () => {
    await storage.saveSnapshot({ location, snapshotId: '1', isLatest: false, snapshot });
    const text = await fs.readFile(path.join(historyDir(), 'snapshot_1.json'), 'utf8');
    expect(text).toBe(JSON.stringify(snapshot, null, 2));
    expect(JSON.parse(text)).toEqual(snapshot);
  });

  it('writes latest to …/snapshots/snapshot_latest.json and creates the directories recursively', async () => {
    await storage.saveSnapshot({ location, snapshotId: 'ignored', isLatest: true, snapshot });
    expect((await fs.stat(snapDir())).isDirectory()).toBe(true);
    expect(await fs.readFile(path.join(snapDir(), 'snapshot_latest.json'), 'utf8')).toBe(JSON.stringify(snapshot, null, 2));
    expect(await fs.readdir(snapDir())).toEqual(['snapshot_latest.json']);
  });

  it('puts multiAgent scope graph-1 at …/scopes/multiAgent/graph-1/snapshots/snapshot_latest.json', async () => {
    const multi: SnapshotLocation = { sessionId: 'test-session', scope: 'multiAgent', scopeId: 'graph-1' };
    await storage.saveSnapshot({ location: multi, snapshotId: 'x', isLatest: true, snapshot: { ...snapshot, scope: 'multiAgent' } });
    await fs.access(path.join(base, 'test-session/scopes/multiAgent/graph-1/snapshots/snapshot_latest.json'));
  });

  it('writes the manifest to …/snapshots/manifest.json and reads a hand-written file back', async () => {
    await storage.saveManifest({ location, manifest: { schemaVersion: '1.0', updatedAt: '2026-01-01T00:00:00.000Z' } });
    expect(JSON.parse(await fs.readFile(path.join(snapDir(), 'manifest.json'), 'utf8'))).toEqual({ schemaVersion: '1.0', updatedAt: '2026-01-01T00:00:00.000Z' });
    await fs.writeFile(path.join(historyDir().replace('immutable_history', ''), 'snapshot_latest.json'), JSON.stringify(snapshot));
    expect(await storage.loadSnapshot({ location })).toEqual(snapshot);
  });

  it('deleteSession removes <base>/test-session entirely', async () => {
    await storage.saveSnapshot({ location, snapshotId: IDS[0]!, isLatest: false, snapshot });
    await storage.deleteSession({ sessionId: 'test-session' });
    await expect(fs.stat(path.join(base, 'test-session'))).rejects.toMatchObject({ code: 'ENOENT' });
    await fs.access(base);
  });

  it('pathFor names the same files the storage writes', async () => {
    await storage.saveSnapshot({ location, snapshotId: '5', isLatest: false, snapshot });
    await fs.access(storage.pathFor(location, { snapshotId: '5' }));
    expect(storage.pathFor(location, 'latest')).toBe(path.join(snapDir(), 'snapshot_latest.json'));
  });
});

describe('FileStorage base directory (upstream defect: relative baseDir)', () => {
  it("works with a relative './sessions' base, resolved once at construction", async () => {
    const before = process.cwd();
    process.chdir(root);
    let relative: FileStorage;
    try {
      relative = new FileStorage('./sessions');
    } finally {
      process.chdir(before);
    }
    expect(relative.baseDir).toBe(path.join(root, 'sessions'));
    await relative.saveSnapshot({ location, snapshotId: IDS[0]!, isLatest: false, snapshot });
    expect(await relative.loadSnapshot({ location, snapshotId: IDS[0]! })).toEqual(snapshot);
    expect(await relative.listSnapshotIds({ location })).toEqual([IDS[0]]);
    await fs.access(path.join(root, 'sessions/test-session/scopes/agent/test-agent/snapshots/immutable_history', `snapshot_${IDS[0]}.json`));
  });

  it('works with a non-normalised absolute base like /a/x/../y', async () => {
    const odd = new FileStorage(path.join(root, 'x') + '/../store');
    await odd.saveSnapshot({ location, snapshotId: IDS[1]!, isLatest: false, snapshot });
    expect(await storage.listSnapshotIds({ location })).toEqual([IDS[1]]);
  });

  it('rejects an empty or NUL-containing base directory', () => {
    expect(() => new FileStorage('')).toThrow(SessionError);
    expect(() => new FileStorage('a\0b')).toThrow(SessionError);
  });
});

describe('FileStorage reports real file-system failures as SessionError naming the file', () => {
  it('a file where the store directory should be is a write failure, not "snapshot already exists"', async () => {
    const inTheWay = path.join(base, 'plain-file');
    await fs.mkdir(base, { recursive: true });
    await fs.writeFile(inTheWay, 'in the way');
    const w = await expectSessionError(new FileStorage(inTheWay).saveSnapshot({ location, snapshotId: IDS[0]!, isLatest: false, snapshot }), 'ERR_IO', /Failed to write file/);
    expect(w.message).not.toMatch(/^Snapshot /);
  });

  it('a directory where snapshot_latest.json should be: save fails with "Failed to write file", load with "File system error reading"', async () => {
    await fs.mkdir(path.join(snapDir(), 'snapshot_latest.json'), { recursive: true });
    const file = path.join(snapDir(), 'snapshot_latest.json');
    const w = await expectSessionError(storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot }));
    expect(w.message).toContain(`Failed to write file ${file}`);
    expect(w.cause).toMatchObject({ code: 'EISDIR' });
    const r = await expectSessionError(storage.loadSnapshot({ location }));
    expect(r.message).toContain(`File system error reading ${file}`);
    // No temp file is left behind by the failed write.
    expect(await fs.readdir(snapDir())).toEqual(['snapshot_latest.json']);
  });

  it('a file where the snapshots directory should be: save, load, list and manifest all fail with SessionError', async () => {
    await fs.mkdir(path.dirname(snapDir()), { recursive: true });
    await fs.writeFile(snapDir(), 'not a directory');
    expect((await expectSessionError(storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot }))).message).toMatch(/^Failed to write file .*is not a directory/);
    expect((await expectSessionError(storage.loadSnapshot({ location }))).message).toMatch(/^File system error reading /);
    expect((await expectSessionError(storage.listSnapshotIds({ location }))).message).toMatch(/^Failed to list snapshots for session test-session/);
    expect((await expectSessionError(storage.saveManifest({ location, manifest: { schemaVersion: '1.0', updatedAt: 'x' } }))).message).toMatch(/^Failed to write file /);
    expect((await expectSessionError(storage.loadManifest({ location }))).message).toMatch(/^File system error reading /);
  });

  it('a file where immutable_history should be: listing fails with "Failed to list snapshots for session <id>"', async () => {
    await fs.mkdir(snapDir(), { recursive: true });
    await fs.writeFile(historyDir(), '');
    const e = await expectSessionError(storage.listSnapshotIds({ location }));
    expect(e.message).toMatch(/^Failed to list snapshots for session test-session/);
    expect(e.code).toBe('ERR_CONTAINMENT');
  });

  it('a directory where manifest.json should be: saveManifest fails with "Failed to write file"', async () => {
    await fs.mkdir(path.join(snapDir(), 'manifest.json'), { recursive: true });
    const e = await expectSessionError(storage.saveManifest({ location, manifest: { schemaVersion: '1.0', updatedAt: 'x' } }));
    expect(e.message).toContain(`Failed to write file ${path.join(snapDir(), 'manifest.json')}`);
  });

  it('invalid JSON (and an empty file) fails with "Invalid JSON in file <path>"', async () => {
    await fs.mkdir(historyDir(), { recursive: true });
    await fs.writeFile(path.join(snapDir(), 'snapshot_latest.json'), 'invalid json');
    await fs.writeFile(path.join(historyDir(), 'snapshot_5.json'), '');
    await fs.writeFile(path.join(snapDir(), 'manifest.json'), '{"schemaVersion":');
    expect((await expectSessionError(storage.loadSnapshot({ location }))).message).toBe(`Invalid JSON in file ${path.join(snapDir(), 'snapshot_latest.json')}`);
    expect((await expectSessionError(storage.loadSnapshot({ location, snapshotId: '5' }))).code).toBe('ERR_INVALID_JSON');
    expect((await expectSessionError(storage.loadManifest({ location }))).message).toBe(`Invalid JSON in file ${path.join(snapDir(), 'manifest.json')}`);
  });

  it('JSON that is not a Snapshot fails on load, naming the file and the problem', async () => {
    await fs.mkdir(historyDir(), { recursive: true });
    await fs.writeFile(path.join(snapDir(), 'snapshot_latest.json'), JSON.stringify({ ...snapshot, data: [] }));
    await fs.writeFile(path.join(historyDir(), 'snapshot_5.json'), '[1,2,3]');
    await fs.writeFile(path.join(snapDir(), 'manifest.json'), '{"schemaVersion":"1.0"}');
    const latest = await expectSessionError(storage.loadSnapshot({ location }));
    expect(latest.message).toBe(`File ${path.join(snapDir(), 'snapshot_latest.json')} is not a valid snapshot: "data" must be an object`);
    expect(latest.code).toBe('ERR_CORRUPT');
    expect((await expectSessionError(storage.loadSnapshot({ location, snapshotId: '5' }))).message).toMatch(/is not a valid snapshot: it is not a JSON object/);
    expect((await expectSessionError(storage.loadManifest({ location }))).message).toMatch(/is not a valid manifest: "updatedAt"/);
  });

  it('a valid id too long for the file system fails with SessionError and writes nothing', async () => {
    const long = 'a'.repeat(300);
    const e = await expectSessionError(storage.saveSnapshot({ location, snapshotId: long, isLatest: false, snapshot }));
    expect(e.message).toMatch(/^Failed to write file .*ENAMETOOLONG/);
    expect(await fs.readdir(historyDir())).toEqual([]);
    expect(await storage.loadSnapshot({ location, snapshotId: long }).catch((err: unknown) => err)).toBeInstanceOf(SessionError);
  });

  it('a session that cannot be removed (a mount point inside it) fails with "Failed to delete session"', async (ctx) => {
    if (!(await canMountTmpfs(path.join(root, 'probe')))) {
      ctx.skip('SKIPPED LOUDLY: cannot mount a tmpfs here (needs root); the rm-failure case is not exercised');
    }
    await storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot });
    const mountPoint = path.join(base, 'test-session', 'scopes');
    expect(mountTmpfs(mountPoint, '64k')).toBe(true);
    try {
      const e = await expectSessionError(storage.deleteSession({ sessionId: 'test-session' }));
      expect(e.message).toMatch(/^Failed to delete session test-session/);
    } finally {
      unmount(mountPoint);
    }
  });

  it('a full disk fails the write with SessionError, keeps the previous latest whole and leaves no temp file', async (ctx) => {
    if (!(await canMountTmpfs(path.join(root, 'probe')))) {
      ctx.skip('SKIPPED LOUDLY: cannot mount a tmpfs here (needs root); the full-disk case is not exercised');
    }
    await fs.mkdir(base, { recursive: true });
    expect(mountTmpfs(base, '64k')).toBe(true);
    try {
      await storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot });
      const big = { ...snapshot, data: { blob: 'z'.repeat(200_000) } };
      const e = await expectSessionError(storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot: big }));
      expect(e.message).toMatch(/^Failed to write file .*ENOSPC/);
      const h = await expectSessionError(storage.saveSnapshot({ location, snapshotId: IDS[0]!, isLatest: false, snapshot: big }));
      expect(h.message).toMatch(/ENOSPC/);
      expect(await storage.loadSnapshot({ location })).toEqual(snapshot);
      expect((await fs.readdir(snapDir())).sort()).toEqual(['immutable_history', 'snapshot_latest.json']);
      expect(await fs.readdir(historyDir())).toEqual([]);
      expect(await storage.listSnapshotIds({ location })).toEqual([]);
    } finally {
      unmount(base);
    }
  });
});

describe('FileStorage listing', () => {
  it('lists only names that are exactly snapshot_<identifier>.json (anchored; no temp, .tmp, stray or link names)', async () => {
    for (const id of IDS) await storage.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot });
    const h = historyDir();
    for (const name of ['other-file.txt', 'xsnapshot_a.json', 'snapshot_a.json.tmp', `.snapshot_${IDS[0]}.json.cairn-tmp-1-abc`, 'snapshot_UPPER.json', 'snapshot_a.b.json', 'snapshot_.json']) {
      await fs.writeFile(path.join(h, name), '{}');
    }
    await fs.mkdir(path.join(h, 'snapshot_dir.json'));
    await fs.symlink(path.join(h, `snapshot_${IDS[0]}.json`), path.join(h, 'snapshot_link.json'));
    expect(await storage.listSnapshotIds({ location })).toEqual(IDS);
  });

  it('pages through 10,000 history snapshots with limit and startAfter, returning every id once in order', async () => {
    const fast = new FileStorage(base, { fsync: false });
    const ids = Array.from({ length: 10_000 }, () => uuidV7());
    const small: Snapshot = { ...snapshot, data: {} };
    for (let i = 0; i < ids.length; i += 250) {
      await Promise.all(ids.slice(i, i + 250).map((id) => fast.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: small })));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const limit = pages % 2 === 0 ? 100 : 137;
      const page = await fast.listSnapshotIds({ location, limit, ...(cursor === undefined ? {} : { startAfter: cursor }) });
      if (page.length === 0) break;
      pages++;
      seen.push(...page);
      cursor = page[page.length - 1];
    }
    expect(seen.length).toBe(10_000);
    expect(seen).toEqual(ids);
    expect(pages).toBe(85);

    // Once the history is quiet, the same paging is answered by the sorted index, identically.
    const indexed = new FileStorage(base, { historyIndex: { quietMs: 50 } });
    await new Promise((r) => setTimeout(r, 150));
    const again: string[] = [];
    cursor = undefined;
    for (;;) {
      const page = await indexed.listSnapshotIds({ location, limit: 100, ...(cursor === undefined ? {} : { startAfter: cursor }) });
      if (page.length === 0) break;
      again.push(...page);
      cursor = page[page.length - 1];
    }
    await fs.access(path.join(snapDir(), '.immutable_history.cairn-index'));
    expect(again).toEqual(ids);
  });
});

describe('FileStorage never leaves the base directory (hostile layouts)', () => {
  let outside: string;
  let before: Record<string, string>;
  beforeEach(async () => {
    outside = path.join(root, 'outside');
    await fs.mkdir(path.join(outside, 'scopes/agent/test-agent/snapshots/immutable_history'), { recursive: true });
    await fs.writeFile(path.join(outside, 'secret.json'), JSON.stringify(snapshot));
    await fs.writeFile(path.join(outside, 'scopes/agent/test-agent/snapshots/snapshot_latest.json'), JSON.stringify(snapshot));
    await fs.writeFile(path.join(outside, 'scopes/agent/test-agent/snapshots/immutable_history/snapshot_1.json'), JSON.stringify(snapshot));
    before = await treeOf(outside);
  });
  afterEach(async () => {
    expect(await treeOf(outside)).toEqual(before);
  });

  const everyOperation = async (s: FileStorage): Promise<unknown[]> => {
    const ops: Promise<unknown>[] = [
      s.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot }),
      s.saveSnapshot({ location, snapshotId: '2', isLatest: false, snapshot }),
      s.loadSnapshot({ location }),
      s.loadSnapshot({ location, snapshotId: '1' }),
      s.listSnapshotIds({ location }),
      s.loadManifest({ location }),
      s.saveManifest({ location, manifest: { schemaVersion: '1.0', updatedAt: 'x' } }),
      s.prune({ location, keepLast: 0 }),
    ];
    return Promise.all(ops.map((p) => p.then((v) => v, (e: unknown) => e)));
  };

  for (const linkAt of ['<session>', 'scopes', '<scopeId>', 'snapshots']) {
    it(`a symlink planted at ${linkAt} pointing outside is refused by every operation`, async () => {
      const parts = ['test-session', 'scopes', 'agent', SCOPE_ID, 'snapshots'];
      const depth = { '<session>': 1, scopes: 2, '<scopeId>': 4, snapshots: 5 }[linkAt]!;
      const linkPath = path.join(base, ...parts.slice(0, depth));
      const target = { 1: outside, 2: path.join(outside, 'scopes'), 4: path.join(outside, 'scopes/agent/test-agent'), 5: path.join(outside, 'scopes/agent/test-agent/snapshots') }[depth]!;
      await fs.mkdir(path.dirname(linkPath), { recursive: true });
      await fs.symlink(target, linkPath);
      const results = await everyOperation(storage);
      for (const r of results) {
        expect(r).toBeInstanceOf(SessionError);
        expect((r as SessionError).code).toBe('ERR_CONTAINMENT');
        expect((r as SessionError).message).toContain('is a symbolic link');
      }
      const report = await storage.verify();
      expect(report.ok).toBe(false);
      expect(report.issues.some((i) => i.where === linkPath && i.kind === 'stray')).toBe(true);
      // deleteSession removes the link itself, never what it points to.
      await storage.deleteSession({ sessionId: 'test-session' });
      if (depth === 1) await expect(fs.lstat(linkPath)).rejects.toMatchObject({ code: 'ENOENT' });
    });
  }

  it('a symlink planted at immutable_history is refused for history writes, reads, listing and prune', async () => {
    await fs.mkdir(snapDir(), { recursive: true });
    await fs.symlink(path.join(outside, 'scopes/agent/test-agent/snapshots/immutable_history'), historyDir());
    for (const op of [
      () => storage.saveSnapshot({ location, snapshotId: '2', isLatest: false, snapshot }),
      () => storage.loadSnapshot({ location, snapshotId: '1' }),
      () => storage.listSnapshotIds({ location }),
      () => storage.prune({ location, keepLast: 0 }),
    ]) {
      expect((await expectSessionError(op())).code).toBe('ERR_CONTAINMENT');
    }
    // latest is unaffected by a link beside it.
    await storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot });
  });

  it('a symlink planted at snapshot_latest.json is never read through, and a save replaces the link, not its target', async () => {
    await fs.mkdir(snapDir(), { recursive: true });
    const latest = path.join(snapDir(), 'snapshot_latest.json');
    await fs.symlink(path.join(outside, 'secret.json'), latest);
    const e = await expectSessionError(storage.loadSnapshot({ location }));
    expect(e.message).toMatch(/^File system error reading .*is a symbolic link/);
    await storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot: { ...snapshot, data: { mine: true } } });
    expect((await fs.lstat(latest)).isFile()).toBe(true);
    expect((await storage.loadSnapshot({ location }))?.data).toEqual({ mine: true });
  });

  it('a symlink planted at a history file name is not read, not listed, and blocks (never follows) a save of that id', async () => {
    await fs.mkdir(historyDir(), { recursive: true });
    await fs.symlink(path.join(outside, 'secret.json'), path.join(historyDir(), 'snapshot_7.json'));
    expect((await expectSessionError(storage.loadSnapshot({ location, snapshotId: '7' }))).code).toBe('ERR_CONTAINMENT');
    expect(await storage.listSnapshotIds({ location })).toEqual([]);
    expect((await expectSessionError(storage.saveSnapshot({ location, snapshotId: '7', isLatest: false, snapshot }))).code).toBe('ERR_SNAPSHOT_EXISTS');
  });

  it('a FIFO planted at snapshot_latest.json is refused without hanging', async () => {
    await fs.mkdir(snapDir(), { recursive: true });
    mkfifo(path.join(snapDir(), 'snapshot_latest.json'));
    const e = await expectSessionError(storage.loadSnapshot({ location }));
    expect(e.message).toMatch(/is not a regular file/);
  });

  it('hostile ids never create anything anywhere', async () => {
    for (const bad of ['..', '../outside', 'a/../../outside', 'a\\..\\b', 'a\0b', 'UPPER', 'é']) {
      await expectSessionError(storage.saveSnapshot({ location: { ...location, sessionId: bad }, snapshotId: 'x', isLatest: true, snapshot }));
      await expectSessionError(storage.saveSnapshot({ location: { ...location, scopeId: bad }, snapshotId: 'x', isLatest: true, snapshot }));
      await expectSessionError(storage.saveSnapshot({ location: { ...location, scope: bad as 'agent' }, snapshotId: 'x', isLatest: true, snapshot }));
      await expectSessionError(storage.saveSnapshot({ location, snapshotId: bad, isLatest: false, snapshot }));
      await expectSessionError(storage.deleteSession({ sessionId: bad }));
    }
    await expect(fs.readdir(root)).resolves.toEqual(['outside']);
  });
});

describe('FileStorage verify and prune of leftovers', () => {
  it('verify reports temp files, upstream .tmp leftovers, invalid documents and strays; prune removes stale temp files only', async () => {
    for (const id of IDS) await storage.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot });
    await storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot });
    const temps = [path.join(snapDir(), '.snapshot_latest.json.cairn-tmp-123-abcdef'), path.join(snapDir(), 'snapshot_latest.json.tmp'), path.join(historyDir(), `.snapshot_${IDS[0]}.json.cairn-tmp-9-0a0b`)];
    for (const t of temps) await fs.writeFile(t, '{"torn":');
    await fs.writeFile(path.join(historyDir(), 'snapshot_bad.json'), 'nope');
    await fs.writeFile(path.join(historyDir(), 'snapshot_odd.json'), '{"scope":"agent"}');
    await fs.writeFile(path.join(snapDir(), 'manifest.json'), '{}');
    await fs.writeFile(path.join(base, 'test-session', 'notes.txt'), 'hi');
    await fs.mkdir(path.join(base, 'test-session', 'scopes', 'Other'));
    const report = await storage.verify();
    expect(report.ok).toBe(false);
    const byKind = (kind: string) => report.issues.filter((i) => i.kind === kind).map((i) => i.where).sort();
    expect(byKind('temp-file')).toEqual([...temps].sort());
    expect(byKind('invalid-json')).toEqual([path.join(historyDir(), 'snapshot_bad.json')]);
    expect(byKind('invalid-snapshot')).toEqual([path.join(historyDir(), 'snapshot_odd.json')]);
    expect(byKind('invalid-manifest')).toEqual([path.join(snapDir(), 'manifest.json')]);
    expect(byKind('stray')).toEqual([path.join(base, 'test-session', 'notes.txt'), path.join(base, 'test-session', 'scopes', 'Other')].sort());
    expect(report.checked).toBe(7);

    // Fresh temp files may belong to a live writer: left alone.
    expect((await storage.prune({ location, keepLast: 100 })).tempFilesRemoved).toEqual([]);
    const old = new Date(Date.now() - 120_000);
    for (const t of temps) await fs.utimes(t, old, old);
    expect((await storage.prune({ location, keepLast: 100, dryRun: true })).tempFilesRemoved?.sort()).toEqual([...temps].sort());
    for (const t of temps) await fs.access(t);
    const pruned = await storage.prune({ location, keepLast: 100 });
    expect(pruned.tempFilesRemoved?.sort()).toEqual([...temps].sort());
    expect(pruned.deleted).toEqual([]);
    for (const t of temps) await expect(fs.access(t)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await storage.verify()).issues.filter((i) => i.kind === 'temp-file')).toEqual([]);
  });

  it('prune dates an unreadable history file by its UUID v7 and keeps one it cannot date', async () => {
    await fs.mkdir(historyDir(), { recursive: true });
    const oldId = '01800000-0000-7000-8000-000000000000'; // 2022
    await fs.writeFile(path.join(historyDir(), `snapshot_${oldId}.json`), 'garbage');
    await fs.writeFile(path.join(historyDir(), 'snapshot_undated.json'), 'garbage');
    const result = await storage.prune({ location, olderThan: '1d' });
    expect(result.deleted).toEqual([oldId]);
    expect(await storage.listSnapshotIds({ location })).toEqual(['undated']);
  });

  it('du counts bytes of every file of a location, temp files included', async () => {
    await storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot });
    await storage.saveSnapshot({ location, snapshotId: '1', isLatest: false, snapshot });
    await fs.writeFile(path.join(historyDir(), '.snapshot_2.json.cairn-tmp-1-a'), '12345');
    const size = JSON.stringify(snapshot, null, 2).length;
    expect(await storage.du()).toEqual([{ ...location, history: 1, hasLatest: true, hasManifest: false, bytes: 2 * size + 5 }]);
    expect(await storage.du({ sessionId: 'absent' })).toEqual([]);
  });

  it('listSessions ignores files, links and names that are not identifiers; a missing base gives []', async () => {
    expect(await new FileStorage(path.join(root, 'nope')).listSessions()).toEqual([]);
    await storage.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot });
    await fs.writeFile(path.join(base, 'file'), '');
    await fs.mkdir(path.join(base, 'Upper'));
    await fs.symlink(root, path.join(base, 'link'));
    expect(await storage.listSessions()).toEqual(['test-session']);
  });
});
