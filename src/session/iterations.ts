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

/** Numbered iterations that have a pre-snapshot but no post-snapshot yet, oldest first. */
export function openIterationDirs(projectRoot: string): string[] {
  return listIterationDirs(projectRoot).filter((dir) => fs.existsSync(path.join(dir, PRE_SNAPSHOT_FILE)) && !fs.existsSync(path.join(dir, POST_SNAPSHOT_FILE)));
}

/**
 * A finished iteration is final: its post-snapshot and its one store record are never taken
 * again (the record's history entry is immutable, so a second post would be a second record).
 */
export function assertIterationNotFinished(iterationDir: string): void {
  if (!fs.existsSync(path.join(iterationDir, POST_SNAPSHOT_FILE))) return;
  throw new CairnError(
    'ERR_ITERATION_FINISHED',
    `iteration ${iterationDir} is already finished (it has a ${POST_SNAPSHOT_FILE}); nothing was written or saved. ` +
      'Run `cairn session report` to see it again, or `cairn session pre` to start the next iteration',
    { exitCode: 3, path: iterationDir },
  );
}

/** An explicit iteration directory that already holds a pre-snapshot is only taken again on purpose (`--amend`). */
export function assertNoPreSnapshot(iterationDir: string): void {
  if (!fs.existsSync(path.join(iterationDir, PRE_SNAPSHOT_FILE))) return;
  throw new CairnError(
    'ERR_ITERATION_EXISTS',
    `${iterationDir} already holds a ${PRE_SNAPSHOT_FILE}; pass --amend to take it again, or choose another --iteration-dir`,
    { exitCode: 3, path: iterationDir },
  );
}

/**
 * An ITERATION argument as every `cairn session` command takes it: a number (`3` or `003`), an
 * iteration directory, or nothing for the latest (highest-numbered) iteration with a
 * pre-snapshot. Unknown iterations are usage errors (exit 2) that say what exists.
 */
export function resolveIterationDir(projectRoot: string, iteration?: string, cwd: string = process.cwd()): string {
  const dirs = listIterationDirs(projectRoot);
  if (iteration === undefined) {
    const latest = latestIterationDir(projectRoot);
    if (latest === null) throw new CairnError('ERR_USAGE', `no iteration with a pre-snapshot under ${iterationsRoot(projectRoot)}; run \`cairn session pre\` first`);
    return latest;
  }
  const known = dirs.map((d) => path.basename(d));
  const hint = known.length === 0 ? 'there are no iterations yet' : `known iterations: ${known.slice(-10).join(', ')}`;
  if (NUMBERED.test(iteration)) {
    const match = dirs.find((d) => Number(path.basename(d)) === Number(iteration));
    if (match === undefined || !fs.existsSync(path.join(match, PRE_SNAPSHOT_FILE))) {
      throw new CairnError('ERR_USAGE', `unknown iteration ${JSON.stringify(iteration)}; ${hint}`);
    }
    return match;
  }
  const dir = path.resolve(cwd, iteration);
  if (!fs.existsSync(path.join(dir, PRE_SNAPSHOT_FILE))) {
    throw new CairnError('ERR_USAGE', `${JSON.stringify(iteration)} is not an iteration number or an iteration directory with a ${PRE_SNAPSHOT_FILE}; ${hint}`);
  }
  return dir;
}

/** The iteration's display name: its number as written (`003`), or its directory's name. */
export function iterationName(dir: string): string {
  return path.basename(dir);
}
