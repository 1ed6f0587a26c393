/**
 * The names of the files the scanner keeps for one root, beside its stat cache: one owner for
 * every artefact's name, so the cache's cleanup, the memos and the render agree on the family.
 * (Formats and versions of each: FORMATS.md.)
 */
import { hash as oneShotHash } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';

/** Default cache directory: `$XDG_CACHE_HOME/cairn/snapshots`, else `~/.cache/cairn/snapshots`. */
export function defaultStatCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'cairn', 'snapshots');
}

/** One cache file per (root real path, output-changing options). */
export function cacheFilePath(cacheDir: string, rootReal: string, optionsKey: string): string {
  const id = oneShotHash('sha256', `${rootReal}\0${optionsKey}`, 'hex').slice(0, 40);
  return path.join(cacheDir, `${id}.cache`);
}

/** Where the last rendering of this cache's stored result is kept (see render.ts). */
export function renderMemoPath(cacheFile: string): string {
  return cacheFile.replace(/\.cache$/, '.render');
}

/** Where a memo's patch is kept (see memo/memo-patch.ts). */
export function patchPath(memoFile: string): string {
  return `${memoFile}.patch`;
}

/** Where the canonical text of this cache's stored result is kept (see digest-memo.ts). */
export function canonicalMemoPath(cacheFile: string): string {
  return cacheFile.replace(/\.cache$/, '.canonical');
}

/** A temp file this old whose writer is not a live process here was left by a dead one (see removeStaleTemps). */
export const STALE_TEMP_AGE_MS = 60_000;

/** Where render.ts notes which output file last held which rendering (its output stamp). */
export function outputStampPath(cacheFile: string): string {
  return cacheFile.replace(/\.cache$/, '.out');
}

/** Names of the files kept for one cache: the cache, its memos and their patches, and the output stamp. */
export function cacheFamily(cacheFile: string): string[] {
  const memos = [renderMemoPath(cacheFile), canonicalMemoPath(cacheFile)];
  return [cacheFile, ...memos, ...memos.map(patchPath), outputStampPath(cacheFile)].map((f) => path.basename(f));
}
