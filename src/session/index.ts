export { SnapshotManager, PRE_SNAPSHOT_NOT_FOUND, readPreSnapshot, readPostSnapshot } from './snapshot-manager.js';
export { capturePreSnapshotAsync, capturePostSnapshotAsync } from './capture-async.js';
export type { CaptureAsyncOptions } from './capture-async.js';
export { KEY_FILES, DEFAULT_STATE_DIR, PRE_SNAPSHOT_FILE, POST_SNAPSHOT_FILE, stateDirParts } from './files.js';
export { TEST_PATTERNS } from './test-results.js';
export type { TestSummary } from './test-results.js';
export { formatDuration } from './duration.js';
export { InventoryStore } from './inventory-store.js';
export type { InventoryEntry, InventoryPruneResult, InventoryUsage, StoreInventoryResult } from './inventory-store.js';
export {
  ITERATIONS_DIR,
  assertIterationNotFinished,
  assertNoPreSnapshot,
  createNextIterationDir,
  iterationsRoot,
  latestIterationDir,
  listIterationDirs,
  openIterationDirs,
  pruneIterationDirs,
} from './iterations.js';
export { DEFAULT_SESSION_ID, ITERATION_SCOPE_ID, iterationLocation, iterationSnapshot, saveIterationRecord, storedSnapshotSummary } from './record.js';
export type { IterationRecord } from './record.js';
export { renderIterationReport } from './report.js';
export type {
  AiwgState,
  FileDiff,
  FileDiffStatus,
  FileSnapshot,
  GitStatus,
  InventoryRef,
  KeyFileChange,
  PostSnapshot,
  PreSnapshot,
  SnapshotDiff,
  SnapshotManagerOptions,
  TestResults,
  WorkingTreeChanges,
} from './types.js';
export { claimRunLog, listRuns, testResultsFromRuns, writeRunRecord } from './runs.js';
export type { RunRecord } from './runs.js';
