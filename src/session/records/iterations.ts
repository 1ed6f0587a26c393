/**
 * Numbered iteration directories under `<root>/.cairn/iterations/` (`001`, `002`, …), as the
 * `cairn session` commands use them. Library helpers: they create and list, never print.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainedDir } from '../../core/contained-dir.js';
import { CairnError, errnoCode } from '../../core/errors.js';
import { POST_SNAPSHOT_FILE, PRE_SNAPSHOT_FILE } from '../files.js';

export const ITERATIONS_DIR = path.join('.cairn', 'iterations');

const NUMBERED = /^\d+$/;

export function iterationsRoot(projectRoot: string): string {
  return path.resolve(projectRoot, ITERATIONS_DIR);
}

/**
 * `<root>/.cairn/iterations`, opened without following a link below the root (a planted
 * `.cairn` or `iterations` link is refused with ERR_CONTAINMENT); null when missing.
 */
function openIterations(projectRoot: string, create: boolean): ContainedDir | null {
  return ContainedDir.open(path.resolve(projectRoot), ITERATIONS_DIR.split(path.sep), { create });
}

/** Numbered iteration directories (real directories, never links), oldest first, as absolute paths. */
export function listIterationDirs(projectRoot: string): string[] {
  const base = iterationsRoot(projectRoot);
  const dir = openIterations(projectRoot, false);
  if (dir === null) return [];
  try {
    return dir
      .entries()
      .filter((entry) => entry.isDirectory() && NUMBERED.test(entry.name))
      .map((entry) => entry.name)
      .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b))
      .map((name) => path.join(base, name));
  } finally {
    dir.close();
  }
}

/**
 * Creates and returns the next numbered iteration directory. mkdir without `recursive` is the
 * claim: two concurrent `session pre` runs never get the same directory.
 */
export function createNextIterationDir(projectRoot: string): string {
  const base = iterationsRoot(projectRoot);
  const iterations = openIterations(projectRoot, true)!;
  try {
    for (let attempt = 0; attempt < 1000; attempt++) {
      // Every numbered name counts, links and files too: a planted `002` link is passed over, never entered.
      const existing = iterations
        .entries()
        .filter((entry) => NUMBERED.test(entry.name))
        .map((entry) => Number(entry.name));
      const name = String((existing.length === 0 ? 0 : Math.max(...existing)) + 1).padStart(3, '0');
      try {
        fs.mkdirSync(iterations.at(name));
        return path.join(base, name);
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') throw e;
      }
    }
  } finally {
    iterations.close();
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
  if (dryRun || doomed.length === 0) return doomed;
  // Removed through the opened iterations directory: a link anywhere inside goes, never its target.
  const iterations = openIterations(projectRoot, false);
  try {
    for (const dir of doomed) iterations?.removeTree(path.basename(dir));
  } finally {
    iterations?.close();
  }
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
