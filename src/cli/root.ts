/**
 * The project root of a command: `--root` when given, else found from the current directory as
 * git finds its work tree (`../core/root.ts`). Every command that works on a project uses this,
 * so the root, `.cairn/` and the default store are the same from any subdirectory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError } from '../core/errors.js';
import { findProjectRoot } from '../core/root.js';
import { configuredStore, loadConfig, type CairnConfig } from '../config/index.js';
import { DEFAULT_STORE_DIR } from '../store/defaults.js';
import type { CliIO } from './io.js';

export const ROOT_HELP = 'project root (default: found from the current directory: the nearest directory holding .git, else .cairn/, else the current directory)';

/** `--root` resolved against the current directory and checked, or the discovered root. */
export function projectRoot(io: CliIO, flag: string | undefined): string {
  if (flag === undefined) return findProjectRoot(io.cwd).root;
  const resolved = path.resolve(io.cwd, flag);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(resolved);
  } catch {
    throw new CairnError('ERR_ROOT_NOT_FOUND', `project root ${resolved} does not exist; pass an existing directory with --root`, { path: resolved });
  }
  if (!stat.isDirectory()) throw new CairnError('ERR_ROOT_NOT_DIR', `project root ${resolved} is not a directory; pass a directory with --root`, { path: resolved });
  return resolved;
}

/** The root and its `.cairn/config.json` (checked: a bad config fails the command before any work). */
export function projectContext(io: CliIO, flag: string | undefined): { root: string; config: CairnConfig } {
  const root = projectRoot(io, flag);
  return { root, config: loadConfig(root).config };
}

/**
 * The store a command uses: `--store`, else `$CAIRN_STORE` (both relative to the current
 * directory, as a person typed them), else the config's `store` (relative to the root), else
 * `.cairn/store` under the project root.
 */
export function storeSpec(io: CliIO, root: string, flag: string | undefined, config: CairnConfig = {}): string {
  // Relative to the current directory, so it reads as before from the root (`.cairn/store`).
  return configuredStore(config, root, io.env, flag) ?? (path.relative(io.cwd, path.join(root, DEFAULT_STORE_DIR)) || '.');
}
