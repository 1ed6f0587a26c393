/** `cairn completion bash|zsh|fish`: scripts generated from the command tree, exercised in the real shells. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const has = (shell: string): boolean => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
const script = (shell: string): string => {
  const r = runCli(['completion', shell]);
  expect(r.status).toBe(0);
  return r.stdout;
};

describe('cairn completion', () => {
  it('bash completes commands, subcommands, options and agent names', () => {
    const complete = (line: string[]): string[] => {
      const cword = line.length - 1;
      const words = line.map((w) => `'${w}'`).join(' ');
      const r = spawnSync('bash', ['-c', `${script('bash')}\nCOMP_WORDS=(${words}); COMP_CWORD=${cword}; _cairn; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return r.stdout.split('\n').filter(Boolean);
    };
    expect(complete(['cairn', 'se'])).toEqual(['session']);
    expect(complete(['cairn', 'session', ''])).toEqual(expect.arrayContaining(['pre', 'post', 'report', 'prune']));
    expect(complete(['cairn', 'session', 'post', '--st'])).toEqual(['--state-dir', '--store']);
    expect(complete(['cairn', 'hooks', 'install', ''])).toEqual(expect.arrayContaining(['claude-code', 'gemini-cli', 'codex', 'cursor', '--scope']));
    expect(complete(['cairn', 'completion', ''])).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']));
    expect(complete(['cairn', 'run', '--root', '/tmp', '--it'])).toEqual(['--iteration-dir']);
  });

  it.skipIf(!has('zsh'))('zsh loads the script under compinit and finds the same words (needs zsh)', () => {
    const r = spawnSync('zsh', ['-f', '-c', `autoload -U compinit && compinit -u -D\n${script('zsh')}\n_cairn_words 'hooks install'; print -l $reply`], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['claude-code', 'cursor', '--scope']));
  });

  it.skipIf(!has('fish'))('fish completes through complete -C (needs fish)', () => {
    const r = spawnSync('fish', ['--no-config', '-c', `${script('fish')}\ncomplete -C 'cairn session p'; complete -C 'cairn hooks install '`], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const names = r.stdout.split('\n').map((l) => l.split('\t')[0]);
    expect(names).toEqual(expect.arrayContaining(['pre', 'post', 'prune', 'claude-code', 'codex']));
    expect(r.stdout).toMatch(/^post\tTake the post-snapshot/m);
  });

  it('refuses an unknown shell with exit 2', () => {
    expect(runCli(['completion', 'powershell']).status).toBe(2);
  });
});
