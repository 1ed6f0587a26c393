/** cairn_session_restore over MCP: a dry run unless the caller says otherwise; dryRun false applies; undo reverts. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, connect, makeRepo, makeTempDir, removeDir, serverEnv, structured, write, git, type Connected } from './support.js';

let tmp: string;
let project: string;
let server: Connected;

beforeAll(async () => {
  tmp = makeTempDir();
  project = makeRepo();
  write(project, 'a.txt', 'before\n');
  git(project, 'add', '-A');
  git(project, 'commit', '-q', '-m', 'init');
  server = await connect(['--root', project], { env: serverEnv(path.join(tmp, 'cache')) });
});

afterAll(async () => {
  await server.close();
  removeDir(tmp);
  removeDir(project);
});

describe('cairn_session_restore', () => {
  it('reports without changing by default, applies with dryRun false, and undo reverts', async () => {
    await call(server.client, 'cairn_session_pre', {});
    write(project, 'a.txt', 'after\n');
    write(project, 'new.txt', 'new\n');
    await call(server.client, 'cairn_session_post', { save: false });
    const dry = structured<{ dryRun: boolean; changes: Array<{ path: string; action: string }> }>(await call(server.client, 'cairn_session_restore', {}));
    expect(dry.dryRun).toBe(true);
    expect(dry.changes.map((c) => `${c.action} ${c.path}`)).toEqual(['write a.txt', 'delete new.txt']);
    expect(fs.readFileSync(path.join(project, 'a.txt'), 'utf8')).toBe('after\n');
    const done = structured<{ dryRun: boolean; conflicts: unknown[] }>(await call(server.client, 'cairn_session_restore', { dryRun: false }));
    expect(done).toMatchObject({ dryRun: false, conflicts: [] });
    expect(fs.readFileSync(path.join(project, 'a.txt'), 'utf8')).toBe('before\n');
    expect(fs.existsSync(path.join(project, 'new.txt'))).toBe(false);
    await call(server.client, 'cairn_session_restore', { undo: true, dryRun: false });
    expect(fs.readFileSync(path.join(project, 'a.txt'), 'utf8')).toBe('after\n');
    expect(fs.readFileSync(path.join(project, 'new.txt'), 'utf8')).toBe('new\n');
  });
});
