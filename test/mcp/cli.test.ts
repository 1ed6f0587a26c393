import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorJson, runCli } from '../support/cli.js';
import { call, connect, makeTempDir, okText, removeDir, serverEnv, write } from './support.js';

let tmp: string;

beforeAll(() => {
  tmp = makeTempDir();
});

afterAll(() => {
  removeDir(tmp);
});

describe('cairn mcp', () => {
  it('exits 2 without --root, saying the option is required, and prints nothing on stdout', () => {
    const r = runCli(['mcp'], { cwd: tmp, input: '' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--root/);
    expect(r.stdout).toBe('');
  });

  it('exits 2 with ERR_ROOT_NOT_DIR as JSON on stderr when a root does not exist', () => {
    const missing = path.join(tmp, 'missing');
    const r = runCli(['mcp', '--root', tmp, '--root', missing], { cwd: tmp, input: '' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    const err = errorJson(r.stderr);
    expect(err.code).toBe('ERR_ROOT_NOT_DIR');
    expect(err.path).toBe(missing);
    expect(err.message).toContain(missing);
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('exits 2 with ERR_ROOT_NOT_DIR when a root is a file', () => {
    const file = write(tmp, 'a-file.txt', 'x');
    const r = runCli(['mcp', '--root', file], { cwd: tmp, input: '' });
    expect(r.status).toBe(2);
    expect(errorJson(r.stderr).code).toBe('ERR_ROOT_NOT_DIR');
  });

  it('exits 2 on an unknown flag', () => {
    const r = runCli(['mcp', '--root', tmp, '--roots', tmp], { cwd: tmp, input: '' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown option/i);
  });

  it('explains itself in --help: the tools, the root rule and a client configuration', () => {
    const r = runCli(['mcp', '--help'], { cwd: tmp });
    expect(r.status).toBe(0);
    for (const text of ['--root', '--store', 'cairn_repo_snapshot', 'axiom_repo_snapshot', 'cairn_session_pre', 'cairn_session_post', 'cairn_stage_write', 'cairn_stage_read', 'cairn_store_list', 'cairn_store_show', 'ERR_CONTAINMENT', '"mcpServers"']) {
      expect(r.stdout).toContain(text);
    }
  });

  it('exits 0 when its stdin is already at its end, printing nothing on stdout', () => {
    const r = runCli(['mcp', '--root', tmp], { cwd: tmp, input: '' });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('resolves a relative --root against the working directory', async () => {
    const project = path.join(tmp, 'rel-project');
    write(project, 'hello.txt', 'hi\n');
    const server = await connect(['--root', '.'], { cwd: project, env: serverEnv(path.join(tmp, 'cache')) });
    try {
      const text = okText<{ paths: string[] }>(await call(server.client, 'cairn_repo_snapshot'));
      expect(text.paths).toEqual(['hello.txt']);
      const inside = okText<{ paths: string[] }>(await call(server.client, 'cairn_repo_snapshot', { root: project }));
      expect(inside.paths).toEqual(['hello.txt']);
    } finally {
      await server.close();
    }
  });
});
