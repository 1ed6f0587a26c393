/**
 * The `cairn` package: the documented surface, by name (docs/spec "Public surface", README).
 * Each area also has its own entry point with the rest of what it offers: `cairn/inventory`,
 * `cairn/session`, `cairn/store` (with `cairn/store/s3`, `cairn/store/postgres`), `cairn/stage`,
 * `cairn/conformance`, `cairn/mcp`. Internals (temp-file names, lock files, self-tests) are on
 * none of them. `api/cairn.api.md` records the surface; a test compares it, so a change here is
 * made on purpose (`node scripts/api-report.mjs --write`).
 */

// Errors and canonical JSON (src/core)
export { CairnError, isCairnError } from './core/errors.js';
export type { CairnErrorCode, CairnErrorOptions } from './core/errors.js';
export { canonicalize, canonicalDigest } from './core/jcs.js';

// Repo snapshots (src/inventory)
export {
  snapshotRoot,
  snapshotRootDetailed,
  makeRepoSnapshot,
  snapshotLimits,
  SNAPSHOT_MAX_FILES_DEFAULT,
  SNAPSHOT_MAX_FILES_CAP,
  SNAPSHOT_MAX_BYTES_DEFAULT,
  scanTree,
  scanTreeSync,
  ALWAYS_SKIP,
  diffSnapshots,
  isEmptySnapshotDiff,
  diffWithinCut,
  measureTruncation,
  canonicalBody,
  snapshotDigestOf,
  RepoSnapshotSchema,
  validateRepoSnapshot,
  repoSnapshotSchemaErrors,
  isValidRelPath,
  relPathProblem,
  compileGlobs,
  validateGlob,
} from './inventory/index.js';
export type {
  PathMatcher,
  BeyondCut,
  CutAwareDiff,
  TruncationReport,
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
} from './inventory/index.js';

// Iteration snapshots (src/session)
export {
  SnapshotManager,
  capturePreSnapshotAsync,
  capturePostSnapshotAsync,
  PRE_SNAPSHOT_NOT_FOUND,
  readPreSnapshot,
  readPostSnapshot,
  KEY_FILES,
  DEFAULT_STATE_DIR,
  PRE_SNAPSHOT_FILE,
  POST_SNAPSHOT_FILE,
  TEST_PATTERNS,
  formatDuration,
  renderIterationReport,
} from './session/index.js';
export type {
  TestSummary,
  IterationRecord,
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
  CaptureAsyncOptions,
  TestResults,
  WorkingTreeChanges,
} from './session/index.js';

// What an iteration kept so it can be put back (src/content)
export {
  ContentStore,
  isSha256Hex,
  sha256Of,
  DEFAULT_CONTENT_CAP_BYTES,
  capturePostContent,
  capturePreContent,
  contentDir,
  openContentStore,
  ContentResolver,
  EMPTY_SHA256,
  openIteration,
  readIterationContent,
  pruneContent,
  contentUsage,
} from './content/index.js';
export type {
  ContentGcResult,
  ContentItem,
  ContentUsage,
  PutResult,
  CaptureContext,
  ContentRecord,
  NotRestorable,
  NotRestorableReason,
  IterationContent,
  OpenIterationOptions,
  PathContent,
  Side,
  ContentPruneResult,
} from './content/index.js';

// The snapshot store (src/store); the distributed backends load their clients only when used
export {
  SCOPES,
  SNAPSHOT_SCHEMA_VERSION,
  SessionError,
  isSessionError,
  validateIdentifier,
  validateUuidV7,
  isUuidV7,
  validateScope,
  isIdentifier,
  isScope,
  FileStorage,
  MemoryStorage,
  S3Storage,
  PostgresStorage,
  uuidV7,
  createUuidV7Generator,
  uuidV7Timestamp,
  openStore,
  resolveStoreSpec,
  DEFAULT_STORE_DIR,
  runSnapshotStorageConformance,
  HOSTILE_IDENTIFIERS,
} from './store/index.js';
export type {
  JSONValue,
  Scope,
  Snapshot,
  SnapshotLocation,
  SnapshotManifest,
  SnapshotStorage,
  SessionStorage,
  ManagedSnapshotStorage,
  PruneOptions,
  PruneResult,
  StoreUsage,
  VerifyIssue,
  VerifyIssueKind,
  VerifyReport,
  SessionErrorCode,
  FileStorageOptions,
  UuidV7GeneratorOptions,
  StoreTarget,
  S3StorageConfig,
  S3ClientLike,
  ConditionalWrites,
  PostgresStorageConfig,
  PgPoolLike,
  ConformanceBackend,
  ConformanceOptions,
  ConformanceTestApi,
} from './store/index.js';

// Stage notes (src/stage)
export {
  STAGE_SNAPSHOT_MAX_BYTES,
  TRUNCATION_MARKER,
  UPSTREAM_TRUNCATION_MARKER,
  TASK_ID_PATTERN,
  STAGE_PATTERN,
  UPSTREAM_STAGES,
  DEFAULT_SNAPSHOT_DIR,
  FRONTMATTER_FIELDS,
  CAPTURED_BY_VALUES,
  writeStageSnapshot,
  readStageSnapshot,
  readStageSnapshotAsync,
  readStageSnapshotBytes,
  stageSnapshotPath,
  validateStageSnapshot,
  renderStageSnapshot,
  parseStageSnapshot,
} from './stage/index.js';
export type {
  WriteStageSnapshotOptions,
  WriteStageSnapshotResult,
  StageSnapshotNote,
  StageSnapshotLocation,
  StageSnapshotCheck,
  ValidateStageSnapshotOptions,
  StageSnapshotFields,
  RenderedStageSnapshot,
  ParsedStageSnapshot,
  CapturedBy,
} from './stage/index.js';

// Putting a project back to an iteration's pre or post state (src/rewind)
export { restoreIteration, undoLastRestore, lineCounts } from './rewind/index.js';
export type { RestoreAction, RestoreChange, RestoreOptions, RestoreResult, PathState } from './rewind/index.js';
