import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError, errnoCode } from '../core/errors.js';
import { containedPath, isStrictlyInside } from '../core/paths.js';
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

function containmentError(dir: string, rootReal: string, exitCode: number, reason?: string): CairnError {
  return new CairnError('ERR_CONTAINMENT', `snapshot dir ${JSON.stringify(dir)} is not inside the root ${rootReal}${reason === undefined ? '' : ` (${reason})`}; give a directory below the root`, {
    exitCode,
    path: dir,
  });
}

/**
 * The real path of `<root>/<dir>`, proved to lie strictly below the root: lexically first (so
 * `..`, an absolute path elsewhere and the root itself are refused, while a name that merely
 * starts with `..`, like `..notes`, is fine), then with every symlink on its existing part
 * followed (core/paths.ts), so a planted link cannot lead out and a dangling one is refused.
 * The directory need not exist. ERR_CONTAINMENT with `exitCode` (writer 1, readers 2).
 */
export function snapshotDirPath(rootReal: string, dir: string = DEFAULT_SNAPSHOT_DIR, exitCode = 1): string {
  if (!isStrictlyInside(path.resolve(rootReal, dir), rootReal)) throw containmentError(dir, rootReal, exitCode);
  const real = containedPath(rootReal, dir, { what: `snapshot dir ${JSON.stringify(dir)}`, hint: 'give a directory below the root', exitCode });
  if (!isStrictlyInside(real, rootReal)) throw containmentError(dir, rootReal, exitCode, 'it resolves to the root itself');
  return real;
}

/**
 * Creates the snapshot dir (mode 0700, as the seed says) below its contained real path, one
 * component at a time, each lstat-checked to be a real directory, so a link swapped in after
 * the containment check is refused rather than written through. Returns the directory's real path.
 */
export function ensureSnapshotDir(rootReal: string, dir: string = DEFAULT_SNAPSHOT_DIR): string {
  const full = snapshotDirPath(rootReal, dir);
  try {
    let at = rootReal;
    for (const name of path.relative(rootReal, full).split(path.sep)) {
      at = path.join(at, name);
      try {
        fs.mkdirSync(at);
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') throw e;
      }
      const st = fs.lstatSync(at);
      if (st.isSymbolicLink()) throw containmentError(dir, rootReal, 1, `${at} turned into a symlink after the check`);
      if (!st.isDirectory()) throw new Error(`not a directory: ${at}`);
    }
    fs.chmodSync(full, 0o700);
    return full;
  } catch (e) {
    if (e instanceof CairnError) throw e;
    throw new CairnError('ERR_IO', `cannot create snapshot dir ${full}: ${(e as Error).message}`, { exitCode: 1, path: full, cause: e });
  }
}
