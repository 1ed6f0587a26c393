import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

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

/**
 * A copy of the build's `dist/bin` to change (drop a lane, edit one), in a package of its own in
 * the temp dir: the repository's package.json, a link to its node_modules, and a `dist/` whose
 * other entries link to the build's, so the copy's imports resolve as the build's do. Never inside
 * the repository's `dist/`: the `npm pack` tests walk it at the same time, and an entry made or
 * removed there mid-walk fails npm's walk (CI of 9581a2b: ENOENT from its lstat).
 */
export function copyBuild(prefix: string): { bin: string; remove: () => void } {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const dist = path.join(top, 'dist');
  fs.mkdirSync(dist);
  fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(top, 'package.json'));
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(top, 'node_modules'));
  for (const entry of fs.readdirSync(path.join(REPO_ROOT, 'dist'))) {
    if (entry !== 'bin') fs.symlinkSync(path.join(REPO_ROOT, 'dist', entry), path.join(dist, entry));
  }
  const bin = path.join(dist, 'bin');
  fs.cpSync(path.dirname(CLI), bin, { recursive: true });
  return { bin, remove: () => fs.rmSync(top, { recursive: true, force: true }) };
}

/** The paths `npm pack` would publish; npm's own diagnostics in the error when it fails. */
export function npmPackFiles(): string[] {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`npm pack --dry-run failed (status ${r.status}, signal ${r.signal}):\n${r.stderr}`);
  return (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}
