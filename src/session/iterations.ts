/**
 * Numbered iteration directories under `<root>/.cairn/iterations/` (`001`, `002`, …), as the
 * `cairn session` commands use them. Library helpers: they create and list, never print.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError, errnoCode } from '../core/errors.js';
import { POST_SNAPSHOT_FILE, PRE_SNAPSHOT_FILE } from './files.js';

export const ITERATIONS_DIR = path.join('.cairn', 'iterations');

const NUMBERED = /^\d+$/;

export function iterationsRoot(projectRoot: string): string {
  return path.resolve(projectRoot, ITERATIONS_DIR);
}

/** Numbered iteration directories, oldest first, as absolute paths. */
export function listIterationDirs(projectRoot: string): string[] {
  const base = iterationsRoot(projectRoot);
  let names: string[];
  try {
    names = fs.readdirSync(base);
  } catch {
    return [];
  }
  return names
    .filter((name) => NUMBERED.test(name))
    .filter((name) => {
      try {
        return fs.lstatSync(path.join(base, name)).isDirectory();
      } catch {
        return false;
      }
    })
    .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b))
    .map((name) => path.join(base, name));
}

/**
 * Creates and returns the next numbered iteration directory. mkdir without `recursive` is the
 * claim: two concurrent `session pre` runs never get the same directory.
 */
export function createNextIterationDir(projectRoot: string): string {
  const base = iterationsRoot(projectRoot);
  fs.mkdirSync(base, { recursive: true });
  for (let attempt = 0; attempt < 1000; attempt++) {
    const existing = listIterationDirs(projectRoot).map((dir) => Number(path.basename(dir)));
    const next = (existing.length === 0 ? 0 : Math.max(...existing)) + 1;
    const dir = path.join(base, String(next).padStart(3, '0'));
    try {
      fs.mkdirSync(dir);
      return dir;
    } catch (e) {
      if (errnoCode(e) !== 'EEXIST') throw e;
    }
  }
  throw new CairnError('ERR_IO', `could not claim a new iteration directory under ${base}; remove stray entries there and retry`, { path: base });
}

/** The newest numbered iteration directory that has a pre-snapshot, or null. */
export function latestIterationDir(projectRoot: string, options: { needPost?: boolean } = {}): string | null {
  const dirs = listIterationDirs(projectRoot).reverse();
  for (const dir of dirs) {
    if (!fs.existsSync(path.join(dir, PRE_SNAPSHOT_FILE))) continue;
    if (options.needPost && !fs.existsSync(path.join(dir, POST_SNAPSHOT_FILE))) continue;
    return dir;
  }
  return null;
}

/**
 * Deletes all but the newest `keepLast` numbered iteration directories. Their inventories become
 * unreachable and go with the next inventory prune.
 */
export function pruneIterationDirs(projectRoot: string, keepLast: number, dryRun = false): string[] {
  if (!Number.isInteger(keepLast) || keepLast < 0) {
    throw new CairnError('ERR_VALIDATION', `keep-last must be a whole number >= 0, got ${keepLast}`);
  }
  const dirs = listIterationDirs(projectRoot);
  const doomed = dirs.slice(0, Math.max(0, dirs.length - keepLast));
  if (!dryRun) for (const dir of doomed) fs.rmSync(dir, { recursive: true, force: true });
  return doomed;
}
