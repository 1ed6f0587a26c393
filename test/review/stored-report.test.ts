/**
 * `cairn store show --report|--patch`: an iteration record read back from the store gives the
 * report `session report` prints where the iteration ran, and the patch `session diff` prints,
 * with no project checkout at hand — from a file store copied elsewhere, from PostgreSQL and
 * from S3 (Ceph RGW).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe as localDescribe, expect, it as localIt } from 'vitest';
import { errorJson, runCli } from '../support/cli.js';
import { serverSuite, uniqueName } from '../support/servers-stores.js';
import type { PgServerInfo, S3ServerInfo } from '../support/servers.js';
import { commitAll, trackedDirs, write } from '../session/helpers.js';

const { repo, dir: scratch } = trackedDirs();

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  return runCli(args, { cwd, env: { XDG_CACHE_HOME: scratch('cairn-cache-'), CAIRN_STORE: '', ...env } });
}

const JUNIT = `<?xml version="1.0"?>
<testsuites><testsuite name="s" tests="2">
<testcase name="adds" classname="math.test.ts"/>
<testcase name="divides by zero" classname="math.test.ts" file="math.test.ts"><failure message="expected Infinity to be 0">AssertionError</failure></testcase>
</testsuite></testsuites>`;

/** A finished iteration (a modification, a rename, an addition, a failing test) saved to `store`. */
function savedIteration(storeArgs: string[], env: Record<string, string> = {}): string {
  const root = repo();
  write(root, 'a.txt', 'one\ntwo\nthree\n');
  write(root, 'old/name.txt', 'moved as it is\n');
  commitAll(root, 'init');
  expect(cli(['session', 'pre'], root).status).toBe(0);
  write(root, 'a.txt', 'one\nTWO\nthree\nfour\n');
  fs.mkdirSync(path.join(root, 'new'));
  fs.renameSync(path.join(root, 'old/name.txt'), path.join(root, 'new/name.txt'));
  write(root, 'added.txt', 'x\n');
  write(root, 'junit.xml', JUNIT);
  const post = cli(['session', 'post', ...storeArgs], root, env);
  expect(post.stderr).toContain('iteration record saved to the store');
  expect(post.status).toBe(0);
  return root;
}

/**
 * The report without its first line (the iteration's directory, relative where it ran) and its
 * `restored:` line (restores happen in the project after the record is saved; the store does not know).
 */
const body = (report: string): string => report.slice(report.indexOf('\n') + 1).replace(/^ {2}restored: .*\n/m, '');

localDescribe('cairn store show --report (file store)', () => {
  localIt('prints the report session report prints, from a store copied away from the project', () => {
    const root = savedIteration([]);
    const local = cli(['session', 'report'], root);
    expect(local.status).toBe(0);
    const patch = cli(['session', 'diff', '--patch'], root).stdout;

    // Another machine: only the store, no project, no iteration directories.
    const elsewhere = scratch('reviewer-');
    fs.cpSync(path.join(root, '.cairn', 'store'), path.join(elsewhere, 'store'), { recursive: true });
    fs.rmSync(root, { recursive: true, force: true });
    const shown = cli(['store', 'show', '--store', 'file:store', '--session', 'default', '--report'], elsewhere);
    expect(shown.stderr).toBe('');
    expect(shown.status).toBe(0);
    expect(body(shown.stdout)).toBe(body(local.stdout));
    expect(shown.stdout).toMatch(/\n {2}M +a\.txt +\+2 -1\n/);
    expect(shown.stdout).toMatch(/\n {2}R100 +old\/name\.txt → new\/name\.txt/);
    expect(shown.stdout).toContain('✗ divides by zero (math.test.ts): expected Infinity to be 0');

    const stored = cli(['store', 'show', '--store', 'file:store', '--session', 'default', '--patch'], elsewhere);
    expect(stored.status).toBe(0);
    expect(stored.stdout).toBe(patch);
    expect(stored.stdout).toContain('rename from old/name.txt');
  });

  localIt('addresses a history record by --id, and refuses a snapshot that is not an iteration record (exit 2)', () => {
    const root = savedIteration([]);
    const list = JSON.parse(cli(['store', 'list', '--session', 'default', '--json'], root).stdout) as { locations: Array<{ ids: string[] }> };
    const id = list.locations[0]?.ids[0] as string;
    const byId = cli(['store', 'show', '--session', 'default', '--id', id, '--report'], root);
    expect(byId.status).toBe(0);
    expect(byId.stdout).toContain('Files changed (working tree, committed or not): 4, +8 -1');
    expect(byId.stdout.split('\n')[0]).toBe(`Iteration ${path.join('.cairn', 'iterations', '001')}`);

    const other = path.join(root, '.cairn', 'store', 'notes', 'scopes', 'agent', 'bot', 'snapshots');
    fs.mkdirSync(other, { recursive: true });
    fs.writeFileSync(path.join(other, 'snapshot_latest.json'), JSON.stringify({ scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data: { step: 1 }, appData: {} }));
    const wrong = cli(['store', 'show', '--session', 'notes', '--scope-id', 'bot', '--report', '--json'], root);
    expect(wrong.status).toBe(2);
    const notRecord = cli(['store', 'show', '--session', 'notes', '--scope-id', 'bot', '--report'], root);
    expect(notRecord.status).toBe(2);
    expect(notRecord.stderr).toContain('not an iteration record');
    expect(errorJson(cli(['store', 'show', '--session', 'default', '--report', '--patch'], root).stderr)).toMatchObject({ code: 'ERR_USAGE' });
  });
});

const { describe, it, server } = serverSuite<PgServerInfo>('pg');

describe('cairn store show --report (PostgreSQL)', () => {
  it('prints the report and the patch of a record session post saved to PostgreSQL', () => {
    const url = `${server().url}${server().url.includes('?') ? '&' : '?'}schema=${uniqueName('review')}`;
    const root = savedIteration(['--store', url]);
    const local = cli(['session', 'report'], root).stdout;
    const elsewhere = scratch('reviewer-');
    const shown = cli(['store', 'show', '--store', url, '--session', 'default', '--report'], elsewhere);
    expect(shown.stderr).toBe('');
    expect(shown.status).toBe(0);
    expect(body(shown.stdout)).toBe(body(local));
    expect(cli(['store', 'show', '--store', url, '--session', 'default', '--patch'], elsewhere).stdout).toBe(cli(['session', 'diff'], root).stdout);
  });
});

const s3 = serverSuite<S3ServerInfo>('s3');

s3.describe('cairn store show --report (S3)', () => {
  s3.it('prints the report and the patch of a record session post saved to S3, credentials only in the environment', () => {
    const info = s3.server();
    const url = `s3://${info.bucket}/${uniqueName('review')}?endpoint=${encodeURIComponent(info.endpoint)}&region=us-east-1&forcePathStyle=1`;
    const creds = { AWS_ACCESS_KEY_ID: info.accessKeyId, AWS_SECRET_ACCESS_KEY: info.secretAccessKey };
    const root = savedIteration(['--store', url], creds);
    const local = cli(['session', 'report'], root).stdout;
    const patch = cli(['session', 'diff'], root).stdout;

    const elsewhere = scratch('reviewer-');
    const shown = cli(['store', 'show', '--store', url, '--session', 'default', '--report'], elsewhere, creds);
    expect(shown.stderr).toBe('');
    expect(shown.status).toBe(0);
    expect(body(shown.stdout)).toBe(body(local));
    expect(shown.stdout).toMatch(/\n {2}R100 +old\/name\.txt → new\/name\.txt/);
    expect(shown.stdout).toContain('✗ divides by zero (math.test.ts): expected Infinity to be 0');
    const stored = cli(['store', 'show', '--store', url, '--session', 'default', '--patch'], elsewhere, creds);
    expect(stored.stderr).toBe('');
    expect(stored.status).toBe(0);
    expect(stored.stdout).toBe(patch);
    expect(stored.stdout).toContain('rename from old/name.txt');
  });
});
