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
} from './contract/types.js';
export { SCOPES, SNAPSHOT_SCHEMA_VERSION } from './contract/types.js';
export { SessionError } from './contract/errors.js';
export { validateIdentifier, validateUuidV7, isUuidV7 } from './contract/validation.js';
export type { SessionErrorCode } from './contract/errors.js';
export { isSessionError } from './contract/errors.js';
export { validateScope, isIdentifier, isScope } from './contract/validation.js';
export { FileStorage } from './backends/file/file-storage.js';
export type { FileStorageOptions } from './backends/file/file-storage.js';
export { MemoryStorage } from './backends/memory/memory-storage.js';
export { uuidV7, createUuidV7Generator, uuidV7Timestamp } from './contract/uuid.js';
export type { UuidV7GeneratorOptions } from './contract/uuid.js';
export { openStore, resolveStoreSpec, DEFAULT_STORE_DIR } from './open.js';
export type { StoreTarget } from './open.js';
export { parseOlderThan } from './contract/retention.js';
export { isSnapshot, snapshotProblem } from './contract/rules.js';
// The distributed backends load their client libraries (@aws-sdk/client-s3, pg) only when used.
export { S3Storage } from './backends/s3/s3-storage.js';
export type { S3StorageConfig, S3ClientLike, ConditionalWrites } from './backends/s3/s3-storage.js';
export { PostgresStorage } from './backends/postgres/postgres-storage.js';
export type { PostgresStorageConfig, PgPoolLike } from './backends/postgres/postgres-storage.js';
// The backend conformance suite, also importable from 'cairn' (it asserts with node:assert only).
export { runSnapshotStorageConformance, HOSTILE_IDENTIFIERS } from './conformance/index.js';
export type { ConformanceBackend, ConformanceOptions, ConformanceTestApi } from './conformance/index.js';
