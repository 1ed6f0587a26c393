// `cairn daemon` and each of its subcommands print the help kept beside this test, through the
// full CLI (commander, as registered in src/cli/commands/daemon.ts) and through the executable
// (its help lane prints the text the build captured): refactoring the registrations must not
// change a byte of it. A deliberate change updates the files (`npx vitest run -u`).
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT } from '../support/cli.js';

const FULL_CLI = path.join(path.dirname(CLI), 'main.mjs');

function help(entry: string, args: string[]): string {
  const r = spawnSync(process.execPath, [entry, ...args, '--help'], { cwd: REPO_ROOT, env: { ...process.env, CI: '1', NO_COLOR: '1' }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe('cairn daemon --help', () => {
  it.each([[''], ['start'], ['stop'], ['status'], ['run']])('daemon %s prints its kept help, from the full CLI and the executable alike', async (sub) => {
    const args = sub === '' ? ['daemon'] : ['daemon', sub];
    const text = help(FULL_CLI, args);
    await expect(text).toMatchFileSnapshot(path.join('help', `${args.join('-')}.txt`));
    expect(help(CLI, args)).toBe(text);
  });
});
