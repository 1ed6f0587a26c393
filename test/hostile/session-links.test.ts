/**
 * Hostile trees, session side: links (to an outside directory, an outside file, nowhere, and
 * themselves) planted at every component of every path `session pre/post/prune` and the default
 * store use, through the library (every component × kind) and through the CLI and MCP (the
 * reported cases). Canaries outside must stay byte-identical; nothing outside may be read into a record.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SnapshotManager, createNextIterationDir, pruneIterationDirs } from '../../src/session/index.js';
import { FileStorage } from '../../src/store/index.js';
import { errorJson, runCli } from '../support/cli.js';
import { git } from '../support/git.js';
import { call, connect, errorOf, serverEnv } from '../mcp/support.js';
import { expectOutsideIntact, LINK_KINDS, makeOutside, plantLink, type Outside, printFigures } from './support.js';

afterAll(() => printFigures('session-links'));

let tmp: string;
let root: string;
let outside: Outside;
let cache: string;
beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-hostile-')));
  root = path.join(tmp, 'project');
  fs.mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(root, 'app.ts'), 'export {};\n');
  outside = makeOutside(path.join(tmp, 'outside'));
  cache = path.join(tmp, 'cache');
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Every directory and file below the project root that session commands open, write or delete. */
const SESSION_COMPONENTS = [
  '.cairn',
  '.cairn/.gitignore',
  '.cairn/inventories',
  '.cairn/inventories/objects',
  '.cairn/inventories/objects/zz',
  '.cairn/inventories/packed',
  '.cairn/inventories/packed/packs',
  '.cairn/inventories/refs',
  '.cairn/iterations',
  '.cairn/iterations/001',
  '.cairn/iterations/001/pre-snapshot.json',
  '.cairn/store',
  '.cairn/store/default',
  '.cairn/store/default/scopes',
  '.aiwg',
  '.aiwg/ralph',
  '.aiwg/ralph/current-loop.json',
  'package.json',
];

/** The canaries' contents (a link's own target path may be recorded; what it points to never). */
const OUTSIDE_SECRET = /canary\\?":true|secret\\?":\\?"outside|not\\?":\\?"yours|object-like file/;

/** Runs pre, post, save, load, list, delete-session and both prunes through the library; returns what was recorded. */
async function wholeSession(): Promise<string> {
  const manager = new SnapshotManager(root, { cacheDir: cache });
  let recorded = '';
  const step = async (run: () => unknown): Promise<void> => {
    try {
      recorded += JSON.stringify((await run()) ?? null);
    } catch (e) {
      // The only acceptable failure is a coded refusal, never a stray error.
      expect((e as { code?: string }).code, String(e)).toMatch(/^ERR_CONTAINMENT$|^ERR_NOT_FOUND$/);
    }
  };
  let iterationDir = path.join(root, '.cairn', 'iterations', '001');
  await step(() => (iterationDir = createNextIterationDir(root)));
  await step(() => manager.capturePreSnapshot(root, iterationDir));
  await step(() => manager.capturePostSnapshot(root, iterationDir));
  const store = new FileStorage(path.join(root, '.cairn', 'store'), { within: root });
  const location = { sessionId: 'default', scope: 'agent' as const, scopeId: 'iterations' };
  const snapshot = { scope: 'agent' as const, schemaVersion: '1.0', createdAt: new Date().toISOString(), data: { aiwg: manager.captureAiwgState(root), keyFiles: manager.captureKeyFiles(root) } as never, appData: {} };
  await step(() => store.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot }));
  await step(() => store.saveSnapshot({ location, snapshotId: '1', isLatest: false, snapshot }));
  await step(() => store.loadSnapshot({ location }));
  await step(() => store.listSnapshotIds({ location }));
  await step(() => store.deleteSession({ sessionId: 'default' }));
  await step(() => pruneIterationDirs(root, 0));
  await step(() => manager.pruneInventories({ graceMs: 0 }));
  return recorded;
}

describe('hostile tree: session and default store (library)', () => {
  for (const component of SESSION_COMPONENTS) {
    it(`a link planted at ${component}, of every kind, never lets cairn read, write or delete outside`, async () => {
      for (const kind of LINK_KINDS) {
        fs.rmSync(path.join(root, '.cairn'), { recursive: true, force: true });
        fs.rmSync(path.join(root, '.aiwg'), { recursive: true, force: true });
        fs.mkdirSync(path.join(root, '.aiwg', 'ralph'), { recursive: true });
        fs.writeFileSync(path.join(root, '.aiwg', 'ralph', 'current-loop.json'), '{"loop":1}');
        fs.mkdirSync(path.join(root, '.cairn', 'inventories', 'objects'), { recursive: true });
        fs.mkdirSync(path.join(root, '.cairn', 'iterations', '001'), { recursive: true });
        fs.mkdirSync(path.join(root, '.cairn', 'store', 'default'), { recursive: true });
        plantLink(path.join(root, component), kind, outside);
        const recorded = await wholeSession();
        expect(recorded).not.toMatch(OUTSIDE_SECRET);
        expectOutsideIntact(outside);
      }
    });
  }
});

function cli(args: string[]) {
  return runCli(args, { cwd: root, env: { XDG_CACHE_HOME: cache } });
}

describe('hostile tree: the reported cases through the CLI and MCP', () => {
  it('session prune deletes nothing through a refs or objects/<fan> link (issue 20, item 1)', () => {
    expect(cli(['session', 'pre']).status).toBe(0);
    // A stray link among the fan-out directories is passed over; the prune itself goes ahead.
    plantLink(path.join(root, '.cairn', 'inventories', 'objects', 'zz'), 'outside-dir', outside);
    const r = cli(['session', 'prune', '--keep-last', '0', '--grace-minutes', '0']);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.lstatSync(path.join(root, '.cairn', 'inventories', 'objects', 'zz')).isSymbolicLink()).toBe(true);
    expectOutsideIntact(outside);
    // A link in place of refs/ is refused with a coded error: nothing is collected through it.
    plantLink(path.join(root, '.cairn', 'inventories', 'refs'), 'outside-dir', outside);
    const refused = cli(['session', 'prune', '--grace-minutes', '0']);
    expect(refused.status).toBe(1);
    expect(errorJson(refused.stderr).code).toBe('ERR_CONTAINMENT');
    expectOutsideIntact(outside);
  });

  it('a .cairn/store link neither receives the record of session post nor is emptied by delete-session (item 2)', () => {
    expect(cli(['session', 'pre']).status).toBe(0);
    plantLink(path.join(root, '.cairn', 'store'), 'outside-dir', outside);
    const post = cli(['session', 'post']);
    expect(post.status).toBe(1);
    expect(errorJson(post.stderr).code).toBe('ERR_CONTAINMENT');
    const del = cli(['store', 'delete-session', '--session', 'default']);
    expect(del.status).toBe(1);
    expect(errorJson(del.stderr).code).toBe('ERR_CONTAINMENT');
    expectOutsideIntact(outside);
  });

  it('an objects or refs link makes session pre refuse, over the CLI and over MCP, writing nothing outside (item 2)', async () => {
    for (const at of ['objects', 'refs']) {
      fs.rmSync(path.join(root, '.cairn'), { recursive: true, force: true });
      plantLink(path.join(root, '.cairn', 'inventories', at), 'outside-dir', outside);
      const r = cli(['session', 'pre']);
      expect(r.status, r.stderr).toBe(1);
      expect(errorJson(r.stderr).code).toBe('ERR_CONTAINMENT');
      expectOutsideIntact(outside);
    }
    const { client, close } = await connect(['--root', root], { cwd: root, env: serverEnv(cache) });
    try {
      const result = await call(client, 'cairn_session_pre', { root });
      expect(errorOf(result).code).toBe('ERR_CONTAINMENT');
    } finally {
      await close();
    }
    expectOutsideIntact(outside);
  });

  it('state dir and key file links are not followed, and --state-dir outside the root is a usage error (item 3)', () => {
    plantLink(path.join(root, '.aiwg', 'ralph', 'current-loop.json'), 'outside-file', outside);
    fs.copyFileSync(path.join(outside.dir, 'current-loop.json'), path.join(tmp, 'loop-copy.json'));
    fs.symlinkSync(path.join(outside.dir, 'current-loop.json'), path.join(root, '.aiwg', 'ralph', 'x.json'));
    plantLink(path.join(root, 'package.json'), 'outside-file', outside);
    const pre = cli(['session', 'pre', '--json']);
    expect(pre.status, pre.stderr).toBe(0);
    const doc = JSON.parse(pre.stdout) as { pre: { keyFiles: { path: string }[]; aiwg: { files: unknown[]; ralphState: unknown } } };
    expect(doc.pre.keyFiles).toEqual([]);
    expect(doc.pre.aiwg).toEqual({ files: [], ralphState: null });
    fs.rmSync(path.join(root, '.aiwg'), { recursive: true });
    plantLink(path.join(root, '.aiwg'), 'outside-dir', outside);
    const linked = JSON.parse(cli(['session', 'pre', '--json']).stdout) as typeof doc;
    expect(linked.pre.aiwg).toEqual({ files: [], ralphState: null });
    const before = fs.readdirSync(path.join(root, '.cairn', 'iterations'));
    const etc = cli(['session', 'pre', '--state-dir', '/etc']);
    expect(etc.status).toBe(2);
    expect(errorJson(etc.stderr).code).toBe('ERR_CONTAINMENT');
    expect(fs.readdirSync(path.join(root, '.cairn', 'iterations'))).toEqual(before);
    expectOutsideIntact(outside);
  });
});

describe('hostile tree: the plain-path readers and writers the matrix found', () => {
  const commit = (): void => {
    git(root, 'add', '-A');
    git(root, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'c');
  };

  it('session list never takes a review.json link as the iteration review', () => {
    commit();
    expect(cli(['session', 'pre']).status).toBe(0);
    fs.writeFileSync(path.join(root, 'app.ts'), 'export const b = 1;\n');
    expect(cli(['session', 'post']).status).toBe(0);
    const review = path.join(root, '.cairn', 'iterations', '001', 'review.json');
    const forged = JSON.parse(fs.readFileSync(review, 'utf8')) as { summary: Record<string, unknown> };
    forged.summary.filesChanged = 4242;
    fs.writeFileSync(path.join(tmp, 'forged-review.json'), JSON.stringify(forged));
    fs.rmSync(review);
    fs.symlinkSync(path.join(tmp, 'forged-review.json'), review);
    const r = cli(['session', 'list', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('4242');
  });

  it('hooks install, uninstall and status never write or read through a .claude link (project and user scope)', () => {
    const home = path.join(tmp, 'home');
    fs.mkdirSync(home);
    for (const [base, scope] of [[root, 'project'], [home, 'user']] as const) {
      plantLink(path.join(base, '.claude'), 'outside-dir', outside);
      for (const action of ['install', 'uninstall']) {
        const r = runCli(['hooks', action, 'claude-code', '--scope', scope], { cwd: root, env: { HOME: home, XDG_CACHE_HOME: cache } });
        expect(r.status, r.stderr).toBe(1);
        expect(errorJson(r.stderr).code).toBe('ERR_CONTAINMENT');
      }
      expectOutsideIntact(outside);
    }
    fs.writeFileSync(path.join(outside.dir, 'settings.json'), '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"cairn hook claude-code"}]}]}}\n');
    outside.canaries.set(path.join(outside.dir, 'settings.json'), fs.readFileSync(path.join(outside.dir, 'settings.json')));
    const status = runCli(['hooks', 'status', 'claude-code', '--json'], { cwd: root, env: { HOME: home, XDG_CACHE_HOME: cache } });
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).not.toContain('"installed": [\n            {');
    expectOutsideIntact(outside);
  });

  it('the agent hook writes its log and locks, and reads its stage note, never through a link', () => {
    commit();
    plantLink(path.join(root, '.cairn', 'hooks'), 'outside-dir', outside);
    const note = path.join(outside.dir, 'TASK-0001.snapshot.md');
    fs.writeFileSync(note, '---\nstage: secret\n---\nsecret outside note\n');
    outside.canaries.set(note, fs.readFileSync(note));
    plantLink(path.join(root, 'datarim', 'snapshots'), 'outside-dir', outside);
    for (const event of ['SessionStart', 'UserPromptSubmit', 'Stop']) {
      const r = runCli(['hook', 'claude-code'], { cwd: root, env: { XDG_CACHE_HOME: cache }, input: JSON.stringify({ session_id: 's1', hook_event_name: event, cwd: root }) });
      expect(r.status).toBe(0);
      expect(r.stdout).not.toContain('secret outside note');
    }
    expectOutsideIntact(outside);
  });

  it('cairn run never takes an agent.json link as the iteration of its agent session', () => {
    commit();
    expect(cli(['session', 'pre']).status).toBe(0);
    expect(cli(['session', 'pre']).status).toBe(0);
    fs.writeFileSync(path.join(tmp, 'agent.json'), '{"agent":"claude-code","sessionId":"s-out"}');
    fs.symlinkSync(path.join(tmp, 'agent.json'), path.join(root, '.cairn', 'iterations', '001', 'agent.json'));
    const r = runCli(['run', '--', 'true'], { cwd: root, env: { XDG_CACHE_HOME: cache, CAIRN_AGENT_SESSION: 's-out' } });
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readdirSync(path.join(root, '.cairn', 'iterations', '001')).filter((n) => n.startsWith('run-'))).toEqual([]);
    expect(fs.readdirSync(path.join(root, '.cairn', 'iterations', '002')).filter((n) => n.startsWith('run-')).sort()).toEqual(['run-001.json', 'run-001.log']);
  });

  it('createFileSnapshot refuses a link in any component and a path outside the root', () => {
    fs.mkdirSync(path.join(outside.dir, 'src'));
    fs.writeFileSync(path.join(outside.dir, 'src', 'mod.ts'), 'outside');
    outside.canaries.set(path.join(outside.dir, 'src', 'mod.ts'), Buffer.from('outside'));
    plantLink(path.join(root, 'lib'), 'outside-dir', outside);
    const manager = new SnapshotManager(root, { cacheDir: cache });
    expect(() => manager.createFileSnapshot(root, path.join(root, 'lib', 'src', 'mod.ts'))).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT' }) as Error);
    expect(() => manager.createFileSnapshot(root, path.join(outside.dir, 'canary.json'))).toThrow(expect.objectContaining({ code: 'ERR_CONTAINMENT' }) as Error);
    expect(manager.createFileSnapshot(root, path.join(root, 'app.ts')).path).toBe('app.ts');
  });
});
