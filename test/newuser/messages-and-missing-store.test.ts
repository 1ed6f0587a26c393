/**
 * Issue 23, items 4 and 5: messages that point the wrong way or hide what exists, and a mistyped
 * store passing as a healthy empty one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStorage, uuidV7 } from '../../src/store/index.js';
import { errorJson, runCli } from '../support/cli.js';
import { commitAll, trackedDirs, write } from '../session/helpers.js';

const { repo, dir: scratch } = trackedDirs();

async function storeWithOneSession(): Promise<string> {
  const cwd = scratch('cairn-store-');
  const storage = new FileStorage(path.join(cwd, '.cairn', 'store'));
  const snapshot = { scope: 'agent' as const, schemaVersion: '1.0', createdAt: new Date().toISOString(), data: {}, appData: {} };
  await storage.saveSnapshot({ location: { sessionId: 'default', scope: 'agent', scopeId: 'iterations' }, snapshotId: uuidV7(), isLatest: true, snapshot });
  await storage.saveSnapshot({ location: { sessionId: 'default', scope: 'multiAgent', scopeId: 'graph-1' }, snapshotId: uuidV7(), isLatest: true, snapshot: { ...snapshot, scope: 'multiAgent' } });
  return cwd;
}

const store = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => runCli(['store', ...args], { cwd, env: { CAIRN_STORE: '', ...env } });

describe('session report with an iteration number', () => {
  it('finds `001` under the project\'s iterations, not under the current directory', () => {
    const root = repo();
    write(root, 'a.txt', 'a\n');
    commitAll(root, 'init');
    const env = { XDG_CACHE_HOME: path.join(root, '.git', 'xdg') };
    expect(runCli(['session', 'pre'], { cwd: root, env }).status).toBe(0);
    expect(runCli(['session', 'post', '--no-store'], { cwd: root, env }).status).toBe(0);
    const r = runCli(['session', 'report', '001'], { cwd: root, env });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('001');
  });

  it('says which iterations exist when the one named is not there (a usage error), without talking about capturing', () => {
    const root = repo();
    write(root, 'a.txt', 'a\n');
    commitAll(root, 'init');
    const env = { XDG_CACHE_HOME: path.join(root, '.git', 'xdg') };
    expect(runCli(['session', 'pre'], { cwd: root, env }).status).toBe(0);
    const r = runCli(['session', 'report', '007'], { cwd: root, env });
    expect(r.status).toBe(2);
    const err = errorJson(r.stderr);
    expect(err.code).toBe('ERR_USAGE');
    expect(err.message).not.toContain('cannot capture');
    expect(err.message).toContain('001');
  });
});

describe('store messages', () => {
  it('store show without --scope-id names the scope ids the session has', async () => {
    const cwd = await storeWithOneSession();
    const r = store(['show', '--session', 'default'], cwd);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--scope-id');
    expect(r.stderr).toContain('iterations');
    expect(r.stderr).toContain('--scope multiAgent --scope-id graph-1');
  });

  it('store delete-session of a session that does not exist says so and exits 1', async () => {
    const cwd = await storeWithOneSession();
    const r = store(['delete-session', '--session', 'nosuch'], cwd);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(errorJson(r.stderr).code).toBe('ERR_NOT_FOUND');
    expect(errorJson(r.stderr).message).toContain('default');
  });

  it('an S3 store without credentials names the AWS_* variables and the URL parameters', () => {
    const cwd = scratch();
    const home = scratch('cairn-home-');
    const env: NodeJS.ProcessEnv = { HOME: home, AWS_EC2_METADATA_DISABLED: 'true', AWS_CONFIG_FILE: path.join(home, 'none'), AWS_SHARED_CREDENTIALS_FILE: path.join(home, 'none') };
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI']) env[k] = '';
    const r = runCli(['store', 'list', '--store', 's3://bucket/p?endpoint=http://127.0.0.1:9&forcePathStyle=1'], { cwd, env: { ...env, CAIRN_STORE: '' } });
    expect(r.status).toBe(1);
    const err = errorJson(r.stderr);
    expect(err.code).toBe('ERR_S3_CREDENTIALS');
    for (const text of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'endpoint', 'region']) expect(err.message).toContain(text);
  });
});

describe('a store that was never created', () => {
  it('is an error for store verify and store list, not an empty healthy store', () => {
    const cwd = scratch();
    for (const sub of [['verify'], ['list'], ['du'], ['show', '--session', 's', '--scope-id', 'x']]) {
      const r = store([...sub, '--store', '/nonexistent/cairn-store'], cwd);
      expect(r.status, sub.join(' ')).toBe(1);
      const err = errorJson(r.stderr);
      expect(err.code).toBe('ERR_STORE_NOT_FOUND');
      expect(err.message).toContain('/nonexistent/cairn-store');
      expect(r.stdout).toBe('');
    }
    expect(fs.existsSync('/nonexistent')).toBe(false);
  });

  it('an existing empty directory is still an empty store', () => {
    const cwd = scratch();
    fs.mkdirSync(path.join(cwd, 'empty'));
    const r = store(['verify', '--store', 'file:empty'], cwd);
    expect(r.status).toBe(0);
  });
});
