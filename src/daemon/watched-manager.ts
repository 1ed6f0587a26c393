/**
 * The snapshot manager of a long-running process (the MCP server's resident capture worker):
 * the very same captures, with what the tree watcher proves (README.md):
 * - the inventory's stat pass skips the rows of directories with no event since the scan that
 *   left the stat cache, when the cache is still in the state that scan left (its rows kept in
 *   this process, the file on disk still the one they were saved as: ScanOptions.knownUnchanged), and at least every FULL_PASS_EVERY_MS it looks at every row;
 * - `git status` is not run again while nothing changed since the last run (in the tree,
 *   ignored directories included, and in `.git`) and no git configuration file outside the tree
 *   moved. A record made with a reused status is checked against its own inventory: it must
 *   equal the one taken with the status reused, or the capture runs again with git's answer.
 * - when only a few paths changed since the last run, and none of them is in `.git`, is a
 *   `.gitignore`/`.gitattributes`/`.gitmodules`, or lies in a nested repository, `git status`
 *   runs limited to those paths and its answer replaces the held one's entries there (see
 *   partialPaths). The record is checked too: the inventory may differ from the last one only
 *   at those paths, or the capture runs again with the whole status.
 * - otherwise, while the events named every path since the held status (a commit, `git add`,
 *   many edits; in `.git` only the index, refs, logs and objects; no `.gitmodules`, not the root's
 *   `.gitignore`), git runs on the tracked files only (`--untracked-files=no`: the untracked walk
 *   is two thirds of a whole run on a 50k-file tree) and the untracked list is the held one's,
 *   looked at again by git (`ls-files --others`) only at the named paths that are not in the
 *   index, the directories of named `.gitignore` files, and the names that left the index since
 *   (IndexNames: read before git ran, compared as bytes); held entries now in the index drop out
 *   (untrackedPlan). The record is checked as a limited run's is. git reads a copy of the index
 *   whose entries that cannot have changed since the held answer are marked assume-valid, so it
 *   looks only at the files that may have (markedIndex).
 * - the index names paths from the work tree's top: tracked runs only when that is the root.
 * - a whole run takes `git rev-parse`'s answer from the last whole run while what rev-parse reads
 *   has not moved (revParseKeyOf): after a commit, git's status starts one process sooner.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { captureGitStatusInBackground, UNKNOWN, type PendingGitStatus } from '../session/capture/git.js';
import { IndexNames, indexKey } from './index-names.js';
import { debugChannel } from '../core/debug.js';
import { SnapshotManager } from '../session/capture/snapshot-manager.js';
import type { CacheState, ScanOptions } from '../inventory/types.js';
import type { GitStatus, PostSnapshot, PreSnapshot, SnapshotManagerOptions } from '../session/types.js';
import { watchTree, type TreeWatchOptions, type WatchMark, type WatchView } from './tree-watch.js';
import { StatusIndex } from './status-index.js';

/**
 * How long the stat pass may lean on the watcher before it looks at every row again: a write
 * through a shared memory map raises no inotify event (the kernel updates the mtime only), so
 * such a change shows within this bound.
 */
export const FULL_PASS_EVERY_MS = 5 * 60 * 1000;

/**
 * A status limited to the changed paths costs git a match of every index entry against every
 * path (~14 ns each here, on top of ~18 ms: 500 paths on a 50k-file index take longer than the
 * whole status), so it is run only while paths x index entries stay under this, and for at most
 * MAX_PARTIAL_PATHS paths (their bytes under MAX_PARTIAL_BYTES: one command line).
 */
export const PARTIAL_BUDGET = 5_000_000;
export const MAX_PARTIAL_PATHS = 400;
const MAX_PARTIAL_BYTES = 256 * 1024;

/** `CAIRN_DEBUG=git`: why each capture ran git the way it did. */
const debug = debugChannel('git');

/** This process stays: its git status runs on the kept status thread at every size, beside the scan. */
const STAYING = { staying: true } as const;

/** `git rev-parse --is-inside-work-tree --show-prefix` at the top of a work tree. */
const AT_TOP = 'true\n\n';

/** Files whose change alters what git says of other paths: any of them named means the whole status. */
const RULE_FILES = new Set(['.gitignore', '.gitattributes', '.gitmodules']);

/**
 * What may change in `.git` while the held untracked list still stands: where HEAD points and the
 * refs, their logs, the objects, the index (whose names are compared), their locks, a commit's
 * message. Anything else (config, info/exclude, info/sparse-checkout, modules/) means the whole status.
 */
const GIT_KEEPS_UNTRACKED = new Set(['HEAD', 'ORIG_HEAD', 'FETCH_HEAD', 'MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE', 'AUTO_MERGE', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'COMMIT_EDITMSG', 'index', 'packed-refs']);
const GIT_KEEPS_UNTRACKED_BELOW = new Set(['refs', 'logs', 'objects']);
/** Named paths a tracked run weighs one by one (a binary search of the index each). */
const MAX_TRACKED_RUN_NAMED = 200_000;

interface LastStatus {
  status: GitStatus;
  mark: WatchMark;
  /** Stats of the configuration files outside the tree that git read, and the environment that names them. */
  outside: { files: string[]; key: string };
  /** The inventory digest of the capture that ran git (set once that capture finished). */
  inventory?: string;
  /**
   * `git rev-parse`'s output of the whole run: a limited run reuses it, since what it depends on
   * (`<root>/.git`, git's configuration, the environment) has not moved while a limited run is allowed.
   */
  revParse?: string;
  /**
   * The index's names as this status saw them, or older (never newer: a name that left the index
   * after git read it and before these were read would be missed): a tracked run's baseline.
   */
  index?: IndexNames;
  /**
   * Whether `index` is exactly the index git read: the file was the same from before git ran until
   * after it answered, or git read a copy of it. Only then may the next tracked run mark the
   * entries that did not change since as assume-valid (IndexNames.assumeValidCopy).
   */
  indexExact?: boolean;
}

/** What a resident process keeps per project: its watcher and git's last answer. */
export class ResidentGit {
  private watch: WatchView | null | undefined;
  private last: LastStatus | null = null;
  /** Set by status(): whether the capture under way got a reused answer. */
  reused = false;
  /** Counters for tests and the bench: git runs and reuses, stat passes that leaned on the watcher. */
  readonly counts = { runs: 0, reused: 0, partial: 0, tracked: 0, assumed: 0, verifiedAgain: 0, trustedPasses: 0, fullPasses: 0 };
  /** The entries events named since the held status's mark; null when unknown (then git runs whole). */
  private namedSince: Set<string> | null = null;
  /** Set by status() for a limited run: the paths it covered and the inventory the held status went with. */
  private partialOf: { paths: Set<string>; inventory: string } | null = null;
  /**
   * The configuration files outside the tree the latest `git config --show-origin` named: a whole
   * run keys on them before git starts and lists them again only once its capture is answered.
   */
  private outsideList: string[] | null = null;
  /** Whether the latest listing set core.ignoreCase or core.precomposeUnicode (git then matches names as this process cannot): no tracked runs. */
  private foldsCase = true;
  /** The index names read last (read again only once the file is another). */
  private indexNames: IndexNames | null = null;
  /** What the latest whole run left to check before its answer may be reused (completeDeferred). */
  private deferred: { keyedOn: string[] | null } | null = null;
  /**
   * The latest whole run's `git rev-parse` answer and the key it was taken under (revParseKey):
   * the next whole run reuses it while the key is the same, so git's status starts ~one process
   * sooner (a whole run follows every commit, when `.git` moved but not what rev-parse reads).
   */
  private revParseMemo: { key: string; answer: string } | null = null;
  /** The stat cache's state as this process's last scan left it, the mark that scan began after, and when a pass last looked at every row. */
  private inventory: { state: CacheState; mark: WatchMark; fullPassAt: number } | null = null;
  /** Directories with events since that mark (taken from the watcher at each mark). */
  private changedDirs = new Set<string>();
  /** Entries events named since that mark; null once an event named none (then a directory's events say nothing of its files). */
  private changedEntries: Set<string> | null = new Set();
  /**
   * The stat cache saves its scans left for after the answer (KnownUnchanged.deferSave: ~35 ms of
   * encoding at 50k files): made on the next turn of the event loop, or first thing in any call
   * that reads or writes what they leave (begin, scanOptions, completeDeferred, close).
   */
  private pendingSaves: (() => void)[] = [];

  constructor(
    readonly root: string,
    readonly cairnDir: string,
    private readonly watchOptions: TreeWatchOptions = {},
  ) {}

  /** Its view of the process's watcher of the tree, started on first use (null where it cannot vouch for anything: see TreeWatch.start). */
  watcher(): WatchView | null {
    if (this.watch === undefined) this.watch = watchTree(this.root, this.cairnDir, this.watchOptions);
    return this.watch;
  }

  /** git's answer may be reused only when the repository's git dir is `<root>/.git` itself (a worktree's or a parent's is not watched). */
  private ownsGitDir(): boolean {
    return fs.lstatSync(path.join(this.root, '.git'), { throwIfNoEntry: false })?.isDirectory() === true;
  }

  /** The scan options with what the watcher knows (see the top of this file). */
  scanOptions(options: ScanOptions): ScanOptions {
    this.savePending();
    const watch = this.watcher();
    if (watch === null) return options;
    const mark = watch.mark();
    for (const d of watch.takeDirty()) this.changedDirs.add(d);
    const named = this.takeNamed(watch);
    if (this.namedSince !== null) {
      if (named === null) this.namedSince = null;
      else for (const p of named) this.namedSince.add(p);
    }
    const prev = this.inventory;
    const now = Date.now();
    const trusted = mark !== null && prev !== null && prev.mark.epoch === mark.epoch && now - prev.fullPassAt < FULL_PASS_EVERY_MS ? prev : null;
    if (trusted !== null) this.counts.trustedPasses++;
    else this.counts.fullPasses++;
    const changed = this.changedDirs;
    const entries = this.changedEntries;
    this.inventory = null; // until this scan says what the cache holds
    return {
      ...options,
      knownUnchanged: {
        dir: (rel) => !changed.has(rel),
        everyDir: () => changed.size === 0,
        ...(entries !== null ? { entry: entryTrust(entries) } : {}),
        cacheState: trusted?.state ?? null,
        deferSave: (save) => {
          if (this.pendingSaves.push(save) === 1) setImmediate(() => this.savePending());
        },
        onCacheState: (state) => {
          this.changedDirs = new Set();
          this.changedEntries = new Set();
          this.inventory = state !== null && mark !== null ? { state, mark, fullPassAt: trusted?.fullPassAt ?? now } : null;
        },
      },
    };
  }

  /** Makes the stat cache saves left for later (a failed one costs the next process speed, as any unsaved cache). */
  private savePending(): void {
    for (const save of this.pendingSaves.splice(0)) {
      try {
        save();
      } catch {
        // (saveCache reports rather than throws; nothing else to do here)
      }
    }
  }

  /** The entries named since the watcher's last mark (null: an event named none), kept for the scan too. */
  private takeNamed(watch: WatchView): Set<string> | null {
    const named = watch.takeNamed();
    if (named === null) this.changedEntries = null;
    else if (this.changedEntries !== null) for (const p of named) this.changedEntries.add(p);
    return named;
  }

  /** What begin() decided for the capture under way: git's last answer, or git's run started then. */
  private pending:
    | { reuse: GitStatus }
    | { read: PendingGitStatus; mark: WatchMark | null; outside: { files: string[]; key: string } | null; listedNow: boolean; revParseKey: string | null; index?: IndexNames }
    | { partial: PendingGitStatus; paths: Set<string>; base: LastStatus; mark: WatchMark }
    | { tracked: PendingGitStatus; plan: UntrackedPlan; base: LastStatus; mark: WatchMark; revParseKey: string | null; marked: boolean }
    | null = null;

  /** The index copy git reads in a tracked run (made on first use; null once it could not be). */
  private statusIndex: StatusIndex | null | undefined;

  /**
   * At the start of a capture: reuse git's last answer when nothing changed since the instant
   * before it ran, or start `git status` now (on a thread for a big repository), so it runs
   * while the capture scans the tree.
   */
  begin(projectRoot: string): void {
    this.completeDeferred();
    this.reused = false;
    this.pending = null;
    this.partialOf = null;
    const watch = this.watcher();
    const last = this.last;
    if (watch !== null && last !== null && last.inventory !== undefined && outsideKey(last.outside.files) === last.outside.key) {
      const now = watch.mark();
      const named = this.takeNamed(watch);
      if (this.namedSince !== null) {
        if (named === null) this.namedSince = null;
        else for (const p of named) this.namedSince.add(p);
      }
      if (now !== null && now.epoch === last.mark.epoch) {
        if (now.changes === last.mark.changes) {
          debug?.('status reused: nothing changed');
          this.pending = { reuse: structuredClone(last.status) };
          return;
        }
        // (With a gitlink in the index, git may fail on the whole tree where a limited run succeeds: a submodule's path made a link.)
        const paths = this.namedSince === null || last.index === undefined || last.index.gitlinks ? null : partialPaths(this.root, this.namedSince);
        if (paths !== null) {
          debug?.(`status limited to ${paths.size} paths`);
          this.namedSince = new Set();
          this.pending = { partial: captureGitStatusInBackground(projectRoot, [...paths], last.revParse, STAYING), paths, base: last, mark: now };
          return;
        }
        // The index names paths from the work tree's top: only when that is the root (rev-parse's
        // prefix empty) are they the paths the events and git's answers name.
        const plan =
          this.namedSince === null
            ? 'an event named no path'
            : last.index === undefined
              ? 'no index names held'
              : last.revParse !== AT_TOP
                ? 'the root is not the top of its work tree'
                : this.foldsCase
                  ? 'core.ignoreCase or core.precomposeUnicode'
                  : untrackedPlan(this.root, this.cairnRel(), last.status.untracked, last.index, this.namedSince);
        if (typeof plan === 'string') debug?.(`whole status: ${plan}`);
        else {
          debug?.(`status of the tracked files; untracked files listed again at ${plan.others.length} paths, ${plan.kept.length} held`);
          this.namedSince = new Set();
          this.indexNames = plan.index;
          const revParseKey = revParseKeyOf(this.root, projectRoot, last.outside.key);
          const knownRevParse = revParseKey !== null && this.revParseMemo?.key === revParseKey ? this.revParseMemo.answer : undefined;
          const indexFile = this.markedIndex(plan, last);
          this.pending = {
            tracked: captureGitStatusInBackground(projectRoot, undefined, knownRevParse, { ...STAYING, trackedOthers: plan.others, ...(indexFile !== null ? { indexFile } : {}) }),
            plan,
            base: last,
            mark: now,
            revParseKey,
            marked: indexFile !== null,
          };
          return;
        }
      } else debug?.('whole status: the watcher began a new epoch');
    } else debug?.(`whole status: ${watch === null ? 'no watcher' : last === null ? 'no status held' : last.inventory === undefined ? 'the held status has no record' : 'a configuration file outside the tree moved'}`);
    this.last = null;
    const mark = this.ownsGitDir() ? (watch?.mark() ?? null) : null;
    // Everything named before this mark is in git's answer (git starts after it).
    const named = watch === null ? undefined : this.takeNamed(watch);
    this.namedSince = mark === null || named === undefined ? null : new Set();
    // The stats are taken now, before git starts, of the files the latest listing named; whether
    // they are still all git reads is checked after the capture (completeDeferred).
    const known = mark === null ? null : this.outsideList;
    const listed = mark === null || known !== null ? null : outsideFiles(this.root);
    const outside = mark === null ? null : known !== null ? { files: known, key: outsideKey(known) } : listed === null ? null : { files: listed.files, key: listed.key };
    if (known === null) {
      this.outsideList = listed?.files ?? null;
      this.foldsCase = listed?.foldsCase ?? true;
    }
    const revParseKey = outside === null ? null : revParseKeyOf(this.root, projectRoot, outside.key);
    const knownRevParse = revParseKey !== null && this.revParseMemo?.key === revParseKey ? this.revParseMemo.answer : undefined;
    const gitDir = path.join(this.root, '.git');
    const indexBefore = mark === null ? null : indexKey(path.join(gitDir, 'index'));
    const read = captureGitStatusInBackground(projectRoot, undefined, knownRevParse, STAYING);
    // Read while git works: they are the names git read when the file is still the one it found.
    const names = indexBefore === null ? null : IndexNames.current(gitDir, this.indexNames);
    this.indexNames = names;
    this.pending = { read, mark, outside, listedNow: known === null, revParseKey, ...(names !== null && names.key === indexBefore ? { index: names } : {}) };
  }

  /**
   * The index copy a tracked run hands git, its unchanged entries marked assume-valid, or null
   * (git then reads the real index). An entry may be marked when the held status was git's answer
   * for exactly the index it was read with (indexExact), the entry is the same there, and the
   * events named neither it nor a directory above it: its file is the one git saw then, compared
   * with the same entry, so git's answer for it is the held one. Entries the held answer lists as
   * changed on disk are left for git to look at; a named `.gitattributes` (git's view of every
   * file under it may move) leaves them all. The record is checked as any tracked run's is
   * (settle): a change the events missed sends the capture back to git's whole answer.
   */
  private markedIndex(plan: UntrackedPlan, last: LastStatus): string | null {
    if (last.indexExact !== true || last.index === undefined || plan.attributes) return null;
    const mtimeMs = plan.index.mtimeMs;
    if (mtimeMs === null) return null;
    if (this.statusIndex === undefined) this.statusIndex = StatusIndex.open(this.root, this.cairnDir);
    if (this.statusIndex === null) return null;
    const copy = plan.index.assumeValidCopy(last.index, [...plan.named, ...last.status.unstaged], this.statusIndex.spare(plan.index.byteLength));
    if (copy === null || copy.marked === 0 || !this.statusIndex.update(copy.bytes, mtimeMs)) return null;
    this.counts.assumed++;
    debug?.(`git given an index copy with ${copy.marked} of ${plan.index.size} entries taken as unchanged`);
    return this.statusIndex.path;
  }

  /** cairn's directory relative to the root (POSIX), or null when it is not inside. */
  private cairnRel(): string | null {
    const rel = path.relative(this.root, this.cairnDir);
    return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? null : rel.split(path.sep).join('/');
  }

  /** The capture's git status: as begin() decided, or `run` when no capture began here. */
  status(run: () => GitStatus): GitStatus {
    const p = this.pending;
    this.pending = null;
    if (p === null) return run();
    if ('reuse' in p) {
      this.reused = true;
      this.counts.reused++;
      return p.reuse;
    }
    if ('partial' in p) {
      const limited = p.partial();
      if (limited.branch !== UNKNOWN && p.base.inventory !== undefined) {
        const status = mergeStatus(p.base.status, limited, p.paths);
        this.counts.partial++;
        this.partialOf = { paths: p.paths, inventory: p.base.inventory };
        this.last = {
          status: structuredClone(status),
          mark: p.mark,
          outside: p.base.outside,
          ...(p.base.revParse !== undefined ? { revParse: p.base.revParse } : {}),
          ...(p.base.index !== undefined ? { index: p.base.index, indexExact: p.base.indexExact === true } : {}),
        };
        return status;
      }
      // git failed on the limited run (a path it refuses): its whole answer, as without a watcher.
      this.last = null;
      this.namedSince = null;
      this.counts.runs++;
      return run();
    }
    if ('tracked' in p) {
      const fresh = p.tracked();
      if (fresh.branch !== UNKNOWN && p.base.inventory !== undefined) {
        const status = { ...fresh, untracked: unionInGitOrder(p.plan.kept, fresh.untracked) };
        this.counts.tracked++;
        this.partialOf = { paths: p.plan.named, inventory: p.base.inventory };
        const revParse = this.keepRevParse(p.revParseKey, p.tracked.revParse);
        // (git read the copy of plan.index when the thread answered; a fallback read the real index)
        const indexExact = (p.marked && p.tracked.via === 'thread') || this.indexStill(p.plan.index);
        this.last = { status: structuredClone(status), mark: p.mark, outside: p.base.outside, index: p.plan.index, indexExact, ...(typeof revParse === 'string' ? { revParse } : {}) };
        return status;
      }
      // git refused a path of the listing (one in a submodule, say): its whole answer.
      this.last = null;
      this.namedSince = null;
      this.counts.runs++;
      return run();
    }
    const status = p.read();
    this.counts.runs++;
    const revParse = this.keepRevParse(p.revParseKey, p.read.revParse);
    if (p.mark !== null && p.outside !== null) {
      this.last = {
        status: structuredClone(status),
        mark: p.mark,
        outside: p.outside,
        ...(typeof revParse === 'string' ? { revParse } : {}),
        ...(p.index !== undefined ? { index: p.index, indexExact: this.indexStill(p.index) } : {}),
      };
      this.deferred = { keyedOn: p.listedNow ? null : p.outside.files };
    }
    return status;
  }

  /** Whether the index file is still the one `names` were read from (after git answered: then git read it). */
  private indexStill(names: IndexNames): boolean {
    return indexKey(path.join(this.root, '.git', 'index')) === names.key;
  }

  /** Keeps rev-parse's answer for the next run while its key holds (only one inside a work tree: any other sends the next run to git again). */
  private keepRevParse(key: string | null, revParse: string | null | undefined): string | null | undefined {
    this.revParseMemo = key !== null && typeof revParse === 'string' && revParse.startsWith('true\n') ? { key, answer: revParse } : null;
    return revParse;
  }

  /**
   * The checks a whole run leaves until its capture is answered (a daemon calls this right after
   * replying; the next capture calls it first in any case): git tracks nothing inside cairn's
   * directory (its events are not counted), and the configuration files git reads are still the
   * ones the run keyed on. Either failing, the run's answer is never reused. Later is as exact as
   * before git ran: a change to the index or to a keyed file since then is an event in `.git` or a
   * key that no longer matches, so the answer is not reused either way.
   */
  completeDeferred(): void {
    this.savePending();
    const d = this.deferred;
    this.deferred = null;
    if (d === null || this.last === null) return;
    let keep = false;
    try {
      keep = !tracksInside(this.root, this.cairnDir);
      if (keep && d.keyedOn !== null) {
        const now = outsideFiles(this.root);
        this.outsideList = now?.files ?? null;
        this.foldsCase = now?.foldsCase ?? true;
        keep = now !== null && now.files.length === d.keyedOn.length && now.files.every((f, i) => f === d.keyedOn![i]);
      }
    } finally {
      if (!keep) {
        this.last = null;
        this.namedSince = null;
        this.revParseMemo = null;
      }
    }
  }

  /** After a capture: the inventory its git status goes with, or (reused) whether it still matches. */
  settle(inventoryDigest: string | undefined, changedSince?: (from: string, to: string) => string[]): boolean {
    const partial = this.partialOf;
    this.partialOf = null;
    if (partial !== null) {
      // The tree may differ from the one the held status went with only where git looked again.
      if (inventoryDigest !== undefined && changedSince !== undefined && this.last !== null && changedSince(partial.inventory, inventoryDigest).every((p) => coveredBy(p, partial.paths))) {
        this.last.inventory = inventoryDigest;
        return true;
      }
      this.last = null;
      this.namedSince = null;
      this.counts.verifiedAgain++;
      return false;
    }
    if (!this.reused) {
      if (this.last !== null && this.last.inventory === undefined && inventoryDigest !== undefined) this.last.inventory = inventoryDigest;
      return true;
    }
    if (inventoryDigest !== undefined && inventoryDigest === this.last?.inventory) return true;
    this.last = null;
    this.counts.verifiedAgain++;
    return false;
  }

  close(): void {
    this.savePending();
    this.pending = null;
    this.statusIndex?.close();
    this.statusIndex = undefined;
    this.watch?.close();
    this.watch = null;
    this.last = null;
    this.deferred = null;
    this.outsideList = null;
    this.namedSince = null;
    this.inventory = null;
    this.changedEntries = new Set();
    this.revParseMemo = null;
    this.indexNames = null;
  }
}

/**
 * The paths a limited `git status` must look at, or null when the whole status must run: nothing
 * named; too many paths for the limited run to be cheaper (PARTIAL_BUDGET); a path in `.git` (the
 * index, HEAD, refs, config, info/exclude: they change what git says of every path) or in a
 * nested repository or submodule (a directory holding `.git` at or above it, or a `.gitmodules`
 * at the root); a `.gitignore`, `.gitattributes` or `.gitmodules` anywhere.
 */
export function partialPaths(root: string, named: ReadonlySet<string>): Set<string> | null {
  if (named.size === 0 || named.size > MAX_PARTIAL_PATHS) return null;
  const entries = indexEntries(root);
  if (entries === null || named.size * entries > PARTIAL_BUDGET) return null;
  if (fs.lstatSync(path.join(root, '.gitmodules'), { throwIfNoEntry: false }) !== undefined) return null;
  const holdsGit = new Map<string, boolean>();
  const nested = (dir: string): boolean => {
    let known = holdsGit.get(dir);
    if (known === undefined) {
      try {
        known = fs.lstatSync(path.join(root, dir, '.git'), { throwIfNoEntry: false }) !== undefined;
      } catch (e) {
        known = (e as NodeJS.ErrnoException).code !== 'ENOTDIR'; // a file is no repository; anything else is a doubt
      }
      holdsGit.set(dir, known);
    }
    return known;
  };
  let bytes = 0;
  for (const p of named) {
    const segments = p.split('/');
    if (p === '' || unsafeSegments(segments) || RULE_FILES.has(segments[segments.length - 1]!)) return null;
    for (let i = 1; i <= segments.length; i++) if (nested(segments.slice(0, i).join('/'))) return null;
    bytes += Buffer.byteLength(p) + 1;
  }
  return bytes > MAX_PARTIAL_BYTES ? null : new Set(named);
}

/** What a tracked run holds and asks (see the top of this file). */
interface UntrackedPlan {
  /** The held untracked entries that still are: outside the paths looked at again, not added to the index. */
  kept: string[];
  /** The paths git lists the untracked files at or below: named and not in the index, or gone from it. */
  others: string[];
  /** Where the untracked entries are git's new answer: the named paths of the tree (but those inside a nested repository) and every name gone from the index. */
  covered: Set<string>;
  /** Every path of the tree events named, the directories of named `.gitignore` files, every name gone from the index: where the record may differ from the held status's (its check). */
  named: Set<string>;
  /** The index's names now (read after the capture's mark, before git starts). */
  index: IndexNames;
  /** Whether a `.gitattributes` was named (then git must look at every tracked file: see ResidentGit.markedIndex). */
  attributes: boolean;
}

/**
 * How a capture may run git on the tracked files only and keep the held untracked list elsewhere,
 * or why the whole status must run: a `.gitmodules`, the root's `.gitignore` changed (one deeper
 * has git list the untracked files of its directory again), a path in a nested repository's
 * `.git`, a change in `.git` other than the index, refs, logs and objects, an index that cannot be
 * read exactly, holds a gitlink (git's line for a submodule depends on the untracked files inside
 * it) or now tracks something in cairn's directory (whose events are not counted), or more paths
 * to look at again than a command line holds.
 *
 * A path becomes untracked, or stops being, only when it is created or removed (an event names it
 * or a directory above it), when it leaves or enters the index (the two indexes' names compared,
 * and each held entry looked up), or when an ignore rule moves (a `.gitignore` named, whose
 * directory is listed again; `.git/info/exclude` refused; the files outside the tree keyed).
 */
export function untrackedPlan(root: string, cairnRel: string | null, heldUntracked: readonly string[], heldIndex: IndexNames, named: ReadonlySet<string>): UntrackedPlan | string {
  if (named.size > MAX_TRACKED_RUN_NAMED) return `${named.size} paths named`;
  if (fs.lstatSync(path.join(root, '.gitmodules'), { throwIfNoEntry: false }) !== undefined) return 'a .gitmodules';
  const covered = new Set<string>();
  // git lists an untracked repository inside the tree as `dir/`, whatever happens in it (and, asked
  // about a path inside, answers nothing, not even `dir/`): paths named there are left out.
  const nestedRepos = new Set(heldUntracked.filter((u) => u.endsWith('/')).map((u) => u.slice(0, -1)));
  const inTree = new Set<string>();
  let attributes = false;
  for (const p of named) {
    const segments = p.split('/');
    if (segments[0] === '.git') {
      if (segments.length === 1 || !(GIT_KEEPS_UNTRACKED_BELOW.has(segments[1]!) || (segments.length === 2 && GIT_KEEPS_UNTRACKED.has(segments[1]!.replace(/\.lock$/, ''))))) return `${p} changed`;
      continue;
    }
    if (unsafeSegments(segments)) return `${p} named`;
    inTree.add(p);
    if (nestedRepos.size > 0 && insideAny(p, nestedRepos)) continue;
    const name = segments[segments.length - 1]!;
    if (name === '.gitattributes') attributes = true;
    if (name === '.gitmodules' || (name === '.gitignore' && segments.length === 1)) return `${p} changed`;
    // A .gitignore's rules reach only below its directory: git lists the untracked files there again.
    // (A .gitattributes changes nothing git lists as untracked; the tracked files' lines are git's own.)
    if (name === '.gitignore') {
      covered.add(segments.slice(0, -1).join('/'));
      inTree.add(segments.slice(0, -1).join('/')); // (what cairn's inventory ignores there moves too)
    }
    covered.add(p);
  }
  const index = IndexNames.current(path.join(root, '.git'), heldIndex);
  if (index === null) return 'an index this process does not read (version 4, split, sparse, or unreadable)';
  // With a gitlink in the index, what git says of it depends on the untracked files inside it.
  if (index.gitlinks) return 'a gitlink in the index';
  const others = new Set<string>();
  if (index !== heldIndex) {
    if (cairnRel !== null && index.hasUnder(cairnRel)) return `git tracks a path in ${cairnRel}`;
    for (const p of index.removedSince(heldIndex)) {
      covered.add(p);
      others.add(p);
      inTree.add(p);
    }
  }
  for (const p of covered) if (!index.has(p)) others.add(p);
  // Only the outermost of nested paths is asked about: given a new repository `dir` and also
  // `dir/file`, git answers neither (it looks inside for `dir/file`, and a repository it does not
  // enter), where `dir` alone has it list `dir/`. The outer path lists everything below it anyway.
  for (const p of others) if (insideAny(p, others)) others.delete(p);
  let bytes = 0;
  for (const p of others) bytes += Buffer.byteLength(p) + 1;
  if (others.size > MAX_PARTIAL_PATHS || bytes > MAX_PARTIAL_BYTES) return `${others.size} paths to list the untracked files of`;
  // (A nested repository is listed as `dir/`: added, it is the gitlink `dir`.)
  const kept = heldUntracked.filter((u) => !coveredBy(u, covered) && !index.has(u.endsWith('/') ? u.slice(0, -1) : u));
  return { kept, others: [...others].sort(compareBytes), covered, named: inTree, index, attributes };
}

/**
 * KnownUnchanged.entry from the named entries: a row is vouched for when neither it nor a
 * directory above it was named (the verdict kept per directory: a changed directory's rows share it).
 */
function entryTrust(named: ReadonlySet<string>): (rel: string) => boolean {
  const dirs = new Map<string, boolean>();
  return (rel) => {
    if (named.has(rel)) return false;
    const slash = rel.lastIndexOf('/');
    if (slash < 0) return true;
    const dir = rel.slice(0, slash);
    let clear = dirs.get(dir);
    if (clear === undefined) dirs.set(dir, (clear = !coveredBy(dir, named)));
    return clear;
  };
}

/** Whether a named path has a segment git's pathspecs or cairn's paths cannot stand for: `.git` (a repository's own files, ours or a nested one's), an empty one, `.` or `..`. */
function unsafeSegments(segments: readonly string[]): boolean {
  return segments.some((s) => s === '.git' || s === '' || s === '.' || s === '..');
}

/** Whether `p` lies below one of `dirs` (not at it). */
function insideAny(p: string, dirs: ReadonlySet<string>): boolean {
  for (let at = p.lastIndexOf('/'); at > 0; at = p.lastIndexOf('/', at - 1)) if (dirs.has(p.slice(0, at))) return true;
  return false;
}

/** The paths of both lists once each, in git's order. */
function unionInGitOrder(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort(compareBytes);
}

/** The number of entries in `<root>/.git/index` (its header's third word; 0 with no index), or null when unreadable. */
function indexEntries(root: string): number | null {
  let fd: number;
  try {
    fd = fs.openSync(path.join(root, '.git', 'index'), 'r');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 0 : null;
  }
  try {
    const header = Buffer.alloc(12);
    if (fs.readSync(fd, header, 0, 12, 0) !== 12 || header.toString('latin1', 0, 4) !== 'DIRC') return null;
    return header.readUInt32BE(8);
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether `p` is one of `paths` or lies below one (a named directory stands for its whole tree). */
function coveredBy(p: string, paths: ReadonlySet<string>): boolean {
  return paths.has(p) || insideAny(p, paths);
}

/** `held` with its entries at or below `paths` replaced by `limited`'s (git's answer for exactly those paths), in git's order. */
export function mergeStatus(held: GitStatus, limited: GitStatus, paths: ReadonlySet<string>): GitStatus {
  const merge = (a: string[], b: string[]): string[] => {
    const out = a.filter((p) => !coveredBy(p, paths));
    out.push(...b);
    return out.sort(compareBytes);
  };
  return { branch: limited.branch, commit: limited.commit, staged: merge(held.staged, limited.staged), unstaged: merge(held.unstaged, limited.unstaged), untracked: merge(held.untracked, limited.untracked) };
}

/** git sorts paths by their bytes (UTF-8), which is not JavaScript's UTF-16 order. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * The files outside the tree whose content changes what git status shows: every configuration
 * file git read (`--show-origin`) or was told to include, the excludes and attributes files, and
 * the environment naming them.
 */
function outsideFiles(root: string): { files: string[]; key: string; foldsCase: boolean } | null {
  let listing: string;
  try {
    listing = execFileSync('git', ['config', '--list', '--show-origin', '-z'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 24 });
  } catch {
    return null;
  }
  const files = new Set<string>();
  const folds = new Map<string, boolean>();
  const parts = listing.split('\0');
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const origin = parts[i]!;
    const from = origin.startsWith('file:') ? path.resolve(root, origin.slice(5)) : null;
    if (from !== null) files.add(from);
    const [key, value] = splitOnce(parts[i + 1]!);
    const name = key.toLowerCase();
    // The last setting wins; a key without a value is true, and anything but a plain false is taken for true.
    if (name === 'core.ignorecase' || name === 'core.precomposeunicode') folds.set(name, !parts[i + 1]!.includes('\n') || !['false', 'no', 'off', '0', ''].includes(value.trim().toLowerCase()));
    if (value === '') continue;
    if (name === 'core.excludesfile' || name === 'core.attributesfile') files.add(path.resolve(root, homeExpanded(value)));
    // An included file that sets nothing yet is never an origin in the listing: it is keyed by
    // its include directive instead (whatever the condition: being keyed costs only a stat), so
    // a first entry written into it is seen. Git resolves its path from the including file's directory.
    else if (from !== null && (name === 'include.path' || (name.startsWith('includeif.') && name.endsWith('.path')))) files.add(path.resolve(path.dirname(from), homeExpanded(value)));
  }
  const config = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  for (const f of [path.join(config, 'git', 'ignore'), path.join(config, 'git', 'attributes'), path.join(config, 'git', 'config'), path.join(os.homedir(), '.gitconfig'), '/etc/gitconfig', '/etc/gitattributes']) files.add(f);
  const list = [...files].sort();
  return { files: list, key: outsideKey(list), foldsCase: [...folds.values()].includes(true) };
}

function homeExpanded(value: string): string {
  return value.replace(/^~(?=\/)/, os.homedir());
}

function splitOnce(entry: string): [string, string] {
  const nl = entry.indexOf('\n');
  return nl < 0 ? [entry, ''] : [entry.slice(0, nl), entry.slice(nl + 1)];
}

const ENV_NAMES = ['HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_CONFIG_NOSYSTEM', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_PARAMETERS', 'GIT_CEILING_DIRECTORIES'];

function outsideKey(files: readonly string[]): string {
  const parts = ENV_NAMES.map((n) => `${n}=${process.env[n] ?? ''}`);
  for (const f of files) {
    const st = fs.statSync(f, { throwIfNoEntry: false, bigint: true });
    parts.push(st === undefined ? `${f}:-` : `${f}:${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
  }
  return parts.join('\n');
}

/**
 * What `git rev-parse --is-inside-work-tree --show-prefix` reads, run in `projectRoot` of a
 * repository whose git dir is `<root>/.git`: the configuration (core.bare, core.worktree, includes:
 * `outsideKey`, which keys every file the last listing named, `.git/config` among them, and the
 * environment naming them), `.git/config` itself, the directories git walks and the owners it
 * checks (safe.directory), HEAD (includeIf onbranch, and whether `.git` is a repository at all),
 * a `commondir`. Null when one cannot be read: git runs.
 */
function revParseKeyOf(root: string, projectRoot: string, outside: string): string | null {
  const parts = [projectRoot, outside];
  const dotGit = path.join(root, '.git');
  try {
    for (const f of [root, projectRoot, dotGit, path.join(dotGit, 'config'), path.join(dotGit, 'HEAD'), path.join(dotGit, 'commondir')]) {
      const st = fs.lstatSync(f, { throwIfNoEntry: false, bigint: true });
      parts.push(st === undefined ? `${f}:-` : `${f}:${st.dev}:${st.ino}:${st.mode}:${st.uid}:${st.isDirectory() ? '' : `${st.size}:${st.mtimeNs}:${st.ctimeNs}`}`);
    }
  } catch {
    return null;
  }
  return parts.join('\n');
}

/** Whether git tracks anything inside cairn's directory (whose events the watcher does not count). */
function tracksInside(root: string, cairnDir: string): boolean {
  try {
    return execFileSync('git', ['--literal-pathspecs', 'ls-files', '-z', '--', path.relative(root, cairnDir)], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) !== '';
  } catch {
    return true;
  }
}

const residents = new Map<string, ResidentGit>();

/** The resident state of a project in this process (one per root and cairn directory). */
export function residentGitFor(root: string, cairnDir: string, watchOptions?: TreeWatchOptions): ResidentGit {
  const key = `${root}\0${cairnDir}`;
  let r = residents.get(key);
  if (r === undefined) {
    r = new ResidentGit(root, cairnDir, watchOptions);
    residents.set(key, r);
  }
  return r;
}

/** Runs the checks the captures of this process left until they were answered (ResidentGit.completeDeferred). */
export function completeDeferredChecks(): void {
  for (const r of residents.values()) r.completeDeferred();
}

/** Stops every watcher of this process (tests, shutdown). */
export function closeResidents(): void {
  for (const r of residents.values()) r.close();
  residents.clear();
}

/** The manager a resident worker uses for one capture: plain options in, this process's state for the project behind it. */
export function residentManager(projectRoot: string, options: SnapshotManagerOptions = {}, watchOptions?: TreeWatchOptions): SnapshotManager {
  const root = path.resolve(projectRoot);
  return new WatchedSnapshotManager(projectRoot, options, residentGitFor(root, path.resolve(root, options.cairnDir ?? '.cairn'), watchOptions));
}

/** SnapshotManager whose git status comes from `resident` (see the top of this file). */
export class WatchedSnapshotManager extends SnapshotManager {
  constructor(
    projectRoot: string,
    options: SnapshotManagerOptions,
    private readonly resident: ResidentGit,
  ) {
    super(projectRoot, options);
  }

  protected override inventoryScanOptions(options: ScanOptions): ScanOptions {
    return this.resident.scanOptions(options);
  }

  /**
   * begin() started git (or chose its held answer) before the scan: the capture takes the
   * status only where it needs it, so storing the inventory runs while git still works.
   */
  protected override gitStatusLater(projectRoot: string): () => GitStatus {
    if (path.resolve(projectRoot) !== this.resident.root) return super.gitStatusLater(projectRoot);
    let status: GitStatus | undefined;
    return () => (status ??= this.captureGitStatus(projectRoot));
  }

  override captureGitStatus(projectRoot: string): GitStatus {
    if (path.resolve(projectRoot) !== this.resident.root) return super.captureGitStatus(projectRoot);
    return this.resident.status(() => super.captureGitStatus(projectRoot));
  }

  override capturePreSnapshot(projectRoot: string, iterationDir: string): PreSnapshot {
    return this.checked(projectRoot, () => super.capturePreSnapshot(projectRoot, iterationDir));
  }

  override capturePostSnapshot(projectRoot: string, iterationDir: string): PostSnapshot {
    return this.checked(projectRoot, () => super.capturePostSnapshot(projectRoot, iterationDir));
  }

  private checked<T extends PreSnapshot | PostSnapshot>(projectRoot: string, capture: () => T): T {
    const own = path.resolve(projectRoot) === this.resident.root;
    if (own) this.resident.begin(projectRoot);
    const record = capture();
    const changedSince = (from: string, to: string): string[] =>
      this.inventoryStore(projectRoot)
        .changedEntries(from, to)
        // A symbolic link's row follows what it points to, which may lie anywhere (no event on the
        // link); git sees only the link's text, and a new text is a new link, an event on its name.
        .filter((c) => c.before === null || c.after === null || c.after.kind !== 'symlink')
        .map((c) => c.path);
    if (!own || this.resident.settle(record.inventory?.digest, changedSince)) return record;
    // The tree moved where the watcher saw nothing: capture again, with git's own answer.
    this.resident.begin(projectRoot);
    const again = capture();
    this.resident.settle(again.inventory?.digest, changedSince);
    return again;
  }
}
