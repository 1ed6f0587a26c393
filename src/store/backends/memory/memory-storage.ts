import { planPrune, selectPrunable } from '../../contract/retention.js';
import {
  checkHistoryId,
  checkLocation,
  checkManifestToSave,
  checkSessionId,
  checkSnapshotToSave,
  compareLocations,
  defaultManifest,
  historyFileName,
  normalisePage,
  pageOf,
  parseStoredManifest,
  parseStoredSnapshot,
  serialize,
  snapshotExistsError,
} from '../../contract/rules.js';
import type {
  ManagedSnapshotStorage,
  PruneOptions,
  PruneResult,
  Scope,
  Snapshot,
  SnapshotLocation,
  SnapshotManifest,
  StoreUsage,
  VerifyReport,
} from '../../contract/types.js';

interface LocationData {
  scope: Scope;
  scopeId: string;
  latest?: string;
  manifest?: string;
  history: Map<string, string>;
}

/**
 * In-memory `SnapshotStorage` with exactly FileStorage's semantics (validation, create-only
 * history, listing rules, upkeep). Documents are kept serialized, so callers never share
 * objects with the store and what comes back is what a durable backend would return.
 */
export class MemoryStorage implements ManagedSnapshotStorage {
  private readonly sessions = new Map<string, Map<string, LocationData>>();

  private static keyOf(location: SnapshotLocation): string {
    return `${location.scope}/${location.scopeId}`;
  }

  private find(location: SnapshotLocation): LocationData | undefined {
    return this.sessions.get(location.sessionId)?.get(MemoryStorage.keyOf(location));
  }

  private obtain(location: SnapshotLocation): LocationData {
    let session = this.sessions.get(location.sessionId);
    if (session === undefined) {
      session = new Map();
      this.sessions.set(location.sessionId, session);
    }
    const key = MemoryStorage.keyOf(location);
    let data = session.get(key);
    if (data === undefined) {
      data = { scope: location.scope, scopeId: location.scopeId, history: new Map() };
      session.set(key, data);
    }
    return data;
  }

  private static where(location: SnapshotLocation, name: string): string {
    return `memory:${location.sessionId}/scopes/${location.scope}/${location.scopeId}/snapshots/${name}`;
  }

  saveSnapshot(params: { location: SnapshotLocation; snapshotId: string; isLatest: boolean; snapshot: Snapshot }): Promise<void> {
    return Promise.resolve().then(() => {
      const { location, snapshotId, isLatest, snapshot } = params;
      checkLocation(location);
      if (!isLatest) checkHistoryId(snapshotId);
      checkSnapshotToSave(snapshot);
      const text = serialize(snapshot);
      const data = this.obtain(location);
      if (isLatest) {
        data.latest = text;
        return;
      }
      if (data.history.has(snapshotId)) {
        throw snapshotExistsError(snapshotId, MemoryStorage.where(location, `immutable_history/${historyFileName(snapshotId)}`));
      }
      data.history.set(snapshotId, text);
    });
  }

  loadSnapshot(params: { location: SnapshotLocation; snapshotId?: string }): Promise<Snapshot | null> {
    return Promise.resolve().then(() => {
      const { location, snapshotId } = params;
      checkLocation(location);
      if (snapshotId !== undefined) checkHistoryId(snapshotId);
      const data = this.find(location);
      const text = snapshotId === undefined ? data?.latest : data?.history.get(snapshotId);
      if (text === undefined) return null;
      const name = snapshotId === undefined ? 'snapshot_latest.json' : `immutable_history/snapshot_${snapshotId}.json`;
      return parseStoredSnapshot(text, MemoryStorage.where(location, name));
    });
  }

  listSnapshotIds(params: { location: SnapshotLocation; limit?: number; startAfter?: string }): Promise<string[]> {
    return Promise.resolve().then(() => {
      checkLocation(params.location);
      if (normalisePage(params) === undefined) return [];
      const data = this.find(params.location);
      return data === undefined ? [] : pageOf(data.history.keys(), params);
    });
  }

  deleteSession(params: { sessionId: string }): Promise<void> {
    return Promise.resolve().then(() => {
      checkSessionId(params.sessionId);
      this.sessions.delete(params.sessionId);
    });
  }

  loadManifest(params: { location: SnapshotLocation }): Promise<SnapshotManifest> {
    return Promise.resolve().then(() => {
      checkLocation(params.location);
      const text = this.find(params.location)?.manifest;
      return text === undefined ? defaultManifest() : parseStoredManifest(text, MemoryStorage.where(params.location, 'manifest.json'));
    });
  }

  saveManifest(params: { location: SnapshotLocation; manifest: SnapshotManifest }): Promise<void> {
    return Promise.resolve().then(() => {
      checkLocation(params.location);
      checkManifestToSave(params.manifest);
      this.obtain(params.location).manifest = serialize(params.manifest);
    });
  }

  listSessions(): Promise<string[]> {
    return Promise.resolve([...this.sessions.keys()].sort());
  }

  listLocations(params: { sessionId: string }): Promise<SnapshotLocation[]> {
    return Promise.resolve().then(() => {
      checkSessionId(params.sessionId);
      const session = this.sessions.get(params.sessionId);
      if (session === undefined) return [];
      return [...session.values()]
        .map((d) => ({ sessionId: params.sessionId, scope: d.scope, scopeId: d.scopeId }))
        .sort(compareLocations);
    });
  }

  async prune(options: PruneOptions): Promise<PruneResult> {
    const { location } = options;
    checkLocation(location);
    const plan = planPrune(options);
    const dryRun = options.dryRun === true;
    const ids = await this.listSnapshotIds({ location });
    const data = this.find(location);
    const doomed = await selectPrunable(ids, plan, (id) => {
      const text = data?.history.get(id);
      if (text === undefined) return Promise.resolve(undefined);
      try {
        return Promise.resolve(parseStoredSnapshot(text, id).createdAt);
      } catch {
        return Promise.resolve(undefined);
      }
    });
    if (!dryRun) for (const id of doomed) data?.history.delete(id);
    return { location, deleted: doomed, kept: ids.length - doomed.length, dryRun };
  }

  verify(params: { sessionId?: string } = {}): Promise<VerifyReport> {
    return Promise.resolve().then(() => {
      if (params.sessionId !== undefined) checkSessionId(params.sessionId);
      let checked = 0;
      for (const [sessionId, session] of this.sessions) {
        if (params.sessionId !== undefined && sessionId !== params.sessionId) continue;
        for (const d of session.values()) checked += d.history.size + (d.latest === undefined ? 0 : 1) + (d.manifest === undefined ? 0 : 1);
      }
      // Documents are validated on the way in and never change afterwards.
      return { ok: true, checked, issues: [] };
    });
  }

  du(params: { sessionId?: string } = {}): Promise<StoreUsage[]> {
    return Promise.resolve().then(() => {
      if (params.sessionId !== undefined) checkSessionId(params.sessionId);
      const out: StoreUsage[] = [];
      for (const sessionId of [...this.sessions.keys()].sort()) {
        if (params.sessionId !== undefined && sessionId !== params.sessionId) continue;
        for (const d of this.sessions.get(sessionId)!.values()) {
          let bytes = Buffer.byteLength(d.latest ?? '') + Buffer.byteLength(d.manifest ?? '');
          for (const text of d.history.values()) bytes += Buffer.byteLength(text);
          out.push({ sessionId, scope: d.scope, scopeId: d.scopeId, history: d.history.size, hasLatest: d.latest !== undefined, hasManifest: d.manifest !== undefined, bytes });
        }
      }
      return out.sort(compareLocations);
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
