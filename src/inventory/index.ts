export { snapshotRoot, snapshotRootDetailed, makeRepoSnapshot, snapshotLimits, SNAPSHOT_MAX_FILES_DEFAULT, SNAPSHOT_MAX_FILES_CAP, SNAPSHOT_MAX_BYTES_DEFAULT } from './snapshot.js';
export { scanTree, scanTreeSync, resolveSnapshotRoot, ALWAYS_SKIP, SCAN_ENGINE_VERSION } from './scan.js';
export { diffSnapshots, isEmptySnapshotDiff } from './diff.js';
export { diffWithinCut, measureTruncation } from './truncation.js';
export type { BeyondCut, CutAwareDiff, TruncationReport } from './truncation.js';
export { canonicalBody, snapshotDigestOf } from './digest.js';
export { RepoSnapshotSchema, validateRepoSnapshot, repoSnapshotSchemaErrors } from './schema.js';
export { defaultStatCacheDir } from './cache/artefacts.js';
export { isValidRelPath, relPathProblem } from './rules/relpath.js';
export { compileGlobs, validateGlob } from './rules/glob.js';
export type { PathMatcher } from './rules/glob.js';
export type {
  RepoSnapshot,
  RepoSnapshotBody,
  RepoSnapshotCounts,
  RepoSnapshotEntry,
  RepoSnapshotOptions,
  RepoSnapshotDetailed,
  SkippedEntry,
  SkipReason,
  ScanOptions,
  ScanTuning,
  ScanCommonOptions,
  ScanResult,
  ScanProgress,
  ScanWarning,
  RepoSnapshotChange,
  RepoSnapshotDiff,
} from './types.js';
