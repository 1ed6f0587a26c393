/**
 * Issue 23, items 6-8: one exit-code table (seed codes kept and named), one error shape and a
 * human line on a terminal; one captured_by rule for every entry point; `session post --json`
 * and `store list` say what the MCP tool says.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { writeStageSnapshot } from '../../src/stage/index.js';
import { errorJson, runCli } from '../support/cli.js';
import { commitAll, trackedDirs, write } from '../session/helpers.js';
import { notePath, writeArgs } from '../stage/support.js';

const { repo, dir: scratch } = trackedDirs();

/** Runs the CLI in-process with a stderr that says it is a terminal. */
async function onTerminal(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = Object.assign(new PassThrough(), { isTTY: true });
  let stdout = '';
  let stderr = '';
  out.on('data', (c: Buffer) => (stdout += c.toString()));
  err.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await main(args, { stdout: out, stderr: err, env: { ...process.env, CAIRN_STORE: '' }, cwd });
  return { code, stdout, stderr };
}

describe('exit codes and error shapes', () => {
  it('cairn --help has one exit-code table that names the seed codes stage write and stage check keep', () => {
    const r = runCli(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Exit codes/);
    expect(r.stdout).toMatch(/stage write.*seed/);
    expect(r.stdout).toMatch(/stage check.*seed/);
    expect(r.stdout).toMatch(/stage show/);
  });

  it('a bad task id: stage write keeps the seed\'s 1, stage show and check give 2, all with the same JSON error shape under --json', () => {
    const dir = scratch();
    const write1 = runCli([...writeArgs({ root: dir, task: 'bad' }, dir), '--json'], { cwd: dir });
    const show = runCli(['stage', 'show', 'bad', '--root', dir, '--json'], { cwd: dir });
    expect(write1.status).toBe(1);
    expect(show.status).toBe(2);
    expect(write1.stdout).toBe('');
    expect(show.stdout).toBe('');
    const a = errorJson(write1.stderr);
    const b = errorJson(show.stderr);
    expect(a.code).toBe('ERR_INVALID_TASK_ID');
    expect(b.code).toBe('ERR_INVALID_TASK_ID');
    expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
    expect(runCli(['stage', 'show', '--help']).stdout).toMatch(/Exit codes/);
  });

  it('on a terminal an error is one human line plus a hint, not JSON; --json keeps the JSON', async () => {
    const cwd = scratch();
    const human = await onTerminal(['store', 'list', '--store', path.join(cwd, 'nope')], cwd);
    expect(human.code).toBe(1);
    const lines = human.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^cairn: store .*nope does not exist/);
    expect(lines[1]).toMatch(/^hint: /);
    expect(lines[1]).toContain('ERR_STORE_NOT_FOUND');
    const machine = await onTerminal(['store', 'list', '--store', path.join(cwd, 'nope'), '--json'], cwd);
    expect(errorJson(machine.stderr).code).toBe('ERR_STORE_NOT_FOUND');
  });
});

describe('captured_by has one rule: agent or operator', () => {
  it('stage write --captured-by robot exits 1 and writes nothing', () => {
    const dir = scratch();
    fs.mkdirSync(path.join(dir, 'datarim'));
    const r = runCli(writeArgs({ root: dir, capturedBy: 'robot' }, dir), { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('agent');
    expect(r.stderr).toContain('operator');
    expect(fs.existsSync(notePath(dir))).toBe(false);
  });

  it('the library rejects it with ERR_INVALID_CAPTURED_BY', async () => {
    const dir = scratch();
    await expect(writeStageSnapshot({ root: dir, task: 'TUNE-0001', stage: 'qa', command: '/dr-qa', capturedBy: 'robot', recommendedNext: '/dr-do', body: 'b' })).rejects.toMatchObject({ code: 'ERR_INVALID_CAPTURED_BY', exitCode: 1 });
  });

  it('stage check --validate-frontmatter finds a note that says captured_by: robot invalid', async () => {
    const dir = scratch();
    const { path: file } = await writeStageSnapshot({ root: dir, task: 'TUNE-0001', stage: 'qa', command: '/dr-qa', capturedBy: 'agent', recommendedNext: '/dr-do', body: 'b\n' });
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('captured_by: agent', 'captured_by: robot'));
    const r = runCli(['stage', 'check', '--task', 'TUNE-0001', '--root', dir, '--validate-frontmatter'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('captured_by');
  });
});

describe('what session post --json and store list tell', () => {
  it('session post --json prints the SnapshotDiff, with the iteration directory and the store id beside its keys', () => {
    const root = repo();
    write(root, '.gitignore', '.xdg/\n');
    write(root, 'a.txt', 'a\n');
    commitAll(root, 'init');
    const env = { XDG_CACHE_HOME: path.join(root, '.xdg') };
    expect(runCli(['session', 'pre'], { cwd: root, env }).status).toBe(0);
    write(root, 'b.txt', 'b\n');
    const r = runCli(['session', 'post', '--json'], { cwd: root, env });
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as { iterationDir: string; filesAdded: string[]; saved: { sessionId: string; snapshotId: string } };
    expect(doc.iterationDir).toBe(path.join(root, '.cairn', 'iterations', '001'));
    expect(doc.filesAdded).toEqual(['b.txt']);
    expect(doc.saved.sessionId).toBe('default');
    const { iterationDir: _dir, saved: _saved, ...diff } = doc as unknown as Record<string, unknown>;
    const stored = runCli(['store', 'show', '--session', 'default', '--scope', 'agent', '--scope-id', 'iterations', '--json'], { cwd: root, env: { ...env, CAIRN_STORE: '' } });
    expect(diff).toEqual((JSON.parse(stored.stdout) as { data: { diff: unknown } }).data.diff); // the SnapshotDiff the record holds, key for key
    const listed = runCli(['store', 'list', '--session', 'default', '--json'], { cwd: root, env: { ...env, CAIRN_STORE: '' } });
    expect((JSON.parse(listed.stdout) as { locations: { ids: string[] }[] }).locations[0]!.ids).toEqual([doc.saved.snapshotId]);

    // store list: creation time and a one-line summary, not bare ids.
    const text = runCli(['store', 'list', '--session', 'default'], { cwd: root, env: { ...env, CAIRN_STORE: '' } });
    const line = text.stdout.split('\n').find((l) => l.includes(doc.saved.snapshotId))!;
    expect(line).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    expect(line).toMatch(/1 file/);
    expect(line).toMatch(/tests/);
    const sessions = runCli(['store', 'list'], { cwd: root, env: { ...env, CAIRN_STORE: '' } });
    expect(sessions.stdout).toMatch(/^default\s+\d{4}-\d{2}-\d{2}T/m);
  });
});
