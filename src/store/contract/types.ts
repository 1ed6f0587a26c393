/** JSON values as the upstream Strands types define them. */
export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };

/** Which kind of owner a snapshot belongs to (upstream: an agent, or a multi-agent orchestrator). */
export type Scope = 'agent' | 'multiAgent';

export const SCOPES: readonly Scope[] = ['agent', 'multiAgent'];

export interface Snapshot {
  scope: Scope;
  schemaVersion: string;
  /** ISO 8601 */
  createdAt: string;
  /** Framework-owned state. */
  data: Record<string, JSONValue>;
  /** Application-owned state, never touched by the framework. */
  appData: Record<string, JSONValue>;
}

export interface SnapshotLocation {
  sessionId: string;
  scope: Scope;
  scopeId: string;
}

export interface SnapshotManifest {
  schemaVersion: string;
  /** ISO 8601 */
  updatedAt: string;
}

/** The upstream storage contract: code written against it runs unchanged on every cairn backend. */
export interface SnapshotStorage {
  saveSnapshot(params: { location: SnapshotLocation; snapshotId: string; isLatest: boolean; snapshot: Snapshot }): Promise<void>;
  loadSnapshot(params: { location: SnapshotLocation; snapshotId?: string }): Promise<Snapshot | null>;
  listSnapshotIds(params: { location: SnapshotLocation; limit?: number; startAfter?: string }): Promise<string[]>;
  deleteSession(params: { sessionId: string }): Promise<void>;
  loadManifest(params: { location: SnapshotLocation }): Promise<SnapshotManifest>;
  saveManifest(params: { location: SnapshotLocation; manifest: SnapshotManifest }): Promise<void>;
}

export type SessionStorage = { snapshot: SnapshotStorage };

export const SNAPSHOT_SCHEMA_VERSION = '1.0';

// ---- cairn additions beyond upstream: upkeep operations every cairn backend implements ----

export interface PruneOptions {
  location: SnapshotLocation;
  /** Keep the newest N history snapshots (by id order). */
  keepLast?: number;
  /** Delete history snapshots created before this instant (Date, ISO string, or a duration like `7d`, `12h`). */
  olderThan?: Date | string;
  /** Report what would be deleted without deleting. */
  dryRun?: boolean;
}

export interface PruneResult {
  location: SnapshotLocation;
  deleted: string[];
  kept: number;
  dryRun: boolean;
  /** Leftover temporary files of interrupted writes removed (or that would be, on dryRun); backends without such files omit it. */
  tempFilesRemoved?: string[];
}

export interface StoreUsage {
  sessionId: string;
  scope: Scope;
  scopeId: string;
  /** Number of history snapshots. */
  history: number;
  hasLatest: boolean;
  hasManifest: boolean;
  /** Bytes of every object of this location (latest, manifest, history). */
  bytes: number;
}

export type VerifyIssueKind = 'invalid-json' | 'invalid-snapshot' | 'invalid-manifest' | 'invalid-index' | 'temp-file' | 'stray' | 'unreadable';

export interface VerifyIssue {
  kind: VerifyIssueKind;
  /** File path or object key. */
  where: string;
  message: string;
}

export interface VerifyReport {
  ok: boolean;
  /** Objects checked. */
  checked: number;
  issues: VerifyIssue[];
}

/** `SnapshotStorage` plus listing and upkeep; what `cairn store …` drives. */
export interface ManagedSnapshotStorage extends SnapshotStorage {
  listSessions(): Promise<string[]>;
  listLocations(params: { sessionId: string }): Promise<SnapshotLocation[]>;
  prune(options: PruneOptions): Promise<PruneResult>;
  verify(params?: { sessionId?: string }): Promise<VerifyReport>;
  du(params?: { sessionId?: string }): Promise<StoreUsage[]>;
  /** Release connections (S3 client, pg pool). A no-op for local backends. */
  close(): Promise<void>;
}
