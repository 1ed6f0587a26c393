import { execFileSync } from 'node:child_process';

/**
 * The environment every test's git runs in: no system or global config (a developer's
 * settings must not change results), a fixed identity, no signing prompts.
 */
export const TEST_GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Cairn Test',
  GIT_AUTHOR_EMAIL: 'cairn@example.invalid',
  GIT_COMMITTER_NAME: 'Cairn Test',
  GIT_COMMITTER_EMAIL: 'cairn@example.invalid',
};

/** Runs real git in `cwd` (never through a shell); throws with git's stderr on failure. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
    env: TEST_GIT_ENV,
  });
}
