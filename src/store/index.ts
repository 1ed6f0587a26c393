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
