import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI, the bundle `cairn` runs (`npm test` builds first; run `npm run build` before running CLI tests alone). */
export const CLI = path.join(REPO_ROOT, 'dist', 'bin', 'cairn.js');

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs `cairn …` as a real child process. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string | Buffer; timeoutMs?: number } = {}): CliResult {
  const spawnOptions: SpawnSyncOptions = {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, CI: '1', NO_COLOR: '1', ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 256 * 1024 * 1024,
  };
  if (options.input !== undefined) spawnOptions.input = options.input;
  const r = spawnSync(process.execPath, [CLI, ...args], spawnOptions);
  if (r.error) throw r.error;
  return { status: r.status ?? (r.signal ? 128 : 1), stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** The JSON error document a failing command prints as its last stderr line. */
export function errorJson(stderr: string): { code: string; message: string; path?: string; details?: unknown } {
  return JSON.parse(stderr.trim().split('\n').at(-1)!) as { code: string; message: string; path?: string; details?: unknown };
}
