import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError, errnoCode } from '../core/errors.js';
import { DEFAULT_SNAPSHOT_DIR } from './constants.js';

/**
 * The real path of an existing root directory. Any directory is a root: unlike upstream, a path
 * with a `datarim` component or `..` inside a name (`a..b`) is fine.
 */
export function resolveRoot(root: string, exitCode = 1): string {
  let real: string;
  try {
    real = fs.realpathSync(path.resolve(root));
  } catch (e) {
    const code = errnoCode(e) === 'ENOENT' ? 'ERR_ROOT_NOT_FOUND' : 'ERR_ROOT_NOT_DIR';
    throw new CairnError(code, `root does not exist: ${root}; pass an existing directory with --root`, { exitCode, path: root, cause: e });
  }
  if (!fs.statSync(real).isDirectory()) {
    throw new CairnError('ERR_ROOT_NOT_DIR', `root is not a directory: ${root}; pass an existing directory with --root`, { exitCode, path: root });
  }
  return real;
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function containmentError(dir: string, rootReal: string): CairnError {
  return new CairnError('ERR_CONTAINMENT', `snapshot dir ${JSON.stringify(dir)} is not inside the root ${rootReal}; give a directory below the root`, {
    exitCode: 1,
    path: dir,
  });
}

/** `<root>/<dir>` without touching the disk; the dir must lie strictly below the root. */
export function snapshotDirPath(rootReal: string, dir: string = DEFAULT_SNAPSHOT_DIR): string {
  const full = path.resolve(rootReal, dir);
  if (!isInside(rootReal, full)) throw containmentError(dir, rootReal);
  return full;
}

/**
 * Creates the snapshot dir (mode 0700, as the seed says) and proves it resolves inside the
 * root, so a symlinked component cannot send writes elsewhere.
 */
export function ensureSnapshotDir(rootReal: string, dir: string = DEFAULT_SNAPSHOT_DIR): string {
  const full = snapshotDirPath(rootReal, dir);
  // Check the deepest existing ancestor before creating anything below it.
  let probe = full;
  while (!fs.existsSync(probe)) probe = path.dirname(probe);
  const probeReal = fs.realpathSync(probe);
  if (probeReal !== rootReal && !isInside(rootReal, probeReal)) throw containmentError(dir, rootReal);
  try {
    fs.mkdirSync(full, { recursive: true });
    const real = fs.realpathSync(full);
    if (!isInside(rootReal, real)) throw containmentError(dir, rootReal);
    if (!fs.statSync(real).isDirectory()) throw new Error(`not a directory: ${full}`);
    fs.chmodSync(real, 0o700);
    return real;
  } catch (e) {
    if (e instanceof CairnError) throw e;
    throw new CairnError('ERR_IO', `cannot create snapshot dir ${full}: ${(e as Error).message}`, { exitCode: 1, path: full, cause: e });
  }
}
