import { CairnError } from '../core/errors.js';
import { snapshotDigestOf, type ScannedBody } from './digest.js';
import { scanForSnapshot } from './scan.js';
import type { KnownUnchanged, RepoSnapshot, RepoSnapshotBody, RepoSnapshotDetailed, RepoSnapshotOptions } from './types.js';

export const SNAPSHOT_MAX_FILES_DEFAULT = 20_000;
export const SNAPSHOT_MAX_FILES_CAP = 50_000;
export const SNAPSHOT_MAX_BYTES_DEFAULT = 64 * 1024 * 1024;

/**
 * The seed's surface also always skips `.axiom/` (the seed tool's own state), on top of the
 * engine's `.git/` and `.cairn/`: a tree gives the same inventory as under the seed's tool.
 */
export const SNAPSHOT_ALWAYS_SKIP: readonly string[] = ['.axiom'];

/** The seed's limits: defaults, the silent 50 000 clamp, and a clear error for nonsense. */
export function snapshotLimits(options: Pick<RepoSnapshotOptions, 'maxFiles' | 'maxBytes'>): { maxFiles: number; maxBytes: number } {
  const { maxFiles = SNAPSHOT_MAX_FILES_DEFAULT, maxBytes = SNAPSHOT_MAX_BYTES_DEFAULT } = options;
  if (typeof maxFiles !== 'number' || !Number.isInteger(maxFiles) || maxFiles < 1) {
    throw new CairnError('ERR_INVALID_OPTION', `maxFiles must be an integer >= 1 (got ${String(maxFiles)}); scope a big tree with include instead`, { details: { option: 'maxFiles', value: String(maxFiles) } });
  }
  if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new CairnError('ERR_INVALID_OPTION', `maxBytes must be an integer >= 0 (got ${String(maxBytes)})`, { details: { option: 'maxBytes', value: String(maxBytes) } });
  }
  return { maxFiles: Math.min(maxFiles, SNAPSHOT_MAX_FILES_CAP), maxBytes };
}

/**
 * Wraps a body into the seed's document (key order as the seed prints it). Given the handle of
 * the scan that returned the body (scanForSnapshot), its digest is taken from it.
 */
export function makeRepoSnapshot(body: RepoSnapshotBody, scanned?: ScannedBody): RepoSnapshot {
  return { apiVersion: 'axiom.dev/v2', kind: 'RepoSnapshot', root: { kind: 'relative' }, snapshotDigest: snapshotDigestOf(body, scanned), body };
}

/**
 * The seed's `snapshotRoot` plus what was left out and why: the document, the skipped paths
 * (invalid names, FIFOs, files that vanished or could not be read) and cache notices.
 */
export async function snapshotRootDetailed(root: string, options: RepoSnapshotOptions = {}): Promise<RepoSnapshotDetailed> {
  const { snapshot, skipped, warnings } = await snapshotForOutput(root, options);
  return { snapshot, skipped, warnings };
}

/**
 * `snapshotRootDetailed` and the scan's handle of the body, for `writeRepoSnapshot` (the CLI's
 * output); `knownUnchanged`: what a watching caller (`cairn daemon`) knows, for the scan.
 */
export async function snapshotForOutput(root: string, options: RepoSnapshotOptions = {}, knownUnchanged?: KnownUnchanged): Promise<RepoSnapshotDetailed & { scanned: ScannedBody | undefined }> {
  if (options.followSymlinks === true) {
    throw new CairnError('ERR_UNSUPPORTED_OP', 'followSymlinks: true is not supported: symlinks are recorded at their own path and never followed into directories');
  }
  const { maxFiles, maxBytes } = snapshotLimits(options);
  const scanOptions: Parameters<typeof scanForSnapshot>[1] = { maxFiles, maxBytes, alwaysSkip: SNAPSHOT_ALWAYS_SKIP };
  for (const k of ['include', 'exclude', 'respectGitignore', 'withContentDigest', 'cache', 'cacheDir', 'jobs', 'signal', 'onProgress', 'onSkip', 'onWarning', 'racyMarginMs'] as const) {
    if (options[k] !== undefined) (scanOptions as Record<string, unknown>)[k] = options[k];
  }
  if (knownUnchanged !== undefined) scanOptions.knownUnchanged = knownUnchanged;
  const { result: r, body: scanned } = await scanForSnapshot(root, scanOptions);
  const snapshot = makeRepoSnapshot({ files: r.files, truncated: r.truncated, counts: r.counts }, scanned);
  return { snapshot, skipped: r.skipped, warnings: r.warnings, scanned };
}

/**
 * A deterministic, content-addressed inventory of `root` (the seed's RepoSnapshot). Paths that
 * could not be inventoried are not silently lost: pass `onSkip` to receive them, or use
 * `snapshotRootDetailed`.
 */
export async function snapshotRoot(root: string, options: RepoSnapshotOptions = {}): Promise<RepoSnapshot> {
  return (await snapshotRootDetailed(root, options)).snapshot;
}
