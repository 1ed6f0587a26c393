/**
 * Issue 23, item 3: a second `session post` never rewrites a finished iteration or saves a second
 * store record for it; a second `session pre` says which iterations are still open, and `--amend`
 * takes the open iteration's pre-snapshot again instead of starting another.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorJson, runCli } from '../support/cli.js';
import { commitAll, trackedDirs, write } from '../session/helpers.js';
import { call, connect, errorOf, okText, serverEnv, type Connected } from '../mcp/support.js';

const { repo, dir: scratch } = trackedDirs();

function cli(args: string[], cwd: string) {
  return runCli(args, { cwd, env: { XDG_CACHE_HOME: path.join(cwd, '.xdg') } });
}

function project(): string {
  const root = repo();
  write(root, '.gitignore', '.xdg/\n');
  write(root, 'a.txt', 'a\n');
  commitAll(root, 'init');
  return root;
}

function historyIds(root: string): string[] {
  const r = cli(['store', 'list', '--session', 'default', '--json'], root);
  expect(r.status).toBe(0);
  return (JSON.parse(r.stdout) as { locations: { ids: string[] }[] }).locations.flatMap((l) => l.ids);
}

describe('a second session post', () => {
  it('is refused with exit 3 and ERR_ITERATION_FINISHED: the post-snapshot and the store keep one record', () => {
    const root = project();
    expect(cli(['session', 'pre'], root).status).toBe(0);
    write(root, 'a.txt', 'changed\n');
    expect(cli(['session', 'post'], root).status).toBe(0);
    const postFile = path.join(root, '.cairn', 'iterations', '001', 'post-snapshot.json');
    const before = fs.readFileSync(postFile, 'utf8');
    expect(historyIds(root)).toHaveLength(1);

    const again = cli(['session', 'post'], root);
    expect(again.status).toBe(3);
    expect(errorJson(again.stderr).code).toBe('ERR_ITERATION_FINISHED');
    expect(errorJson(again.stderr).message).toContain('cairn session pre');
    expect(again.stdout).toBe('');
    expect(fs.readFileSync(postFile, 'utf8')).toBe(before);
    expect(historyIds(root)).toHaveLength(1);
  });

  it('is explained in session post --help', () => {
    const r = cli(['session', 'post', '--help'], scratch());
    expect(r.stdout).toMatch(/already finished/);
  });
});

describe('a second session pre', () => {
  it('names the iteration left open on stderr and starts the next one', () => {
    const root = project();
    expect(cli(['session', 'pre'], root).status).toBe(0);
    const r = cli(['session', 'pre'], root);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(path.join(root, '.cairn', 'iterations', '002'));
    expect(r.stderr).toMatch(/001 is still open/);
  });

  it('with --amend takes the open iteration\'s pre-snapshot again instead of starting another', () => {
    const root = project();
    expect(cli(['session', 'pre'], root).status).toBe(0);
    write(root, 'b.txt', 'made before the agent started\n');
    const r = cli(['session', 'pre', '--amend', '--json'], root);
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as { iterationDir: string }).iterationDir).toBe(path.join(root, '.cairn', 'iterations', '001'));
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations', '002'))).toBe(false);
    // b.txt is now part of the "before": the post does not count it as the agent's work.
    const post = cli(['session', 'post', '--json', '--no-store'], root);
    expect(post.status).toBe(0);
    expect((JSON.parse(post.stdout) as { filesAdded: string[] }).filesAdded).not.toContain('b.txt');
  });

  it('refuses an --iteration-dir that already holds a pre-snapshot (exit 3) unless --amend is given', () => {
    const root = project();
    expect(cli(['session', 'pre', '--iteration-dir', 'it'], root).status).toBe(0);
    const r = cli(['session', 'pre', '--iteration-dir', 'it'], root);
    expect(r.status).toBe(3);
    expect(errorJson(r.stderr).code).toBe('ERR_ITERATION_EXISTS');
    expect(cli(['session', 'pre', '--iteration-dir', 'it', '--amend'], root).status).toBe(0);
  });
});

describe('the MCP tools follow the same rule', () => {
  let root: string;
  let server: Connected;
  beforeAll(async () => {
    root = project();
    server = await connect(['--root', root], { env: serverEnv(path.join(root, '.xdg')) });
  });
  afterAll(async () => {
    await server.close();
  });

  it('cairn_session_post on a finished iteration is an ERR_ITERATION_FINISHED error and saves nothing more', async () => {
    const pre = okText<{ iterationDir: string }>(await call(server.client, 'cairn_session_pre'));
    okText(await call(server.client, 'cairn_session_post', { iterationDir: pre.iterationDir }));
    const second = await call(server.client, 'cairn_session_post', { iterationDir: pre.iterationDir });
    expect(errorOf(second).code).toBe('ERR_ITERATION_FINISHED');
    const ids = okText<{ ids: string[] }>(await call(server.client, 'cairn_store_list', { sessionId: 'default' })).ids;
    expect(ids).toHaveLength(1);
  });
});
