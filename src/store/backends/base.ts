/**
 * The shared half of every backend: the contract's methods, each checking its input, serialising
 * what it saves and parsing what it loads in one place, then handing the engine a small job in
 * plain terms (write this text as the latest, read the manifest's text, list a page of history
 * ids after this cursor). A backend extends this class and implements only those jobs, so the
 * rules of `../contract/rules.ts` (upstream's messages, shape checks, listing order, retention)
 * cannot drift between engines: they are applied here, once, before and after each engine call.
 */
import { planPrune, type PrunePlan } from '../contract/retention.js';
import {
  checkHistoryId,
  checkLocation,
  checkManifestToSave,
  checkSessionId,
  checkSnapshotToSave,
  defaultManifest,
  normalisePage,
  parseStoredManifest,
  parseStoredSnapshot,
  serialize,
} from '../contract/rules.js';
import type {
  ManagedSnapshotStorage,
  PruneOptions,
  PruneResult,
  Snapshot,
  SnapshotLocation,
  SnapshotManifest,
  StoreUsage,
  VerifyReport,
} from '../contract/types.js';

/** A stored document as an engine hands it back: its text, and how messages name it (a path, a key, a row). */
export interface StoredText {
  text: string;
  where: string;
}

/** A validated listing page: ids strictly after `after` (lower case), at most `limit` of them. */
export interface HistoryPage {
  after: string | undefined;
  limit: number | undefined;
}

export abstract class SnapshotStorageBase implements ManagedSnapshotStorage {
  // ---- the engine's jobs: inputs are already checked, texts already serialised ----

  /** Replaces the location's latest snapshot with `text`. */
  protected abstract writeLatest(location: SnapshotLocation, text: string): Promise<void>;
  /** Creates history snapshot `snapshotId` with `text`; a taken id throws `snapshotExistsError`. */
  protected abstract createHistory(location: SnapshotLocation, snapshotId: string, text: string, snapshot: Snapshot): Promise<void>;
  /** The latest snapshot's text (`snapshotId` undefined) or a history snapshot's; null when there is none. */
  protected abstract readSnapshot(location: SnapshotLocation, snapshotId: string | undefined): Promise<StoredText | null>;
  /** One page of the location's history ids, in byte order. */
  protected abstract historyPage(location: SnapshotLocation, page: HistoryPage): Promise<string[]>;
  /** Removes everything of the session; a missing session is not an error. */
  protected abstract removeSession(sessionId: string): Promise<void>;
  /** The manifest's text; null when none was saved. */
  protected abstract readManifest(location: SnapshotLocation): Promise<StoredText | null>;
  protected abstract writeManifest(location: SnapshotLocation, text: string): Promise<void>;
  /** The session's locations, in the order the contract lists them. */
  protected abstract locationsOf(sessionId: string): Promise<SnapshotLocation[]>;
  /** Applies a retention plan to the location's history (never the latest). */
  protected abstract pruneHistory(location: SnapshotLocation, plan: PrunePlan, dryRun: boolean): Promise<PruneResult>;
  /** Checks every stored document, of one session or of the whole store. */
  protected abstract verifyDocuments(sessionId: string | undefined): Promise<VerifyReport>;
  /** Counts and sizes per location, of one session or of the whole store. */
  protected abstract usage(sessionId: string | undefined): Promise<StoreUsage[]>;

  abstract listSessions(): Promise<string[]>;

  // ---- the contract ----

  async saveSnapshot(params: { location: SnapshotLocation; snapshotId: string; isLatest: boolean; snapshot: Snapshot }): Promise<void> {
    const { location, snapshotId, isLatest, snapshot } = params;
    checkLocation(location);
    // As upstream, the id is ignored (and not validated) for `latest`.
    if (!isLatest) checkHistoryId(snapshotId);
    checkSnapshotToSave(snapshot);
    const text = serialize(snapshot);
    if (isLatest) await this.writeLatest(location, text);
    else await this.createHistory(location, snapshotId, text, snapshot);
  }

  async loadSnapshot(params: { location: SnapshotLocation; snapshotId?: string }): Promise<Snapshot | null> {
    const { location, snapshotId } = params;
    checkLocation(location);
    if (snapshotId !== undefined) checkHistoryId(snapshotId);
    const found = await this.readSnapshot(location, snapshotId);
    return found === null ? null : parseStoredSnapshot(found.text, found.where);
  }

  async listSnapshotIds(params: { location: SnapshotLocation; limit?: number; startAfter?: string }): Promise<string[]> {
    checkLocation(params.location);
    // limit <= 0 gives [] before the cursor is looked at, as upstream.
    const page = normalisePage(params);
    return page === undefined ? [] : this.historyPage(params.location, page);
  }

  async deleteSession(params: { sessionId: string }): Promise<void> {
    checkSessionId(params.sessionId);
    await this.removeSession(params.sessionId);
  }

  async loadManifest(params: { location: SnapshotLocation }): Promise<SnapshotManifest> {
    checkLocation(params.location);
    const found = await this.readManifest(params.location);
    // The default is not persisted, as upstream.
    return found === null ? defaultManifest() : parseStoredManifest(found.text, found.where);
  }

  async saveManifest(params: { location: SnapshotLocation; manifest: SnapshotManifest }): Promise<void> {
    checkLocation(params.location);
    checkManifestToSave(params.manifest);
    await this.writeManifest(params.location, serialize(params.manifest));
  }

  // ---- upkeep ----

  async listLocations(params: { sessionId: string }): Promise<SnapshotLocation[]> {
    checkSessionId(params.sessionId);
    return this.locationsOf(params.sessionId);
  }

  async prune(options: PruneOptions): Promise<PruneResult> {
    checkLocation(options.location);
    const plan = planPrune(options);
    return this.pruneHistory(options.location, plan, options.dryRun === true);
  }

  async verify(params: { sessionId?: string } = {}): Promise<VerifyReport> {
    if (params.sessionId !== undefined) checkSessionId(params.sessionId);
    return this.verifyDocuments(params.sessionId);
  }

  async du(params: { sessionId?: string } = {}): Promise<StoreUsage[]> {
    if (params.sessionId !== undefined) checkSessionId(params.sessionId);
    return this.usage(params.sessionId);
  }

  /** A history snapshot's `createdAt` for retention; undefined when it is missing or unreadable (its id's time is used then). */
  protected async createdAtOf(location: SnapshotLocation, snapshotId: string): Promise<string | undefined> {
    try {
      return (await this.loadSnapshot({ location, snapshotId }))?.createdAt;
    } catch {
      return undefined;
    }
  }

  /** Releases connections; nothing to release for a local backend. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
