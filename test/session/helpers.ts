import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { git } from '../support/git.js';

/** A fresh temp directory, realpath'd (os.tmpdir may be a symlink). */
export function makeTempDir(prefix = 'cairn-session-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

export { git };

/** A temp directory with `git init` (branch main) and a local identity. */
export function makeRepo(): string {
  const dir = makeTempDir();
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'cairn@example.invalid');
  git(dir, 'config', 'user.name', 'Cairn Test');
  // No background auto-gc: a detached git writing into .git would race the test's cleanup.
  git(dir, 'config', 'gc.auto', '0');
  git(dir, 'config', 'maintenance.auto', 'false');
  return dir;
}

/**
 * Temp directories and repositories for one test file, all removed after each test.
 * `dir(prefix?)` makes a plain temp dir, `repo()` one with `git init`.
 */
export function trackedDirs(): { repo: () => string; dir: (prefix?: string) => string } {
  const dirs: string[] = [];
  afterEach(() => {
    while (dirs.length > 0) removeDir(dirs.pop() as string);
  });
  const track = (dir: string): string => {
    dirs.push(dir);
    return dir;
  };
  return { repo: () => track(makeRepo()), dir: (prefix?: string) => track(makeTempDir(prefix)) };
}

export function write(root: string, rel: string, content: string | Buffer = 'x'): string {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  return file;
}

/** Writes each `path: content` of `files` under root, in order. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) write(root, rel, content);
}

/** Commits everything except the seed's iteration directories (as an agent's own commits would). */
export function commitAll(root: string, message: string): void {
  git(root, 'add', '-A', '--', '.', ':(exclude).aiwg/ralph-external');
  git(root, 'commit', '-q', '--allow-empty', '-m', message);
}

/** The seed's iteration directory layout. */
export function seedIterationDir(root: string, n = '001'): string {
  return path.join(root, '.aiwg', 'ralph-external', 'iterations', n);
}

/**
 * Points the repo-snapshot engine's stat cache ($XDG_CACHE_HOME) at a temp dir for this test
 * file, so tests never write into the user's home.
 */
export function useTempCacheHome(): void {
  let dir = '';
  let previous: string | undefined;
  beforeAll(() => {
    dir = makeTempDir('cairn-cache-');
    previous = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = dir;
  });
  afterAll(() => {
    if (previous === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = previous;
    removeDir(dir);
  });
}
