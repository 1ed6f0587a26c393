/**
 * `SnapshotStorage` in a `Map`: the engine half of the memory backend (the contract's checks,
 * serialising and parsing are in ../base.ts).
 */
import { selectPrunable, type PrunePlan } from '../../contract/retention.js';
import { collectPage, compareLocations, historyFileName, snapshotExistsError } from '../../contract/rules.js';
import type { PruneResult, Scope, SnapshotLocation, StoreUsage, VerifyReport } from '../../contract/types.js';
import { SnapshotStorageBase, type HistoryPage, type StoredText } from '../base.js';

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
export class MemoryStorage extends SnapshotStorageBase {
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

  protected writeLatest(location: SnapshotLocation, text: string): Promise<void> {
    this.obtain(location).latest = text;
    return Promise.resolve();
  }

  protected createHistory(location: SnapshotLocation, snapshotId: string, text: string): Promise<void> {
    const data = this.obtain(location);
    if (data.history.has(snapshotId)) {
      throw snapshotExistsError(snapshotId, MemoryStorage.where(location, `immutable_history/${historyFileName(snapshotId)}`));
    }
    data.history.set(snapshotId, text);
    return Promise.resolve();
  }

  protected readSnapshot(location: SnapshotLocation, snapshotId: string | undefined): Promise<StoredText | null> {
    const data = this.find(location);
    const text = snapshotId === undefined ? data?.latest : data?.history.get(snapshotId);
    if (text === undefined) return Promise.resolve(null);
    const name = snapshotId === undefined ? 'snapshot_latest.json' : `immutable_history/snapshot_${snapshotId}.json`;
    return Promise.resolve({ text, where: MemoryStorage.where(location, name) });
  }

  protected historyPage(location: SnapshotLocation, page: HistoryPage): Promise<string[]> {
    const data = this.find(location);
    return Promise.resolve(data === undefined ? [] : collectPage(data.history.keys(), page));
  }

  protected removeSession(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
    return Promise.resolve();
  }

  protected readManifest(location: SnapshotLocation): Promise<StoredText | null> {
    const text = this.find(location)?.manifest;
    return Promise.resolve(text === undefined ? null : { text, where: MemoryStorage.where(location, 'manifest.json') });
  }

  protected writeManifest(location: SnapshotLocation, text: string): Promise<void> {
    this.obtain(location).manifest = text;
    return Promise.resolve();
  }

  listSessions(): Promise<string[]> {
    return Promise.resolve([...this.sessions.keys()].sort());
  }

  protected locationsOf(sessionId: string): Promise<SnapshotLocation[]> {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return Promise.resolve([]);
    return Promise.resolve([...session.values()].map((d) => ({ sessionId, scope: d.scope, scopeId: d.scopeId })).sort(compareLocations));
  }

  protected async pruneHistory(location: SnapshotLocation, plan: PrunePlan, dryRun: boolean): Promise<PruneResult> {
    const ids = await this.listSnapshotIds({ location });
    const doomed = await selectPrunable(ids, plan, (id) => this.createdAtOf(location, id));
    const data = this.find(location);
    if (!dryRun) for (const id of doomed) data?.history.delete(id);
    return { location, deleted: doomed, kept: ids.length - doomed.length, dryRun };
  }

  protected verifyDocuments(sessionId: string | undefined): Promise<VerifyReport> {
    let checked = 0;
    for (const [id, session] of this.sessions) {
      if (sessionId !== undefined && id !== sessionId) continue;
      for (const d of session.values()) checked += d.history.size + (d.latest === undefined ? 0 : 1) + (d.manifest === undefined ? 0 : 1);
    }
    // Documents are validated on the way in and never change afterwards.
    return Promise.resolve({ ok: true, checked, issues: [] });
  }

  protected usage(sessionId: string | undefined): Promise<StoreUsage[]> {
    const out: StoreUsage[] = [];
    for (const id of [...this.sessions.keys()].sort()) {
      if (sessionId !== undefined && id !== sessionId) continue;
      for (const d of this.sessions.get(id)!.values()) {
        let bytes = Buffer.byteLength(d.latest ?? '') + Buffer.byteLength(d.manifest ?? '');
        for (const text of d.history.values()) bytes += Buffer.byteLength(text);
        out.push({ sessionId: id, scope: d.scope, scopeId: d.scopeId, history: d.history.size, hasLatest: d.latest !== undefined, hasManifest: d.manifest !== undefined, bytes });
      }
    }
    return Promise.resolve(out.sort(compareLocations));
  }
}
