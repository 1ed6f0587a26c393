/** `cairn run -- <command…>`: streams, keeps the output under the open iteration, passes the exit code through; post reports it. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { commitAll, trackedDirs, write } from '../session/helpers.js';

const { repo, dir: scratch } = trackedDirs();
const cli = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd, env: { XDG_CACHE_HOME: scratch('cairn-cache-'), CAIRN_STORE: '', CAIRN_ITERATION_DIR: '', CAIRN_AGENT_SESSION: '', ...env } });

describe('cairn run', () => {
  it('streams the output and passes the exit code through, keeping nothing when no iteration is open', () => {
    const root = repo();
    const r = cli(['run', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7'], root);
    expect(r.status).toBe(7);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toContain('err\n');
    expect(r.stderr).toContain('no open iteration');
    expect(fs.existsSync(path.join(root, '.cairn'))).toBe(false);
    expect(cli(['run', '--', 'sh', '-c', 'kill -TERM $$'], root).status).toBe(143);
    const missing = cli(['run', '--', 'no-such-command-here'], root);
    expect(missing.status).toBe(127);
    expect(missing.stderr).toMatch(/cannot run no-such-command-here/);
  });

  it('keeps each run under the open iteration, and post reports the newest run\'s tests before the usual search', () => {
    const root = repo();
    write(root, 'a.txt', 'a');
    // a stale report in the root that the seed's search would otherwise find first
    write(root, 'test-results.json', JSON.stringify({ numPassedTests: 99, numFailedTests: 0, numTotalTests: 99, success: true }));
    commitAll(root, 'init');
    const dir = cli(['session', 'pre'], root).stdout.trim();
    const sub = path.join(root, 'pkg');
    fs.mkdirSync(sub);
    const failing = cli(['run', '--', 'sh', '-c', 'echo "Tests: 1 failed, 5 passed, 6 total"; exit 1'], sub);
    expect(failing.status).toBe(1);
    expect(failing.stdout).toBe('Tests: 1 failed, 5 passed, 6 total\n');
    const build = cli(['run', '--', 'sh', '-c', 'echo built'], sub);
    expect(build.status).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(expect.arrayContaining(['pre-snapshot.json', 'run-001.json', 'run-001.log', 'run-002.json', 'run-002.log']));
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'run-001.json'), 'utf8')) as { command: string[]; exitCode: number; log: string };
    expect(rec).toMatchObject({ command: ['sh', '-c', 'echo "Tests: 1 failed, 5 passed, 6 total"; exit 1'], exitCode: 1, log: 'run-001.log' });
    expect(fs.readFileSync(path.join(dir, 'run-001.log'), 'utf8')).toBe('Tests: 1 failed, 5 passed, 6 total\n');
    const post = cli(['session', 'post', '--json', '--no-store'], root);
    expect(post.status).toBe(0);
    const postSnap = JSON.parse(fs.readFileSync(path.join(dir, 'post-snapshot.json'), 'utf8')) as { tests: { found: boolean; file: string; summary: { passed: number; failed: number } } };
    expect(postSnap.tests).toMatchObject({ found: true, file: path.join(dir, 'run-001.log'), summary: { passed: 5, failed: 1 } });
    const report = cli(['session', 'report'], root);
    expect(report.stdout).toMatch(/Tests: 5 passed, 1 failed/);
  });

  it('picks the open iteration of the agent session named in CAIRN_AGENT_SESSION, or the one in CAIRN_ITERATION_DIR', () => {
    const root = repo();
    const first = cli(['session', 'pre'], root).stdout.trim();
    fs.writeFileSync(path.join(first, 'agent.json'), JSON.stringify({ agent: 'claude-code', sessionId: 'abc' }));
    const second = cli(['session', 'pre'], root).stdout.trim();
    expect(cli(['run', '--', 'true'], root, { CAIRN_AGENT_SESSION: 'abc' }).status).toBe(0);
    expect(fs.existsSync(path.join(first, 'run-001.log'))).toBe(true);
    expect(cli(['run', '--', 'true'], root).status).toBe(0);
    expect(fs.existsSync(path.join(second, 'run-001.log'))).toBe(true);
    expect(cli(['run', '--', 'true'], root, { CAIRN_ITERATION_DIR: first }).status).toBe(0);
    expect(fs.existsSync(path.join(first, 'run-002.log'))).toBe(true);
  });
});
