import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileStorage, uuidV7, type Snapshot, type SnapshotLocation } from '../../src/store/index.js';
import { CLI, runCli } from '../support/cli.js';

const location: SnapshotLocation = { sessionId: 's1', scope: 'agent', scopeId: 'coder' };
const orchestrator: SnapshotLocation = { sessionId: 's1', scope: 'multiAgent', scopeId: 'graph-1' };
const snapshotOf = (n: number, createdAt = new Date().toISOString()): Snapshot => ({ scope: 'agent', schemaVersion: '1.0', createdAt, data: { n }, appData: {} });

let cwd: string;
let ids: string[];
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(['store', ...args], { cwd, env: { CAIRN_STORE: '', ...env } });
const json = (stdout: string): unknown => JSON.parse(stdout);
/** The first column of `store list`: the session ids. */
const firstColumn = (stdout: string): string[] => stdout.split('\n').filter(Boolean).map((l) => l.split(/\s+/)[0]!);

beforeAll(async () => {
  await fs.access(CLI).catch(() => {
    throw new Error(`the built CLI ${CLI} is missing: run \`npm run build\` first`);
  });
});
beforeEach(async () => {
  cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-cli-store-'));
  const storage = new FileStorage(path.join(cwd, '.cairn', 'store'));
  ids = [uuidV7(), uuidV7(), uuidV7()];
  for (const [i, id] of ids.entries()) await storage.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf(i) });
  await storage.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(99) });
  await storage.saveManifest({ location: orchestrator, manifest: { schemaVersion: '1.0', updatedAt: '2026-01-01T00:00:00.000Z' } });
  await storage.saveSnapshot({ location: { ...location, sessionId: 's2' }, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(1) });
});
afterEach(async () => {
  await fs.rm(cwd, { recursive: true, force: true });
});

describe('cairn store list', () => {
  it('lists sessions of the default store .cairn/store, one per line with the newest latest snapshot\'s time and summary, or as one JSON document', () => {
    const r = cli(['list']);
    expect(r.status).toBe(0);
    expect(firstColumn(r.stdout)).toEqual(['s1', 's2']);
    expect(r.stdout).toMatch(/^s1\s+\d{4}-\d{2}-\d{2}T\S+\s+agent snapshot: n$/m);
    const j = cli(['list', '--json']);
    expect(j.status).toBe(0);
    expect(json(j.stdout)).toMatchObject({ store: '.cairn/store', sessions: ['s1', 's2'], details: [{ sessionId: 's1', summary: 'agent snapshot: n' }, { sessionId: 's2' }] });
  });

  it('with --session lists each location with its history ids, oldest first', () => {
    const r = cli(['list', '--session', 's1']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('agent/coder  latest: yes  history: 3');
    expect(lines.slice(1, 4).map((l) => l.trim().split(/\s+/)[0])).toEqual(ids);
    for (const l of lines.slice(1, 4)) expect(l).toMatch(/^ {2}\S+ {2}\d{4}-\d{2}-\d{2}T\S+ {2}agent snapshot: n$/);
    expect(lines[4]).toBe('multiAgent/graph-1  latest: no  history: 0');
    const j = cli(['list', '--session', 's1', '--scope', 'agent', '--json']);
    expect(json(j.stdout)).toMatchObject({ store: '.cairn/store', sessionId: 's1', locations: [{ scope: 'agent', scopeId: 'coder', hasLatest: true, ids }] });
  });

  it('pages with --limit and --start-after', () => {
    const j = cli(['list', '--session', 's1', '--scope-id', 'coder', '--limit', '1', '--start-after', ids[0]!.toUpperCase(), '--json']);
    expect(j.status).toBe(0);
    expect((json(j.stdout) as { locations: { ids: string[] }[] }).locations[0]!.ids).toEqual([ids[1]]);
  });

  it('an empty store prints nothing on stdout and says so on stderr', async () => {
    await fs.mkdir(path.join(cwd, 'empty'));
    const r = cli(['list', '--store', 'file:empty']);
    expect(r).toMatchObject({ status: 0, stdout: '' });
    expect(r.stderr).toContain('no sessions in file:empty');
  });

  it('bad flags are usage errors (exit 2): --limit 0, --scope Agent, an invalid --start-after, a bad session id', () => {
    expect(cli(['list', '--session', 's1', '--limit', '0']).status).toBe(2);
    expect(cli(['list', '--session', 's1', '--scope', 'Agent']).status).toBe(2);
    const cursor = cli(['list', '--session', 's1', '--start-after', 'nope']);
    expect(cursor.status).toBe(2);
    expect(cursor.stderr).toContain("'nope' is not a valid UUID v7 snapshot ID");
    const bad = cli(['list', '--session', '../etc']);
    expect(bad.status).toBe(2);
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: 'ERR_INVALID_IDENTIFIER' });
    expect(bad.stdout).toBe('');
  });
});

describe('cairn store show', () => {
  it('prints the latest snapshot, or a history snapshot with --id, as JSON', () => {
    const latest = cli(['show', '--session', 's1', '--scope-id', 'coder']);
    expect(latest.status).toBe(0);
    expect(json(latest.stdout)).toMatchObject({ data: { n: 99 } });
    const one = cli(['show', '--session', 's1', '--scope-id', 'coder', '--id', ids[1]!]);
    expect(json(one.stdout)).toMatchObject({ data: { n: 1 } });
  });

  it('exits 1 with ERR_NOT_FOUND and a hint when there is no such snapshot', () => {
    const r = cli(['show', '--session', 's1', '--scope', 'multiAgent', '--scope-id', 'graph-1']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const err = JSON.parse(r.stderr) as { code: string; message: string };
    expect(err.code).toBe('ERR_NOT_FOUND');
    expect(err.message).toContain('cairn store list --session s1');
  });

  it('needs --session and --scope-id (exit 2)', () => {
    expect(cli(['show', '--session', 's1']).status).toBe(2);
    expect(cli(['show', '--scope-id', 'coder']).status).toBe(2);
  });

  it('exits 1 naming the file when the stored latest is not valid JSON', async () => {
    await fs.writeFile(path.join(cwd, '.cairn/store/s1/scopes/agent/coder/snapshots/snapshot_latest.json'), '{oops');
    const r = cli(['show', '--session', 's1', '--scope-id', 'coder']);
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stderr)).toMatchObject({ code: 'ERR_INVALID_JSON', message: expect.stringContaining('snapshot_latest.json') as unknown });
  });
});

describe('cairn store delete-session', () => {
  it('deletes one session and leaves the others', async () => {
    const r = cli(['delete-session', '--session', 's1']);
    expect(r).toMatchObject({ status: 0, stdout: 'deleted session s1\n' });
    await expect(fs.access(path.join(cwd, '.cairn/store/s1'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(firstColumn(cli(['list']).stdout)).toEqual(['s2']);
    const absent = cli(['delete-session', '--session', 'absent', '--json']);
    expect(absent).toMatchObject({ status: 1, stdout: '' });
    expect(absent.stderr).toContain('no session absent');
    expect(cli(['delete-session']).status).toBe(2);
  });

  it('refuses an id that breaks the identifier rule as a usage error (2), as list does, and deletes nothing', () => {
    const before = firstColumn(cli(['list']).stdout);
    expect(before.length).toBeGreaterThan(0);
    for (const bad of ['../s2', 'S2', '.', '']) {
      const r = cli(['delete-session', '--session', bad]);
      expect(r.status, bad).toBe(2);
      expect(JSON.parse(r.stderr), bad).toMatchObject({ code: 'ERR_INVALID_IDENTIFIER' });
      expect(cli(['list', '--session', bad]).status, bad).toBe(2);
    }
    expect(firstColumn(cli(['list']).stdout)).toEqual(before);
  });
});

describe('cairn store prune', () => {
  it('--dry-run reports and keeps everything; a real run deletes all but --keep-last newest', () => {
    const dry = cli(['prune', '--keep-last', '1', '--dry-run', '--session', 's1']);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain('s1/agent/coder: would delete 2, kept 1');
    expect((json(cli(['list', '--session', 's1', '--scope-id', 'coder', '--json']).stdout) as { locations: { ids: string[] }[] }).locations[0]!.ids).toEqual(ids);
    const real = cli(['prune', '--keep-last', '1', '--json']);
    expect(real.status).toBe(0);
    const results = (json(real.stdout) as { results: { location: SnapshotLocation; deleted: string[] }[] }).results;
    expect(results.find((r) => r.location.scopeId === 'coder')?.deleted).toEqual(ids.slice(0, 2));
    expect(cli(['show', '--session', 's1', '--scope-id', 'coder']).status).toBe(0);
  });

  it('--older-than deletes history older than the age', async () => {
    const storage = new FileStorage(path.join(cwd, '.cairn', 'store'));
    const old = uuidV7();
    await storage.saveSnapshot({ location, snapshotId: old, isLatest: false, snapshot: snapshotOf(7, '2020-01-01T00:00:00.000Z') });
    const r = cli(['prune', '--older-than', '30d', '--session', 's1', '--scope-id', 'coder', '--json']);
    expect(r.status).toBe(0);
    expect((json(r.stdout) as { results: { deleted: string[] }[] }).results[0]!.deleted).toEqual([old]);
  });

  it('a plain prune (no keep flags) removes only stale temp files, says which, and then verify passes', async () => {
    const snapDir = path.join(cwd, '.cairn/store/s1/scopes/agent/coder/snapshots');
    const stale = [path.join(snapDir, '.snapshot_latest.json.cairn-tmp-1-aa'), path.join(snapDir, 'immutable_history', `.snapshot_${ids[0]}.json.cairn-tmp-2-bb`)];
    const fresh = path.join(snapDir, '.manifest.json.cairn-tmp-3-cc');
    const old = new Date(Date.now() - 10 * 60_000);
    for (const file of stale) {
      await fs.writeFile(file, 'partial');
      await fs.utimes(file, old, old);
    }
    await fs.writeFile(fresh, 'a live writer may own this');
    expect(cli(['verify']).status).toBe(1);
    const r = cli(['prune']);
    expect(r.status).toBe(0);
    for (const file of stale) expect(r.stdout).toContain(path.basename(file));
    expect(r.stderr).toContain('deleted 2 stale temp file(s)');
    for (const file of stale) await expect(fs.stat(file)).rejects.toThrow();
    expect(await fs.readFile(fresh, 'utf8')).toBe('a live writer may own this');
    expect((json(cli(['list', '--session', 's1', '--scope-id', 'coder', '--json']).stdout) as { locations: { ids: string[] }[] }).locations[0]!.ids).toEqual(ids);
    await fs.unlink(fresh);
    expect(cli(['verify']).status).toBe(0);
  });

  it('with bad --keep-last or --older-than values, exits 2 and deletes nothing', () => {
    for (const args of [['--keep-last', 'abc'], ['--keep-last', '-1'], ['--older-than', 'soon']]) {
      const r = cli(['prune', ...args]);
      expect(r.status, args.join(' ')).toBe(2);
    }
    expect((json(cli(['list', '--session', 's1', '--scope-id', 'coder', '--json']).stdout) as { locations: { ids: string[] }[] }).locations[0]!.ids).toEqual(ids);
  });
});

describe('cairn store verify', () => {
  it('exits 0 on a clean store and 1 with a report when something is wrong', async () => {
    const ok = cli(['verify']);
    expect(ok.status).toBe(0);
    expect(ok.stderr).toContain('ok: 6 file(s) checked');
    await fs.writeFile(path.join(cwd, '.cairn/store/s1/scopes/agent/coder/snapshots/immutable_history', `snapshot_${ids[0]}.json`), 'torn');
    await fs.writeFile(path.join(cwd, '.cairn/store/s1/scopes/agent/coder/snapshots/.snapshot_latest.json.cairn-tmp-1-aa'), '');
    const bad = cli(['verify', '--json']);
    expect(bad.status).toBe(1);
    const report = json(bad.stdout) as { ok: boolean; issues: { kind: string }[] };
    expect(report.ok).toBe(false);
    expect(report.issues.map((i) => i.kind).sort()).toEqual(['invalid-json', 'temp-file']);
    const human = cli(['verify', '--session', 's1']);
    expect(human.status).toBe(1);
    expect(human.stdout).toMatch(/^invalid-json {2}.*snapshot_/m);
  });
});

describe('cairn store du', () => {
  it('prints a table per session, scope and scope id with a total, or JSON', () => {
    const r = cli(['du']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SESSION +SCOPE +SCOPE-ID +HISTORY +LATEST +MANIFEST +BYTES$/);
    expect(lines[1]).toMatch(/^s1 +agent +coder +3 +yes +no +\d/);
    expect(lines[2]).toMatch(/^s1 +multiAgent +graph-1 +0 +no +yes +\d/);
    expect(lines[4]).toMatch(/^total +3 +\d/);
    const j = json(cli(['du', '--session', 's1', '--json']).stdout) as { locations: unknown[]; total: { history: number; bytes: number } };
    expect(j.locations).toHaveLength(2);
    expect(j.total.history).toBe(3);
    expect(j.total.bytes).toBeGreaterThan(0);
  });
});

describe('cairn store --store', () => {
  it('accepts file:DIR, a plain path and $CAIRN_STORE', async () => {
    await fs.rename(path.join(cwd, '.cairn', 'store'), path.join(cwd, 'elsewhere'));
    expect(firstColumn(cli(['list', '--store', 'file:elsewhere']).stdout)).toEqual(['s1', 's2']);
    expect(firstColumn(cli(['list', '--store', path.join(cwd, 'elsewhere')]).stdout)).toEqual(['s1', 's2']);
    expect(firstColumn(cli(['list'], { CAIRN_STORE: 'elsewhere' }).stdout)).toEqual(['s1', 's2']);
  });

  it('refuses credentials on the command line and unknown schemes (exit 2)', () => {
    const creds = cli(['list', '--store', 'postgres://user:secret@localhost/db']);
    expect(creds.status).toBe(2);
    expect(creds.stderr).toContain('PGPASSWORD');
    expect(creds.stderr).not.toContain('secret@');
    const ftp = cli(['list', '--store', 'ftp://host/x']);
    expect(ftp.status).toBe(2);
    expect(ftp.stderr).toContain('file:DIR');
  });

  it('--help names every subcommand and the exit codes', () => {
    const r = runCli(['store', '--help'], { cwd });
    expect(r.status).toBe(0);
    for (const sub of ['list', 'show', 'delete-session', 'prune', 'verify', 'du']) expect(r.stdout).toContain(sub);
    const prune = runCli(['store', 'prune', '--help'], { cwd });
    expect(prune.stdout).toContain('--keep-last');
    expect(prune.stdout).toContain('Exit codes');
  });
});
