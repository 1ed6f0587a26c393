/**
 * A client must not read or write outside the --root directories by any argument: `..`,
 * absolute paths, or symlinks planted inside a root that point out of it. Every test ends by
 * proving the outside directory is exactly as it was.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, connect, errorOf, git, listTree, makeTempDir, okText, removeDir, serverEnv, structured, write, type Connected } from './support.js';

const SECRET = 'outside secret: must never reach the client';
const NOTE = ['---', 'task_id: DEV-0001', 'stage: plan', 'command: /dr-plan', 'captured_at: 2026-05-21T13:45:00Z', 'captured_by: agent', 'recommended_next: /dr-do', '---', SECRET, ''].join('\n');

let tmp: string;
let root: string;
let outside: string;
let outsideBefore: string[];
let server: Connected;

/** A project directory inside the root, optionally a git repo. */
function project(name: string, withGit = false): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  write(dir, 'README.md', '# project\n');
  if (withGit) {
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'initial');
  }
  return dir;
}

beforeAll(async () => {
  tmp = makeTempDir();
  root = path.join(tmp, 'root');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(root);
  write(outside, 'secret.txt', SECRET);
  write(outside, 'snapshots/DEV-0001.snapshot.md', NOTE);
  write(outside, 'iter/pre-snapshot.json', JSON.stringify({ timestamp: '2026-01-01T00:00:00.000Z', git: { branch: 'x', commit: 'y', status: '' }, keyFiles: [], aiwg: {} }));
  outsideBefore = listTree(outside).map((p) => `${p}:${fs.lstatSync(path.join(outside, p)).size}`);
  server = await connect(['--root', root], { env: serverEnv(path.join(tmp, 'cache')) });
});

afterEach(() => {
  // Nothing was created, removed or resized outside the root.
  expect(listTree(outside).map((p) => `${p}:${fs.lstatSync(path.join(outside, p)).size}`)).toEqual(outsideBefore);
  // The engine's stat cache (XDG_CACHE_HOME) is the one place the server may write outside the roots.
  expect(fs.readdirSync(tmp).filter((n) => n !== 'cache').sort()).toEqual(['outside', 'root']);
});

afterAll(async () => {
  await server.close();
  removeDir(tmp);
});

describe('iterationDir', () => {
  it('refuses .. and absolute paths outside the root with ERR_CONTAINMENT', async () => {
    const p = project('p-dotdot', true);
    for (const iterationDir of ['../../x', '../outside-iter', '../../outside/iter2', path.join(outside, 'iter3'), '/tmp/cairn-mcp-escape', path.join(p, '..', '..', 'x')]) {
      for (const tool of ['cairn_session_pre', 'cairn_session_post']) {
        const err = errorOf(await call(server.client, tool, { root: p, iterationDir }));
        expect(err.code, `${tool} ${iterationDir}`).toBe('ERR_CONTAINMENT');
        expect(err.path).toBe(iterationDir);
      }
    }
    expect(fs.existsSync('/tmp/cairn-mcp-escape')).toBe(false);
    expect(fs.existsSync(path.join(root, 'x'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'outside-iter'))).toBe(false);
  });

  it('refuses a symlink inside the root that points outside, as the directory or as a parent of it', async () => {
    const p = project('p-link', true);
    fs.symlinkSync(outside, path.join(p, 'escape'));
    for (const iterationDir of ['escape', 'escape/new-iter', 'escape/iter', path.join(p, 'escape', 'deeper', 'x')]) {
      expect(errorOf(await call(server.client, 'cairn_session_pre', { root: p, iterationDir })).code, iterationDir).toBe('ERR_CONTAINMENT');
      expect(errorOf(await call(server.client, 'cairn_session_post', { root: p, iterationDir })).code, iterationDir).toBe('ERR_CONTAINMENT');
    }
  });

  it('refuses a dangling or looping link as the iterationDir or its parent, so nothing is created at its target', async () => {
    const p = project('p-dangling', true);
    fs.symlinkSync(path.join(outside, 'not-yet'), path.join(p, 'dangling'));
    fs.symlinkSync(path.join(p, 'loop'), path.join(p, 'loop'));
    for (const iterationDir of ['dangling', 'dangling/sub', 'loop', 'loop/sub']) {
      expect(errorOf(await call(server.client, 'cairn_session_pre', { root: p, iterationDir })).code, iterationDir).toBe('ERR_CONTAINMENT');
    }
    expect(fs.existsSync(path.join(outside, 'not-yet'))).toBe(false);
  });

  it('accepts a directory inside the root whose name merely starts with ..', async () => {
    const p = project('p-dotname', true);
    const pre = okText<{ iterationDir: string }>(await call(server.client, 'cairn_session_pre', { root: p, iterationDir: '..iterations/one' }));
    expect(pre.iterationDir).toBe(path.join(p, '..iterations', 'one'));
    expect(fs.existsSync(path.join(pre.iterationDir, 'pre-snapshot.json'))).toBe(true);
  });

  it('does not read a pre-snapshot that is a link to a file outside', async () => {
    const p = project('p-prelink', true);
    fs.mkdirSync(path.join(p, 'iter'));
    fs.symlinkSync(path.join(outside, 'iter', 'pre-snapshot.json'), path.join(p, 'iter', 'pre-snapshot.json'));
    const err = errorOf(await call(server.client, 'cairn_session_post', { root: p, iterationDir: 'iter', save: false }));
    expect(err.code).toBe('ERR_CONTAINMENT');
  });

  it('refuses to keep iterations or inventories when .cairn, or .cairn/iterations, is a link out of the root', async () => {
    const a = project('p-cairnlink', true);
    fs.symlinkSync(outside, path.join(a, '.cairn'));
    expect(errorOf(await call(server.client, 'cairn_session_pre', { root: a })).code).toBe('ERR_CONTAINMENT');
    expect(errorOf(await call(server.client, 'cairn_session_pre', { root: a, iterationDir: 'iters/1' })).code).toBe('ERR_CONTAINMENT');
    expect(errorOf(await call(server.client, 'cairn_session_post', { root: a })).code).toBe('ERR_CONTAINMENT');
    const b = project('p-iterlink', true);
    fs.mkdirSync(path.join(b, '.cairn'));
    fs.symlinkSync(outside, path.join(b, '.cairn', 'iterations'));
    expect(errorOf(await call(server.client, 'cairn_session_pre', { root: b })).code).toBe('ERR_CONTAINMENT');
  });
});

describe('root', () => {
  it('refuses a root that is a symlink inside the allowed root pointing outside, on every tool that takes one', async () => {
    const link = path.join(root, 'to-outside');
    fs.symlinkSync(outside, link);
    const stage = { task: 'DEV-0001', stage: 'plan', command: '/dr-plan', recommendedNext: '/dr-do', body: 'x' };
    for (const [tool, args] of [
      ['cairn_repo_snapshot', {}],
      ['axiom_repo_snapshot', {}],
      ['cairn_session_pre', {}],
      ['cairn_session_post', {}],
      ['cairn_stage_write', stage],
      ['cairn_stage_read', { task: 'DEV-0001' }],
    ] as const) {
      for (const r of [link, path.join(link, 'snapshots'), `${root}/../outside`]) {
        const result = await call(server.client, tool, { ...args, root: r });
        const err = errorOf(result);
        expect(err.code, `${tool} ${r}`).toBe('ERR_ROOT_NOT_ALLOWED');
        expect(JSON.stringify(result)).not.toContain(SECRET);
      }
    }
    fs.unlinkSync(link);
  });
});

describe('stage notes', () => {
  const note = { task: 'DEV-0001', stage: 'plan', command: '/dr-plan', recommendedNext: '/dr-do', body: 'new body' };

  it('refuses to write or read through a datarim directory that links outside', async () => {
    const p = project('p-datarim');
    fs.symlinkSync(outside, path.join(p, 'datarim'));
    expect(errorOf(await call(server.client, 'cairn_stage_write', { ...note, root: p })).code).toBe('ERR_CONTAINMENT');
    const read = await call(server.client, 'cairn_stage_read', { root: p, task: 'DEV-0001' });
    expect(errorOf(read).code).toBe('ERR_CONTAINMENT');
    expect(JSON.stringify(read)).not.toContain(SECRET);
  });

  it('writes and reads a note through a datarim link that stays inside the root', async () => {
    const p = project('p-datarim-inside');
    fs.mkdirSync(path.join(p, 'notes-real'));
    fs.symlinkSync('notes-real', path.join(p, 'datarim'));
    const written = okText<{ path: string }>(await call(server.client, 'cairn_stage_write', { ...note, root: p }));
    expect(written.path).toBe(path.join(fs.realpathSync(p), 'notes-real', 'snapshots', 'DEV-0001.snapshot.md'));
    expect(okText<{ body: string }>(await call(server.client, 'cairn_stage_read', { root: p, task: 'DEV-0001' })).body).toBe('new body');
  });

  it('refuses a stage root outside the allowed roots with ERR_ROOT_NOT_ALLOWED', async () => {
    expect(errorOf(await call(server.client, 'cairn_stage_write', { ...note, root: outside })).code).toBe('ERR_ROOT_NOT_ALLOWED');
    expect(errorOf(await call(server.client, 'cairn_stage_read', { root: outside, task: 'DEV-0001' })).code).toBe('ERR_ROOT_NOT_ALLOWED');
  });

  it('refuses a dangling datarim link, creating nothing at its target', async () => {
    const p = project('p-datarim-dangling');
    fs.symlinkSync(path.join(outside, 'datarim-target'), path.join(p, 'datarim'));
    expect(errorOf(await call(server.client, 'cairn_stage_write', { ...note, root: p })).code).toBe('ERR_CONTAINMENT');
    expect(errorOf(await call(server.client, 'cairn_stage_read', { root: p, task: 'DEV-0001' })).code).toBe('ERR_CONTAINMENT');
    expect(fs.existsSync(path.join(outside, 'datarim-target'))).toBe(false);
  });

  it('never reads a note file that links outside, and replaces the link (not its target) on write', async () => {
    const p = project('p-notelink');
    fs.mkdirSync(path.join(p, 'datarim', 'snapshots'), { recursive: true });
    const noteFile = path.join(p, 'datarim', 'snapshots', 'DEV-0001.snapshot.md');
    fs.symlinkSync(path.join(outside, 'snapshots', 'DEV-0001.snapshot.md'), noteFile);
    const read = await call(server.client, 'cairn_stage_read', { root: p, task: 'DEV-0001' });
    expect(['ERR_CONTAINMENT', 'ERR_SYMLINK']).toContain(errorOf(read).code);
    expect(JSON.stringify(read)).not.toContain(SECRET);
    const written = await call(server.client, 'cairn_stage_write', { ...note, root: p });
    if (!written.isError) {
      expect(fs.lstatSync(noteFile).isSymbolicLink()).toBe(false);
      expect(fs.readFileSync(noteFile, 'utf8')).toContain('new body');
    }
    expect(fs.readFileSync(path.join(outside, 'snapshots', 'DEV-0001.snapshot.md'), 'utf8')).toBe(NOTE);
  });
});

describe('snapshots', () => {
  it('records a link to an outside file without its size or digest, and does not follow a link to an outside directory', async () => {
    const p = project('p-snaplinks');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(p, 'leak'));
    fs.symlinkSync(outside, path.join(p, 'leakdir'));
    const result = await call(server.client, 'cairn_repo_snapshot', { root: p });
    const snap = structured<{ body: { files: Array<{ path: string; bytes: number; sha256?: string; kind: string }> } }>(result);
    expect(snap.body.files.find((f) => f.path === 'leak')).toEqual({ path: 'leak', bytes: 0, mode: '0644', kind: 'symlink' });
    expect(snap.body.files.some((f) => f.path.startsWith('leakdir/'))).toBe(false);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(JSON.stringify(result)).not.toContain(outside);
  });

  it('refuses globs that name outside paths', async () => {
    const p = project('p-globs');
    for (const glob of ['../outside/**', `${outside}/**`, '../../**', 'a/../../b']) {
      const result = await call(server.client, 'cairn_repo_snapshot', { root: p, include: [glob] });
      expect(errorOf(result).code, glob).toBe('ERR_CONTAINMENT');
    }
  });
});

describe('the default store', () => {
  it('refuses to open a store whose .cairn directory links outside the first root', async () => {
    const first = path.join(root, 'store-root');
    fs.mkdirSync(first);
    fs.symlinkSync(outside, path.join(first, '.cairn'));
    const other = await connect(['--root', first], { env: serverEnv(path.join(tmp, 'cache')) });
    try {
      expect(errorOf(await call(other.client, 'cairn_store_list')).code).toBe('ERR_CONTAINMENT');
      expect(errorOf(await call(other.client, 'cairn_store_show', { sessionId: 'default' })).code).toBe('ERR_CONTAINMENT');
      // A second call tries again (the failure is not cached) and still refuses.
      expect(errorOf(await call(other.client, 'cairn_store_list')).code).toBe('ERR_CONTAINMENT');
      expect(okText<{ snapshotDigest: string }>(await call(other.client, 'cairn_repo_snapshot')).snapshotDigest).toMatch(/^sha256:/);
    } finally {
      await other.close();
    }
  });
});
