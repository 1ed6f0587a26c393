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
