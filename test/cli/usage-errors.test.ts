/**
 * A usage error (unknown flag or command, missing argument, bad value) is printed as every other
 * error is: one JSON line {code: "ERR_USAGE", message} on stderr for a pipe or with --json, a
 * line and a hint on a terminal; exit 2; nothing on stdout. (Commander's own text had no code.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, runCli } from '../support/cli.js';

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-usage-'));
afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

const CASES: [string[], RegExp][] = [
  [['snapshot', '--root', '.', '--bogus'], /unknown option '--bogus'/],
  [['snapshot', '--json'], /--root/],
  [['snapshot', '--root', '.', '--max-files', 'abc'], /--max-files/],
  [['snapshot-diff', 'a.json'], /b\.json/],
  [['session', 'pre', '--bogus'], /unknown option/],
  [['session', 'restore', '--bogus', '--json'], /unknown option/],
  [['store', 'list', '--json', '--bogus'], /unknown option/],
  [['stage', 'show', '--json'], /TASK-ID/],
  [['stage', 'check', '--bogus'], /unknown option/],
  [['no-such-command'], /unknown command/],
];

describe('usage errors', () => {
  it.each(CASES)('%j: one JSON line with ERR_USAGE on stderr, exit 2, stdout empty', (args, message) => {
    const r = runCli(args, { cwd, env: { XDG_CACHE_HOME: cwd } });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines).toHaveLength(2);
    const doc = JSON.parse(lines[0]!) as { code: string; message: string };
    expect(doc.code).toBe('ERR_USAGE');
    expect(doc.message).toMatch(message);
  });

  it('on a terminal, a line and a hint naming the command\'s --help (snapshot keeps the seed\'s JSON)', () => {
    // `script` gives the child a pseudo-terminal for stdout and stderr.
    const onTty = (args: string[]): string =>
      spawnSync('script', ['-qec', [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], { cwd, encoding: 'utf8', env: { ...process.env, CI: '', XDG_CACHE_HOME: cwd } }).stdout.replace(/\r/g, '');
    expect(onTty(['session', 'pre', '--bogus'])).toBe("cairn: unknown option '--bogus'\nhint: ERR_USAGE (exit 2); `cairn session pre --help` shows usage and exit codes, --json prints this error as JSON\n");
    expect(JSON.parse(onTty(['snapshot', '--bogus']))).toMatchObject({ code: 'ERR_USAGE' });
  });
});
