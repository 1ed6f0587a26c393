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
} from './types.js';
export { SCOPES, SNAPSHOT_SCHEMA_VERSION } from './types.js';
export { SessionError } from './errors.js';
export { validateIdentifier, validateUuidV7, isUuidV7 } from './validation.js';
export type { SessionErrorCode } from './errors.js';
export { isSessionError } from './errors.js';
export { validateScope, isIdentifier, isScope } from './validation.js';
export { FileStorage } from './file-storage.js';
export type { FileStorageOptions } from './file-storage.js';
export { MemoryStorage } from './memory-storage.js';
export { uuidV7, createUuidV7Generator, uuidV7Timestamp } from './uuid.js';
export type { UuidV7GeneratorOptions } from './uuid.js';
export { openStore, resolveStoreSpec, DEFAULT_STORE_DIR } from './open.js';
export type { StoreTarget } from './open.js';
export { parseOlderThan } from './retention.js';
export { isSnapshot, snapshotProblem } from './rules.js';
// The distributed backends load their client libraries (@aws-sdk/client-s3, pg) only when used.
export { S3Storage } from './s3-storage.js';
export type { S3StorageConfig, S3ClientLike, ConditionalWrites } from './s3-storage.js';
export { PostgresStorage } from './postgres-storage.js';
export type { PostgresStorageConfig, PgPoolLike } from './postgres-storage.js';
// The backend conformance suite, also importable from 'cairn' (it asserts with node:assert only).
export { runSnapshotStorageConformance, HOSTILE_IDENTIFIERS } from './conformance/index.js';
export type { ConformanceBackend, ConformanceOptions, ConformanceTestApi } from './conformance/index.js';
