import { isTempName } from '../../../core/atomic-write.js';
import { errnoCode, isCodedError } from '../../../core/errors.js';
import { ContainedFs, RefusedPathError } from './contained-fs.js';
import { HISTORY_INDEX_NAME, isQuiet, pageFromIndex, readWholeIndex, sameStamp, writeIndex } from './history-index.js';
import { SessionError } from '../../contract/errors.js';
import { selectPrunable, type PrunePlan } from '../../contract/retention.js';
import { checkHistoryId, checkLocation, compareLocations, documentIssue, historyFileName, historyIdOf, PageCollector, pageOfSorted, snapshotExistsError } from '../../contract/rules.js';
import type { PruneResult, SnapshotLocation, StoreUsage, VerifyIssue, VerifyReport } from '../../contract/types.js';
import { isIdentifier, isScope } from '../../contract/validation.js';
import { SnapshotStorageBase, type HistoryPage, type StoredText } from '../base.js';

export interface HistoryIndexOptions {
  /** Build the index only for histories at least this long; shorter ones scan fast anyway (default 1000). */
  minEntries?: number;
  /** Build only from a history directory unchanged for this long: the racy-timestamp guard (default 3000 ms). */
  quietMs?: number;
}

export interface FileStorageOptions {
  /** The sorted listing index beside immutable_history/ (see history-index.ts); `false` always scans. */
  historyIndex?: HistoryIndexOptions | false;
  /** fsync file and directory on every write (default true). Off only for throw-away stores. */
  fsync?: boolean;
  /** Temp files of interrupted writes younger than this are left alone by `prune` and by the next writer: they may be live (default 60 s). */
  tempFileGraceMs?: number;
  /**
   * A directory above baseDir that cairn owns (the CLI passes the project root for its default
   * `<root>/.cairn/store`): no link is followed from there down, so a planted `.cairn` or
   * `.cairn/store` link cannot redirect the store. Without it, baseDir itself is the root.
   */
  within?: string;
}

const LATEST = 'snapshot_latest.json';
const MANIFEST = 'manifest.json';
const HISTORY_DIR = 'immutable_history';

/** Names of leftovers from interrupted writes: cairn's unique temp names and upstream's fixed `.tmp`. */
function isLeftoverTemp(name: string): boolean {
  return isTempName(name) || name.endsWith('.tmp');
}

function reasonOf(e: unknown): string {
  if (e instanceof RefusedPathError) return e.message;
  const code = errnoCode(e);
  const msg = e instanceof Error ? e.message : String(e);
  return code !== undefined && !msg.startsWith(code) ? `${code}: ${msg}` : msg;
}

function codeOf(e: unknown): string {
  return isCodedError(e) ? e.code : 'ERR_IO';
}

/**
 * Snapshot storage on the local file system, in upstream Strands' exact layout:
 *
 *     <baseDir>/<sessionId>/scopes/<scope>/<scopeId>/snapshots/
 *       snapshot_latest.json
 *       manifest.json
 *       immutable_history/snapshot_<id>.json
 *
 * Writes are atomic and durable (unique temp, fsync, rename, fsync dir), history is
 * create-only, and no path below `baseDir` is ever followed through a symbolic link.
 */
export class FileStorage extends SnapshotStorageBase {
  /** Absolute base directory (a relative one is resolved once, here). */
  readonly baseDir: string;
  private readonly fs: ContainedFs;
  private readonly fsync: boolean;
  private readonly tempFileGraceMs: number;
  /** Locations whose stale temps this store object already swept (see sweepStaleTemps). */
  private readonly swept = new Set<string>();
  private readonly index: Required<HistoryIndexOptions> | false;

  constructor(baseDir: string, options: FileStorageOptions = {}) {
    super();
    if (typeof baseDir !== 'string' || baseDir.length === 0 || baseDir.includes('\0')) {
      throw new SessionError('FileStorage needs a base directory path (a non-empty string)', { code: 'ERR_INVALID_OPTION' });
    }
    this.fs = new ContainedFs(baseDir, options.within);
    this.baseDir = this.fs.base;
    this.fsync = options.fsync !== false;
    this.tempFileGraceMs = options.tempFileGraceMs ?? 60_000;
    this.index = options.historyIndex === false ? false : { minEntries: 1000, quietMs: 3000, ...options.historyIndex };
  }

  private static dirOf(location: SnapshotLocation): string[] {
    return [location.sessionId, 'scopes', location.scope, location.scopeId, 'snapshots'];
  }

  /** The absolute path of a location's file, for messages and tests. */
  pathFor(location: SnapshotLocation, file: 'latest' | 'manifest' | { snapshotId: string }): string {
    checkLocation(location);
    const dir = FileStorage.dirOf(location);
    if (file === 'latest') return this.fs.pathOf(...dir, LATEST);
    if (file === 'manifest') return this.fs.pathOf(...dir, MANIFEST);
    checkHistoryId(file.snapshotId);
    return this.fs.pathOf(...dir, HISTORY_DIR, historyFileName(file.snapshotId));
  }

  protected async writeLatest(location: SnapshotLocation, text: string): Promise<void> {
    await this.writeDocument(FileStorage.dirOf(location), LATEST, text, false);
    await this.sweepStaleTemps(location);
  }

  /**
   * The next writer of a location cleans up after a killed one: once per store object and
   * location (a CLI run is one store object), after its own write succeeded, it removes the
   * temp files older than the grace period there. A live writer's temp lives for milliseconds
   * (create, write, fsync, rename), far inside the grace, so it is never touched. Best effort:
   * the save already succeeded, and a temp that cannot be removed is left for `store prune`.
   */
  private async sweepStaleTemps(location: SnapshotLocation): Promise<void> {
    const key = FileStorage.dirOf(location).join('/');
    if (this.swept.has(key)) return;
    this.swept.add(key);
    await this.removeStaleTemps(location, false).catch(() => undefined);
  }

  protected async createHistory(location: SnapshotLocation, snapshotId: string, text: string): Promise<void> {
    await this.writeDocument([...FileStorage.dirOf(location), HISTORY_DIR], historyFileName(snapshotId), text, true);
    await this.sweepStaleTemps(location);
  }

  protected async readSnapshot(location: SnapshotLocation, snapshotId: string | undefined): Promise<StoredText | null> {
    const dir = snapshotId === undefined ? FileStorage.dirOf(location) : [...FileStorage.dirOf(location), HISTORY_DIR];
    const name = snapshotId === undefined ? LATEST : historyFileName(snapshotId);
    const text = await this.readDocument(dir, name);
    return text === null ? null : { text, where: this.fs.pathOf(...dir, name) };
  }

  protected async historyPage(location: SnapshotLocation, page: HistoryPage): Promise<string[]> {
    const snapParts = FileStorage.dirOf(location);
    const histParts = [...snapParts, HISTORY_DIR];
    try {
      if (!(await this.fs.probeDirs(histParts))) return [];
      if (this.index === false) return await this.scanPage(histParts, page);
      const index = this.index;
      // The index is read and written through the opened snapshots directory (dir.at), never by path.
      return await this.fs.withDir(snapParts, false, async (snap) => {
        if (snap === null) return [];
        const before = await this.fs.dirStamp(histParts);
        const hit = await pageFromIndex(snap.at(HISTORY_INDEX_NAME), before, page.after, page.limit);
        if (hit !== undefined) return hit;
        // A directory changed within the racy window is scanned, never indexed.
        if (!isQuiet(before, Date.now(), index.quietMs)) return await this.scanPage(histParts, page);
        const all = await this.scanAll(histParts);
        if (all.length >= index.minEntries && sameStamp(before, await this.fs.dirStamp(histParts))) {
          // Only a cache: failing to write it must not fail the listing.
          await writeIndex(snap.at(HISTORY_INDEX_NAME), before, all, this.fsync).catch(() => undefined);
        }
        return pageOfSorted(all, page.after, page.limit);
      });
    } catch (e) {
      throw new SessionError(`Failed to list snapshots for session ${location.sessionId}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
    }
  }

  /** One page by scanning the directory, keeping only the page in a bounded heap. */
  private async scanPage(histParts: string[], page: HistoryPage): Promise<string[]> {
    const collector = new PageCollector(page.after, page.limit);
    await this.fs.forEachEntry(histParts, (entry) => {
      // Links and directories with a snapshot-like name are never listed.
      if (!entry.isFile()) return;
      const id = historyIdOf(entry.name);
      if (id !== undefined) collector.offer(id);
    });
    return collector.result();
  }

  /**
   * Every history id of a location, sorted, by a plain scan: what prune works from (listing
   * through listSnapshotIds could write a listing index that the deletions then make stale).
   */
  private async allHistoryIds(location: SnapshotLocation): Promise<string[]> {
    const histParts = [...FileStorage.dirOf(location), HISTORY_DIR];
    try {
      return (await this.fs.probeDirs(histParts)) ? await this.scanAll(histParts) : [];
    } catch (e) {
      throw new SessionError(`Failed to list snapshots for session ${location.sessionId}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
    }
  }

  /** Every history id of a directory, sorted. */
  private async scanAll(histParts: string[]): Promise<string[]> {
    const ids: string[] = [];
    await this.fs.forEachEntry(histParts, (entry) => {
      if (!entry.isFile()) return;
      const id = historyIdOf(entry.name);
      if (id !== undefined) ids.push(id);
    });
    return ids.sort();
  }

  protected async removeSession(sessionId: string): Promise<void> {
    try {
      // Directory by opened directory: a link anywhere (at <sessionId> too) is removed, its target left alone.
      await this.fs.removeTree([], sessionId);
    } catch (e) {
      throw new SessionError(`Failed to delete session ${sessionId}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
    }
  }

  protected async readManifest(location: SnapshotLocation): Promise<StoredText | null> {
    const dir = FileStorage.dirOf(location);
    const text = await this.readDocument(dir, MANIFEST);
    return text === null ? null : { text, where: this.fs.pathOf(...dir, MANIFEST) };
  }

  protected async writeManifest(location: SnapshotLocation, text: string): Promise<void> {
    await this.writeDocument(FileStorage.dirOf(location), MANIFEST, text, false);
  }

  // ---- upkeep ----

  async listSessions(): Promise<string[]> {
    const entries = await this.listOrFail([], 'Failed to list sessions');
    return entries
      .filter((e) => e.isDirectory() && isIdentifier(e.name))
      .map((e) => e.name)
      .sort();
  }

  protected async locationsOf(sessionId: string): Promise<SnapshotLocation[]> {
    const out: SnapshotLocation[] = [];
    const scopes = await this.listOrFail([sessionId, 'scopes'], `Failed to list locations of session ${sessionId}`);
    for (const scopeEntry of scopes) {
      if (!scopeEntry.isDirectory() || !isScope(scopeEntry.name)) continue;
      const scope = scopeEntry.name;
      const ids = await this.listOrFail([sessionId, 'scopes', scope], `Failed to list locations of session ${sessionId}`);
      for (const idEntry of ids) {
        if (idEntry.isDirectory() && isIdentifier(idEntry.name)) out.push({ sessionId, scope, scopeId: idEntry.name });
      }
    }
    return out.sort(compareLocations);
  }

  protected async pruneHistory(location: SnapshotLocation, plan: PrunePlan, dryRun: boolean): Promise<PruneResult> {
    const ids = await this.allHistoryIds(location);
    const doomed = await selectPrunable(ids, plan, (id) => this.createdAtOf(location, id));
    const historyDir = [...FileStorage.dirOf(location), HISTORY_DIR];
    const deleted: string[] = [];
    for (const id of doomed) {
      if (!dryRun) {
        try {
          await this.fs.unlink(historyDir, historyFileName(id));
        } catch (e) {
          throw new SessionError(`Failed to delete snapshot ${id} of session ${location.sessionId}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
        }
      }
      deleted.push(id);
    }
    if (!dryRun && deleted.length > 0) await this.syncDir(historyDir);
    const tempFilesRemoved = await this.removeStaleTemps(location, dryRun);
    return { location, deleted, kept: ids.length - deleted.length, dryRun, tempFilesRemoved };
  }

  /**
   * Removes only the stale temp files of interrupted writes at `location` (older than the grace)
   * and no history: what a plain `cairn store prune` does, so a kill -9 never needs a
   * retention choice to clean up after it. Returns the paths removed (or, dry, that would be).
   */
  async pruneTempFiles(location: SnapshotLocation, options: { dryRun?: boolean } = {}): Promise<string[]> {
    return this.removeStaleTemps(location, options.dryRun === true);
  }

  /** Temp files of interrupted writes, older than the grace period (younger ones may belong to a live writer). */
  private async removeStaleTemps(location: SnapshotLocation, dryRun: boolean): Promise<string[]> {
    const removed: string[] = [];
    const cutoff = Date.now() - this.tempFileGraceMs;
    for (const dir of [FileStorage.dirOf(location), [...FileStorage.dirOf(location), HISTORY_DIR]]) {
      let entries;
      try {
        entries = await this.fs.list(dir);
      } catch (e) {
        throw new SessionError(`Failed to clean temporary files in ${this.fs.pathOf(...dir)}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
      }
      for (const entry of entries ?? []) {
        if (!entry.isFile() || !isLeftoverTemp(entry.name)) continue;
        const st = await this.fs.lstat(dir, entry.name);
        if (st === null || st.mtimeMs > cutoff) continue;
        if (!dryRun) await this.fs.unlink(dir, entry.name);
        removed.push(this.fs.pathOf(...dir, entry.name));
      }
    }
    return removed;
  }

  protected async verifyDocuments(only: string | undefined): Promise<VerifyReport> {
    const issues: VerifyIssue[] = [];
    let checked = 0;
    const issue = (kind: VerifyIssue['kind'], parts: string[], message: string): void => {
      issues.push({ kind, where: this.fs.pathOf(...parts), message });
    };
    const strayOrTemp = (parts: string[], isFile: boolean, name: string): void => {
      if (isFile && isLeftoverTemp(name)) {
        issue('temp-file', parts, 'leftover temporary file of an interrupted (or in-progress) write; once it is a minute old, a plain `cairn store prune` (no flags: it deletes no history) removes it');
      } else {
        issue('stray', parts, 'does not belong to the store layout');
      }
    };
    /** Entries of a directory the layout expects, or null after reporting why it cannot be read. */
    const entriesOf = async (parts: string[]) => {
      try {
        return (await this.fs.list(parts)) ?? [];
      } catch (e) {
        issue('unreadable', parts, reasonOf(e));
        return null;
      }
    };
    const checkDocument = async (parts: string[], name: string, kind: 'snapshot' | 'manifest'): Promise<void> => {
      checked++;
      let text: string | null;
      try {
        text = await this.fs.readText(parts, name);
      } catch (e) {
        issue('unreadable', [...parts, name], reasonOf(e));
        return;
      }
      if (text === null) return; // removed meanwhile
      const found = documentIssue(text, this.fs.pathOf(...parts, name), kind);
      if (found !== undefined) issues.push(found);
    };

    /** A listing index is fine when stale (it is then ignored); it is an issue when malformed or when it is current but wrong. */
    const checkIndex = async (snapDir: string[]): Promise<void> => {
      const where = [...snapDir, HISTORY_INDEX_NAME];
      const index = await this.fs.withDir(snapDir, false, (snap) => (snap === null ? null : readWholeIndex(snap.at(HISTORY_INDEX_NAME))));
      if (index === null) return; // removed meanwhile
      const fix = 'delete it; cairn rebuilds it when needed';
      if (index === undefined) {
        issue('invalid-index', where, `is not a valid listing index; ${fix}`);
        return;
      }
      const histDir = [...snapDir, HISTORY_DIR];
      try {
        if (!(await this.fs.probeDirs(histDir)) || !sameStamp(index.stamp, await this.fs.dirStamp(histDir))) return;
        const actual = await this.scanAll(histDir);
        if (actual.length !== index.ids.length || actual.some((id, i) => id !== index.ids[i])) {
          issue('invalid-index', where, `disagrees with ${HISTORY_DIR}/ although it claims to be current; ${fix}`);
        }
      } catch (e) {
        issue('unreadable', histDir, reasonOf(e));
      }
    };

    let sessions: string[];
    if (only !== undefined) {
      sessions = [only];
    } else {
      const root = await entriesOf([]);
      if (root === null) return { ok: false, checked, issues };
      sessions = [];
      for (const e of root) {
        if (e.isDirectory() && isIdentifier(e.name)) sessions.push(e.name);
        else strayOrTemp([e.name], e.isFile(), e.name);
      }
      sessions.sort();
    }

    for (const sessionId of sessions) {
      const top = await entriesOf([sessionId]);
      for (const e of top ?? []) {
        if (!(e.name === 'scopes' && e.isDirectory())) strayOrTemp([sessionId, e.name], e.isFile(), e.name);
      }
      if (!top?.some((e) => e.name === 'scopes' && e.isDirectory())) continue;
      for (const s of (await entriesOf([sessionId, 'scopes'])) ?? []) {
        if (!(s.isDirectory() && isScope(s.name))) {
          strayOrTemp([sessionId, 'scopes', s.name], s.isFile(), s.name);
          continue;
        }
        for (const i of (await entriesOf([sessionId, 'scopes', s.name])) ?? []) {
          if (!(i.isDirectory() && isIdentifier(i.name))) {
            strayOrTemp([sessionId, 'scopes', s.name, i.name], i.isFile(), i.name);
            continue;
          }
          const locDir = [sessionId, 'scopes', s.name, i.name];
          for (const l of (await entriesOf(locDir)) ?? []) {
            if (!(l.name === 'snapshots' && l.isDirectory())) strayOrTemp([...locDir, l.name], l.isFile(), l.name);
          }
          const snapDir = [...locDir, 'snapshots'];
          for (const f of (await entriesOf(snapDir)) ?? []) {
            if (f.name === LATEST && f.isFile()) await checkDocument(snapDir, f.name, 'snapshot');
            else if (f.name === MANIFEST && f.isFile()) await checkDocument(snapDir, f.name, 'manifest');
            else if (f.name === HISTORY_INDEX_NAME && f.isFile()) await checkIndex(snapDir);
            else if (f.name === HISTORY_DIR && f.isDirectory()) {
              const histDir = [...snapDir, HISTORY_DIR];
              for (const h of (await entriesOf(histDir)) ?? []) {
                if (h.isFile() && historyIdOf(h.name) !== undefined) await checkDocument(histDir, h.name, 'snapshot');
                else strayOrTemp([...histDir, h.name], h.isFile(), h.name);
              }
            } else strayOrTemp([...snapDir, f.name], f.isFile(), f.name);
          }
        }
      }
    }
    return { ok: issues.length === 0, checked, issues };
  }

  protected async usage(only: string | undefined): Promise<StoreUsage[]> {
    const sessions = only !== undefined ? [only] : await this.listSessions();
    const out: StoreUsage[] = [];
    for (const sessionId of sessions) {
      for (const location of await this.locationsOf(sessionId)) {
        const usage: StoreUsage = { ...location, history: 0, hasLatest: false, hasManifest: false, bytes: 0 };
        const snapDir = FileStorage.dirOf(location);
        const measure = async (dir: string[], name: string): Promise<number> => {
          const st = await this.fs.lstat(dir, name);
          return st?.isFile() ? st.size : 0;
        };
        try {
          for (const f of (await this.fs.list(snapDir)) ?? []) {
            if (f.isFile()) {
              usage.bytes += await measure(snapDir, f.name);
              if (f.name === LATEST) usage.hasLatest = true;
              if (f.name === MANIFEST) usage.hasManifest = true;
            } else if (f.name === HISTORY_DIR && f.isDirectory()) {
              const histDir = [...snapDir, HISTORY_DIR];
              for (const h of (await this.fs.list(histDir)) ?? []) {
                if (!h.isFile()) continue;
                usage.bytes += await measure(histDir, h.name);
                if (historyIdOf(h.name) !== undefined) usage.history++;
              }
            }
          }
        } catch (e) {
          throw new SessionError(`Failed to measure ${this.fs.pathOf(...snapDir)}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
        }
        out.push(usage);
      }
    }
    return out;
  }

  // ---- internals ----

  private async writeDocument(dir: string[], name: string, text: string, createOnly: boolean): Promise<void> {
    const file = this.fs.pathOf(...dir, name);
    const failed = (e: unknown): SessionError => new SessionError(`Failed to write file ${file}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
    try {
      await this.fs.ensureDirs(dir);
    } catch (e) {
      throw failed(e); // an EEXIST here is a file in the way of a directory, not a taken id
    }
    try {
      await this.fs.writeText(dir, name, text, { exclusive: createOnly, fsync: this.fsync });
    } catch (e) {
      // Only the create-only publish (link) says EEXIST when the id is taken.
      if (createOnly && errnoCode(e) === 'EEXIST') throw snapshotExistsError(historyIdOf(name) ?? name, file, e);
      throw failed(e);
    }
  }

  private async readDocument(dir: string[], name: string): Promise<string | null> {
    try {
      return await this.fs.readText(dir, name);
    } catch (e) {
      const file = this.fs.pathOf(...dir, name);
      throw new SessionError(`File system error reading ${file}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
    }
  }

  private async listOrFail(parts: string[], what: string) {
    try {
      return (await this.fs.list(parts)) ?? [];
    } catch (e) {
      throw new SessionError(`${what}: ${reasonOf(e)}`, { code: codeOf(e), cause: e });
    }
  }

  private async syncDir(parts: string[]): Promise<void> {
    // Best effort: the deletes themselves already happened.
    if (this.fsync) await this.fs.syncDir(parts).catch(() => undefined);
  }
}
