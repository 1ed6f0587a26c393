/**
 * The names and versions of the files the scanner keeps for one root, beside its stat cache: one
 * owner for every artefact's name and version, so the cache's cleanup, the memos and the render
 * agree on the family, and a format change is one edit here. (Each file's layout, writer,
 * reader, checksum and when it is discarded: ../FORMATS.md.)
 */
import { hash as oneShotHash } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';

/** The stat cache's binary format (`<id>.cache`): a file of another format is discarded. */
export const CACHE_FORMAT = 12;

/**
 * The scan's own version, part of every cache's options key: raised when the engine would give
 * another result for the same options, so no cache of an older engine is trusted.
 */
export const SCAN_ENGINE_VERSION = 2;

/** The canonical-JSON memo's tag (`<id>.canonical`, memo/digest-memo.ts). */
export const CANONICAL_MEMO_TAG = 'cairn-canonical 1';

/** The render memo's tag (`<id>.render`, memo/render.ts). */
export const RENDER_MEMO_TAG = 'cairn-render 6';

/** The tag of a patch of the memo tagged `memoTag` (memo/memo-patch.ts). */
export function patchTag(memoTag: string): string {
  return `${memoTag}+patch`;
}

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

/**
 * Where the cache's saves note (by the file's mtime) when they last swept the family's stale
 * temps: the sweep lists the whole cache directory, shared by every root cairn has seen.
 */
export function sweptStampPath(cacheFile: string): string {
  return cacheFile.replace(/\.cache$/, '.swept');
}

/** Where render.ts notes which output file last held which rendering (its output stamp). */
export function outputStampPath(cacheFile: string): string {
  return cacheFile.replace(/\.cache$/, '.out');
}

/** The output stamp of the cache whose render memo is `renderMemo` (render.ts knows only the memo). */
export function outputStampOfRenderMemo(renderMemo: string): string {
  return outputStampPath(renderMemo.replace(/\.render$/, '.cache'));
}

/** Names of the files kept for one cache: the cache, its memos and their patches, and the output stamp. */
export function cacheFamily(cacheFile: string): string[] {
  const memos = [renderMemoPath(cacheFile), canonicalMemoPath(cacheFile)];
  return [cacheFile, ...memos, ...memos.map(patchPath), outputStampPath(cacheFile)].map((f) => path.basename(f));
}
