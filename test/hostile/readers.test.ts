/**
 * Hostile trees, readers: JSON nested past the bound, invalid UTF-8, a FIFO where a file should
 * be, a corrupt latest, and a swapper exchanging the store's directory with a link while it
 * saves, loads, lists and prunes. Every case ends in a coded error or a correct result, never
 * a stack trace, and nothing outside changes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, jsonTextDepth, parseJsonBounded } from '../../src/core/bounded-json.js';
import { RACE_FREE } from '../../src/core/contained-dir.js';
import { SnapshotManager, createNextIterationDir, readPreSnapshot } from '../../src/session/index.js';
import { FileStorage, type Snapshot } from '../../src/store/index.js';
import { errorJson, runCli } from '../support/cli.js';
import { git } from '../support/git.js';
import { mkfifo } from '../support/mkfifo.js';
import { expectOutsideIntact, makeOutside, startSwapper, type Outside, printFigures } from './support.js';

afterAll(() => printFigures('readers'));

let tmp: string;
let outside: Outside;
beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-readers-')));
  outside = makeOutside(path.join(tmp, 'outside'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const DEPTHS = [1, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 5_000, 50_000];
const location = { sessionId: 's', scope: 'agent' as const, scopeId: 'a' };
const snapshot = (data: Record<string, unknown> = {}): Snapshot => ({ scope: 'agent', schemaVersion: '1.0', createdAt: '2026-01-01T00:00:00.000Z', data: data as never, appData: {} });

describe('bounded JSON', () => {
  it('counts depth outside strings only and refuses past the bound with a coded error naming the file', () => {
    expect(jsonTextDepth('{"a":"[[[[","b":[{"c":"\\"["}]}')).toBe(3);
    for (const depth of DEPTHS) {
      const run = (): unknown => parseJsonBounded(nested(depth), { file: 'f.json' });
      if (depth <= MAX_JSON_DEPTH) expect(run()).toBeInstanceOf(Array);
      else expect(run).toThrow(expect.objectContaining({ code: 'ERR_TOO_DEEP', path: 'f.json' }) as Error);
    }
    expect(() => parseJsonBounded('x'.repeat(11), { file: 'g', maxChars: 10 })).toThrow(expect.objectContaining({ code: 'ERR_TOO_LARGE' }) as Error);
    expect(() => parseJsonBounded('{', { file: 'h' })).toThrow(expect.objectContaining({ code: 'ERR_CORRUPT', path: 'h' }) as Error);
  });

  it('the file store refuses to write what it could not read back, and reads past-the-bound files as a coded error that verify reports', async () => {
    const store = new FileStorage(path.join(tmp, 'store'));
    let deep: unknown = 0;
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) deep = [deep];
    await expect(store.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot: snapshot({ deep }) })).rejects.toMatchObject({ code: 'ERR_INVALID_SNAPSHOT' });
    await store.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot: snapshot() });
    const latest = store.pathFor(location, 'latest');
    for (const depth of DEPTHS) {
      fs.writeFileSync(latest, `{"scope":"agent","schemaVersion":"1.0","createdAt":"x","appData":{},"data":{"d":${nested(depth)}}}`);
      const load = store.loadSnapshot({ location });
      if (depth + 2 <= MAX_JSON_DEPTH) await expect(load).resolves.toMatchObject({ scope: 'agent' });
      else {
        await expect(load).rejects.toMatchObject({ code: 'ERR_TOO_DEEP' });
        expect((await store.verify()).ok).toBe(false);
      }
    }
    const r = runCli(['store', 'show', '--store', path.join(tmp, 'store'), '--session', 's', '--scope-id', 'a'], { cwd: tmp });
    expect(r.status).toBe(1);
    expect(errorJson(r.stderr).code).toBe('ERR_TOO_DEEP');
  });

  it('invalid UTF-8 in a stored document is a coded error and fails verify (issue 20, item 9)', async () => {
    const store = new FileStorage(path.join(tmp, 'store'));
    await store.saveSnapshot({ location, snapshotId: 'x', isLatest: true, snapshot: snapshot({ s: 'ok' }) });
    const latest = store.pathFor(location, 'latest');
    const text = fs.readFileSync(latest);
    // "ok" becomes "o\xc3(k": a truncated two-byte sequence inside the string.
    const at = text.indexOf('"s": "ok"') + 7;
    fs.writeFileSync(latest, Buffer.concat([text.subarray(0, at), Buffer.from([0xc3, 0x28]), text.subarray(at)]));
    await expect(store.loadSnapshot({ location })).rejects.toMatchObject({ code: 'ERR_CORRUPT' });
    expect((await store.verify()).issues.map((i) => i.kind)).toEqual(['unreadable']);
  });

  it('a state file nested 5,000 deep neither crashes session pre/post nor is embedded; a deep pre-snapshot is a coded error (item 5)', () => {
    const root = path.join(tmp, 'project');
    fs.mkdirSync(path.join(root, '.aiwg', 'ralph'), { recursive: true });
    git(root, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(root, '.aiwg', 'ralph', 'current-loop.json'), `{"a":${nested(5_000)}}`);
    const cache = path.join(tmp, 'cache');
    const pre = runCli(['session', 'pre', '--json'], { cwd: root, env: { XDG_CACHE_HOME: cache } });
    expect(pre.status, pre.stderr).toBe(0);
    expect((JSON.parse(pre.stdout) as { pre: { aiwg: { ralphState: unknown } } }).pre.aiwg.ralphState).toBeNull();
    const post = runCli(['session', 'post'], { cwd: root, env: { XDG_CACHE_HOME: cache } });
    expect(post.status, post.stderr).toBe(0);
    const dir = createNextIterationDir(root);
    new SnapshotManager(root, { cacheDir: cache, inventory: false }).capturePreSnapshot(root, dir);
    fs.writeFileSync(path.join(dir, 'pre-snapshot.json'), `{"timestamp":"x","git":{},"x":${nested(50_000)}}`);
    expect(() => readPreSnapshot(path.join(dir, 'pre-snapshot.json'))).toThrow(expect.objectContaining({ code: 'ERR_TOO_DEEP' }) as Error);
  });
});

describe('readers of odd files', () => {
  it('snapshot-diff with a FIFO argument answers with a coded error instead of hanging (item 7)', () => {
    fs.mkdirSync(path.join(tmp, 'tree'));
    fs.writeFileSync(path.join(tmp, 'tree', 'a'), 'a');
    expect(runCli(['snapshot', '--root', path.join(tmp, 'tree'), '-o', path.join(tmp, 'good.json')], { cwd: tmp }).status).toBe(0);
    mkfifo(path.join(tmp, 'fifo'));
    const r = runCli(['snapshot-diff', 'good.json', 'fifo'], { cwd: tmp, timeoutMs: 20_000 });
    expect(r.status).toBe(2);
    expect(errorJson(r.stderr).code).toBe('ERR_INVALID_SNAPSHOT');
  });

  it('store list still lists the history ids when snapshot_latest.json is corrupt (item 8)', async () => {
    const base = path.join(tmp, 'store');
    const store = new FileStorage(base);
    await store.saveSnapshot({ location, snapshotId: '1', isLatest: false, snapshot: snapshot() });
    await store.saveSnapshot({ location, snapshotId: '1', isLatest: true, snapshot: snapshot() });
    fs.writeFileSync(store.pathFor(location, 'latest'), '{"torn');
    const r = runCli(['store', 'list', '--store', base, '--session', 's', '--json'], { cwd: tmp });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('"1"');
  });
});

describe('the store under a swapper', () => {
  it('saves, loads, lists and prunes never leave the base while its snapshots directory is exchanged with a link (item 4)', async () => {
    const base = path.join(tmp, 'store');
    const store = new FileStorage(base, { fsync: false, historyIndex: false });
    await store.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshot({ round: -1 }) });
    const snapDir = path.dirname(store.pathFor(location, 'latest'));
    const swapper = await startSwapper(snapDir, path.join(path.dirname(snapDir), 'decoy'), outside.dir);
    let done = 0;
    let refused = 0;
    const ROUNDS = 600;
    try {
      // Bounded by rounds, not time: on a loaded machine the swapper can win every one of the
      // first ROUNDS, so go on (at most ten times as many) until one round got through.
      for (let round = 0; round < ROUNDS || (done === 0 && round < 10 * ROUNDS); round++) {
        try {
          await store.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshot({ round }) });
          await store.saveSnapshot({ location, snapshotId: `h${round}`, isLatest: false, snapshot: snapshot({ round }) });
          const loaded = await store.loadSnapshot({ location });
          expect(JSON.stringify(loaded)).not.toContain('yours');
          await store.listSnapshotIds({ location });
          if (round % 50 === 49) await store.prune({ location, keepLast: 5 });
          done++;
        } catch (e) {
          expect((e as { code?: string }).code).toBe('ERR_CONTAINMENT');
          refused++;
        }
      }
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(0);
    }
    expect(done + refused).toBeGreaterThanOrEqual(ROUNDS);
    expect(done).toBeGreaterThan(0);
    if (RACE_FREE) expectOutsideIntact(outside);
  });
});

describe('every other JSON a command reads from the tree, fuzzed in depth and size', () => {
  it('config, hook settings, review.json, agent.json and the hook log: a coded error or passed over, never a crash', () => {
    const root = path.join(tmp, 'p');
    fs.mkdirSync(root);
    git(root, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(root, 'a.txt'), 'a\n');
    git(root, 'add', '-A');
    git(root, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'a');
    const env = { XDG_CACHE_HOME: path.join(tmp, 'cache'), HOME: path.join(tmp, 'home') };
    const cli = (args: string[]) => runCli(args, { cwd: root, env });
    expect(cli(['session', 'pre']).status).toBe(0);
    expect(cli(['session', 'post']).status).toBe(0);
    expect(cli(['session', 'pre']).status).toBe(0);
    const it1 = path.join(root, '.cairn', 'iterations', '001');
    const it2 = path.join(root, '.cairn', 'iterations', '002');
    fs.mkdirSync(path.join(root, '.cairn', 'hooks'), { recursive: true });
    fs.mkdirSync(path.join(root, '.claude'), { recursive: true });
    for (const doc of [nested(MAX_JSON_DEPTH + 1), nested(50_000), `{"a":"${'x'.repeat(300_000)}"}`, '{"a":']) {
      // Readers that pass a bad file over: the command still does its job.
      fs.writeFileSync(path.join(it1, 'review.json'), doc);
      fs.writeFileSync(path.join(it2, 'agent.json'), doc);
      fs.writeFileSync(path.join(root, '.cairn', 'hooks', 'hook.log'), `${doc}\n`);
      const list = cli(['session', 'list', '--json']);
      expect(list.status, list.stderr).toBe(0);
      const run = runCli(['run', '--', 'true'], { cwd: root, env: { ...env, CAIRN_AGENT_SESSION: 's' } });
      expect(run.status, run.stderr).toBe(0);
      const status = cli(['hooks', 'status', '--json']);
      expect(status.status, status.stderr).toBe(0);
      // Readers that refuse: a coded error naming the file, exit 2, nothing written.
      fs.writeFileSync(path.join(root, '.claude', 'settings.json'), doc);
      const install = cli(['hooks', 'install', 'claude-code']);
      expect(install.status).toBe(2);
      expect(errorJson(install.stderr)).toMatchObject({ code: expect.stringMatching(/^ERR_SETTINGS/) as unknown, path: path.join(root, '.claude', 'settings.json') });
      expect(fs.readFileSync(path.join(root, '.claude', 'settings.json'), 'utf8')).toBe(doc);
      fs.writeFileSync(path.join(root, '.cairn', 'config.json'), doc);
      const pre = cli(['session', 'pre']);
      expect(pre.status).toBe(2);
      expect(errorJson(pre.stderr)).toMatchObject({ code: 'ERR_CONFIG', path: path.join(root, '.cairn', 'config.json') });
      expect(pre.stderr).not.toMatch(/RangeError|\n\s+at /);
      fs.rmSync(path.join(root, '.cairn', 'config.json'));
    }
  });
});
