import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ScanResult } from '../../src/inventory/index.js';
import { git } from '../support/git.js';

/** A fresh temp dir (real path) removed by the returned cleanup. */
export function tempDir(prefix = 'cairn-inv-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(d);
  return fs.realpathSync(d);
}

const created: string[] = [];

/** Removes every temp dir made by tempDir (call from afterAll/afterEach). */
export function cleanupTempDirs(): void {
  for (const d of created.splice(0)) {
    try {
      fs.chmodSync(d, 0o755);
    } catch {
      // already gone
    }
    fs.rmSync(d, { recursive: true, force: true });
  }
}

/** Writes files: a string value is file content, `null` makes an empty directory. */
export function writeTree(root: string, files: Record<string, string | Buffer | null>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    if (content === null) {
      fs.mkdirSync(abs, { recursive: true });
      continue;
    }
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

/**
 * A tree of `dirs` directories of `perDir` files each (`d<k>/f<i>.txt`, content `content k i`
 * repeated `repeat` times) written under a fresh root, with a fresh cache and output directory.
 */
export function gridTree(dirs: number, perDir: number, repeat = 1): { root: string; cacheDir: string; outDir: string } {
  const root = tempDir();
  const files: Record<string, string> = {};
  for (let d = 0; d < dirs; d++) for (let i = 0; i < perDir; i++) files[`d${d}/f${i}.txt`] = `content ${d} ${i}\n`.repeat(repeat);
  writeTree(root, files);
  return { root, cacheDir: tempDir('cairn-cache-'), outDir: tempDir('cairn-out-') };
}

export { git };

/**
 * What git lists for a tree with only .gitignore files as ignore sources: tracked + untracked,
 * not ignored (core.excludesFile off; .git/info/exclude is empty in a fresh repo).
 */
export function gitListedPaths(cwd: string): string[] {
  const out = git(cwd, '-c', 'core.excludesFile=/dev/null', '-c', 'core.quotePath=false', 'ls-files', '-z', '-co', '--exclude-per-directory=.gitignore');
  return [...new Set(out.split('\0').filter((p) => p !== ''))];
}

/** Sorts paths by UTF-8 bytes (the snapshot order). */
export function sortUtf8(paths: string[]): string[] {
  return [...paths].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A small racy margin keeps the cache tests fast; sleeping past it lets entries be cached. */
export const MARGIN = 50;

/** What a scan answers, without its warnings (which say how it got there). */
export const strip = (r: ScanResult) => ({ files: r.files, truncated: r.truncated, counts: r.counts, skipped: r.skipped });

/** Runs `fn` with the process's working directory at `dir` (as the CLI does), restoring it after. */
export async function inDir<T>(dir: string, fn: () => T | Promise<T>): Promise<T> {
  const before = process.cwd();
  process.chdir(dir);
  try {
    return await fn();
  } finally {
    process.chdir(before);
  }
}
