export { SnapshotManager, PRE_SNAPSHOT_NOT_FOUND, readPreSnapshot, readPostSnapshot } from './capture/snapshot-manager.js';
export { capturePreSnapshotAsync, capturePostSnapshotAsync } from './capture/capture-async.js';
export type { CaptureAsyncOptions } from './capture/capture-async.js';
export { KEY_FILES, DEFAULT_STATE_DIR, PRE_SNAPSHOT_FILE, POST_SNAPSHOT_FILE, stateDirParts } from './files.js';
export { TEST_PATTERNS } from './test-results/test-results.js';
export type { TestSummary } from './test-results/test-results.js';
export { formatDuration } from './duration.js';
export { InventoryStore } from './inventory-store/inventory-store.js';
export type { InventoryEntry, InventoryPruneResult, InventoryUsage, StoreInventoryResult } from './inventory-store/inventory-store.js';
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
} from './records/iterations.js';
export { DEFAULT_SESSION_ID, ITERATION_SCOPE_ID, iterationLocation, iterationSnapshot, saveIterationRecord, storedSnapshotSummary } from './records/record.js';
export type { IterationRecord } from './records/record.js';
export { renderIterationReport } from './records/report.js';
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
export { claimRunLog, listRuns, testResultsFromRuns, writeRunRecord } from './test-results/runs.js';
export type { RunRecord } from './test-results/runs.js';
