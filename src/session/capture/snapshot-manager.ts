/**
 * The seed's `SnapshotManager`: pre/post records around one agent iteration. Every documented
 * method is here, synchronous, returning plain objects; cairn adds a whole-tree inventory to
 * each record so uncommitted and untracked work counts (see `../../shared/spec/session.md`).
 */
import * as path from 'node:path';
import { parseJsonBounded } from '../../core/bounded-json.js';
import { ContainedDir, readFileWithin, rootedAt, writeFileWithin } from '../../core/contained-dir.js';
import { decodeUtf8Strict } from '../../core/utf8.js';
import { isStrictlyInside } from '../../core/paths.js';
import { CairnError, errnoCode } from '../../core/errors.js';
import { ALWAYS_SKIP, isValidRelPath, scanTreeSync, type ScanOptions } from '../../inventory/index.js';
import { capturePreContent, copyPostContent, type CaptureContext } from '../../content/capture.js';
import type { ContentRecord } from '../../content/record.js';
import { calculateDiff } from './diff.js';
import { formatDuration } from '../duration.js';
import {
  DEFAULT_STATE_DIR,
  POST_SNAPSHOT_FILE,
  PRE_SNAPSHOT_FILE,
  captureKeyFiles,
  captureStateDir,
  createFileSnapshot,
  toPosixRelative,
} from '../files.js';
import * as git from './git.js';
import { InventoryStore, type InventoryEntry, type InventoryPruneResult } from '../inventory-store/inventory-store.js';
import { recoverInvalidNames } from './supplement.js';
import { findTestResults, parseTestOutput } from '../test-results/test-results.js';
import { testResultsFromRuns } from '../test-results/runs.js';
import type {
  AiwgState,
  FileDiff,
  FileSnapshot,
  GitStatus,
  InventoryRef,
  PostSnapshot,
  PreSnapshot,
  SnapshotDiff,
  SnapshotManagerOptions,
  TestResults,
  WorkingTreeChanges,
} from '../types.js';

export const PRE_SNAPSHOT_NOT_FOUND = 'Pre-snapshot not found - cannot capture post-snapshot';

/** How many skipped paths a snapshot lists by name (the count is always exact). */
const SKIPPED_PATHS_LISTED = 100;

export class SnapshotManager {
  /** The seed stores it; cairn also uses it as the home of `.cairn/` for `pruneInventories`. */
  readonly projectRoot: string;
  private readonly options: SnapshotManagerOptions;

  constructor(projectRoot: string, options: SnapshotManagerOptions = {}) {
    // Upstream's README shows `new SnapshotManager({projectRoot})`; the implementation (our seed)
    // takes a path. Accept the object form here, where it is unambiguous.
    const fromObject = (projectRoot as unknown as { projectRoot?: unknown } | null)?.projectRoot;
    this.projectRoot = typeof projectRoot === 'object' && typeof fromObject === 'string' ? fromObject : projectRoot;
    this.options = { ...options };
  }

  /** Captures git state, key files, the state dir and a working-tree inventory; writes `pre-snapshot.json`. */
  capturePreSnapshot(projectRoot: string, iterationDir: string): PreSnapshot {
    requirePaths('capturePreSnapshot', projectRoot, iterationDir);
    const stateDir = this.options.stateDir ?? DEFAULT_STATE_DIR;
    const timestamp = new Date().toISOString();
    const keyFiles = this.captureKeyFiles(projectRoot);
    const aiwg = captureStateDir(projectRoot, stateDir);
    let gitStatus: (() => GitStatus) | undefined;
    const inventory = this.takeInventory(projectRoot, stateDir, iterationDir, () => (gitStatus = this.gitStatusLater(projectRoot)));
    const snapshot: PreSnapshot = { timestamp, git: this.withoutOwnDir(projectRoot, gitStatus?.() ?? this.captureGitStatus(projectRoot)), keyFiles, aiwg, stateDir };
    const file = path.join(iterationDir, PRE_SNAPSHOT_FILE);
    if (inventory) {
      snapshot.inventory = inventory.ref;
      const content = this.captureContent(projectRoot, inventory, snapshot.git, null);
      if (content) snapshot.content = content;
    }
    writeSnapshotFile(file, snapshot, projectRoot);
    if (inventory) inventory.store.addRef(file, inventory.ref.digest);
    return snapshot;
  }

  /**
   * Captures the state after the session; throws `Error('Pre-snapshot not found - cannot capture
   * post-snapshot')` without a pre-snapshot. Commits and `fileDiffs` cover pre HEAD → post HEAD;
   * `workingTree` covers everything that changed on disk, committed or not.
   */
  capturePostSnapshot(projectRoot: string, iterationDir: string): PostSnapshot {
    requirePaths('capturePostSnapshot', projectRoot, iterationDir);
    const preFile = path.join(iterationDir, PRE_SNAPSHOT_FILE);
    const pre = readPreSnapshot(preFile, projectRoot);
    const stateDir = this.options.stateDir ?? pre.stateDir ?? DEFAULT_STATE_DIR;
    const timestamp = new Date().toISOString();
    const aiwg = captureStateDir(projectRoot, stateDir);
    // What `cairn run` captured in this iteration first; then the seed's documented search.
    const tests = testResultsFromRuns(iterationDir, projectRoot) ?? this.findTestResults(projectRoot, iterationDir);
    const keyFiles = this.captureKeyFiles(projectRoot);
    let gitStatusLater: (() => GitStatus) | undefined;
    const inventory = this.takeInventory(projectRoot, stateDir, iterationDir, () => (gitStatusLater = this.gitStatusLater(projectRoot)));
    // What the inventories alone decide comes before git's answer is awaited (git may still be
    // running): the pre→post diff, and the bytes of the paths it names copied into the store.
    const changes = inventory ? workingTreeChanges(inventory.store, pre.inventory, inventory.ref) : null;
    const postContent = inventory && changes ? this.copyPostContent(projectRoot, inventory, pre) : null;
    const gitStatus = this.withoutOwnDir(projectRoot, gitStatusLater?.() ?? this.captureGitStatus(projectRoot));
    const { fileDiffs, commits } = this.commitRange(projectRoot, pre.git, gitStatus);
    const snapshot: PostSnapshot = { timestamp, git: gitStatus, fileDiffs, commits, aiwg, tests, keyFiles, stateDir };
    const file = path.join(iterationDir, POST_SNAPSHOT_FILE);
    if (inventory) {
      snapshot.inventory = inventory.ref;
      if (changes) snapshot.workingTree = changes;
      const content = postContent !== null ? postContent(gitStatus) : this.captureContent(projectRoot, inventory, gitStatus, null);
      if (content) snapshot.content = content;
    }
    writeSnapshotFile(file, snapshot, projectRoot);
    if (inventory) inventory.store.addRef(file, inventory.ref.digest);
    return snapshot;
  }

  /**
   * The working tree's inventory now, scanned and stored as pre and post take theirs (the same
   * options, hence the same stat cache: a file whose stat is unchanged is not read again), for a
   * caller that compares the disk with recorded inventories (restore). No snapshot references
   * it: the caller releases it (InventoryStore.release) when done. Null with the inventory off.
   */
  inventoryNow(projectRoot: string = this.projectRoot, stateDir: string = this.options.stateDir ?? DEFAULT_STATE_DIR): { digest: string; store: InventoryStore } | null {
    const inventory = this.takeInventory(projectRoot, stateDir, this.cairnDir(projectRoot));
    return inventory === null ? null : { digest: inventory.ref.digest, store: inventory.store };
  }

  /** The options of an inventory's scan, as built; a long-running subclass adds what its watcher knows (src/daemon/). */
  protected inventoryScanOptions(options: ScanOptions): ScanOptions {
    return options;
  }

  /**
   * The status without cairn's own directory, as the inventory leaves it out: a status read
   * while cairn writes there (the CLI's prefetch runs before `.cairn/.gitignore` exists on a
   * first run) would otherwise list its temp files, and two identical runs would differ.
   */
  private withoutOwnDir(projectRoot: string, status: GitStatus): GitStatus {
    const own = relativeInside(path.resolve(projectRoot), this.cairnDir(projectRoot));
    if (own === null) return status;
    const keep = (paths: string[]): string[] => (paths.some((p) => under(p, [own])) ? paths.filter((p) => !under(p, [own])) : paths);
    return { ...status, staged: keep(status.staged), unstaged: keep(status.unstaged), untracked: keep(status.untracked) };
  }

  /** Pure comparison of two snapshots (see `diff.ts`). */
  calculateDiff(preSnapshot: PreSnapshot, postSnapshot: PostSnapshot): SnapshotDiff {
    return calculateDiff(preSnapshot, postSnapshot);
  }

  captureGitStatus(projectRoot: string): GitStatus {
    return git.captureGitStatus(projectRoot);
  }

  /**
   * The git status, started now and read when needed: on a big repository `git status` runs on
   * another thread while this one takes the inventory (the two cost about the same). A subclass
   * that overrides captureGitStatus (or a spy that replaced it) gets its own method, called right away.
   */
  protected gitStatusLater(projectRoot: string): () => GitStatus {
    if (this.captureGitStatus !== OWN_CAPTURE_GIT_STATUS) {
      const status = this.captureGitStatus(projectRoot);
      return () => status;
    }
    return git.captureGitStatusInBackground(projectRoot);
  }

  captureKeyFiles(projectRoot: string): FileSnapshot[] {
    return captureKeyFiles(projectRoot);
  }

  /** The state directory (`.aiwg/` unless configured) and the internal Ralph state. */
  captureAiwgState(projectRoot: string): AiwgState {
    return captureStateDir(projectRoot, this.options.stateDir ?? DEFAULT_STATE_DIR);
  }

  createFileSnapshot(projectRoot: string, filePath: string): FileSnapshot {
    return createFileSnapshot(projectRoot, filePath);
  }

  calculateFileDiffs(projectRoot: string, fromCommit: string, toCommit: string): FileDiff[] {
    return git.calculateFileDiffs(projectRoot, fromCommit, toCommit);
  }

  getCommitsSince(projectRoot: string, sinceCommit: string): string[] {
    return git.getCommitsSince(projectRoot, sinceCommit);
  }

  findTestResults(projectRoot: string, iterationDir: string): TestResults {
    return findTestResults(projectRoot, iterationDir);
  }

  parseTestOutput(content: string): ReturnType<typeof parseTestOutput> {
    return parseTestOutput(content);
  }

  formatDuration(ms: number): string {
    return formatDuration(ms);
  }

  /** The content-addressed inventory store of a project (default `<projectRoot>/.cairn/inventories`). */
  inventoryStore(projectRoot: string = this.projectRoot): InventoryStore {
    return new InventoryStore(path.join(this.cairnDir(projectRoot), 'inventories'), { within: path.resolve(projectRoot) });
  }

  /**
   * Deletes stored inventory objects that no existing pre/post snapshot file references any more
   * (GC by reachability). Objects younger than `graceMs` (default 15 minutes) are kept, so an
   * inventory another process is writing right now is never pulled from under it.
   */
  pruneInventories(options: { graceMs?: number; dryRun?: boolean } = {}): InventoryPruneResult {
    return this.inventoryStore().prune(options);
  }

  private cairnDir(projectRoot: string): string {
    return path.resolve(projectRoot, this.options.cairnDir ?? '.cairn');
  }

  /**
   * Keeps the content needed to put the tree back (src/content/capture.ts): at pre (`pre` null)
   * what git does not hold; at post the two sides of every path the iteration changed.
   */
  private captureContent(projectRoot: string, inventory: CapturedInventory, gitStatus: GitStatus, pre: PreSnapshot | null): ContentRecord | null {
    if (this.options.content === false) return null;
    if (pre?.inventory !== undefined) return this.copyPostContent(projectRoot, inventory, pre)?.(gitStatus) ?? null;
    return capturePreContent({ ...this.contentSide(projectRoot, inventory), git: gitStatus });
  }

  /**
   * Post's content in two steps (content/capture.ts, copyPostContent): the bytes of every path
   * the iteration changed are stored now; the returned function makes the record from git's
   * status. Null when content is off or pre has no inventory (then captureContent keeps pre's share).
   */
  private copyPostContent(projectRoot: string, inventory: CapturedInventory, pre: PreSnapshot): ((gitStatus: GitStatus) => ContentRecord) | null {
    if (this.options.content === false || pre.inventory === undefined) return null;
    const preSide: { digest: string; gitCommit?: string } = { digest: pre.inventory.digest };
    if (pre.content?.gitCommit !== undefined) preSide.gitCommit = pre.content.gitCommit;
    return copyPostContent(this.contentSide(projectRoot, inventory), preSide);
  }

  /** What the content capture of one side needs besides git's status. */
  private contentSide(projectRoot: string, inventory: CapturedInventory): Omit<CaptureContext, 'git'> {
    return {
      root: path.resolve(projectRoot),
      cairnDir: this.cairnDir(projectRoot),
      inventories: inventory.store,
      digest: inventory.ref.digest,
      files: inventory.files,
      ...(this.options.contentCapBytes === undefined ? {} : { capBytes: this.options.contentCapBytes }),
    };
  }

  /** The commit range of the session; a session that began on an unborn branch owns every commit since. */
  private commitRange(projectRoot: string, preGit: GitStatus, postGit: GitStatus): { fileDiffs: FileDiff[]; commits: string[] } {
    const startedUnborn = preGit.commit === git.UNKNOWN && preGit.branch !== git.UNKNOWN;
    if (startedUnborn && postGit.commit !== git.UNKNOWN) {
      const empty = git.emptyTree(projectRoot);
      return {
        fileDiffs: empty === null ? [] : git.calculateFileDiffs(projectRoot, empty, postGit.commit),
        commits: git.getAllCommits(projectRoot),
      };
    }
    // No commit in the session (post's HEAD is pre's): no git log, unless a subclass asks itself.
    const noCommit = preGit.commit === postGit.commit && preGit.commit !== git.UNKNOWN && this.getCommitsSince === OWN_GET_COMMITS_SINCE;
    return {
      fileDiffs: this.calculateFileDiffs(projectRoot, preGit.commit, postGit.commit),
      commits: noCommit ? [] : this.getCommitsSince(projectRoot, preGit.commit),
    };
  }

  /**
   * Scans the tree and stores its inventory. `beforeStore` runs between the two: the scan keeps
   * both cores busy (its stat check runs on two threads), storing keeps one, so work started
   * then (the git status) finds a free core.
   */
  private takeInventory(projectRoot: string, stateDir: string, iterationDir: string, beforeStore?: () => void): CapturedInventory | null {
    if (this.options.inventory === false) return null;
    const cairnDir = this.cairnDir(projectRoot);
    ensureSelfIgnored(cairnDir, projectRoot);
    const root = path.resolve(projectRoot);
    // The state dir is reported through the aiwg fields, and the iteration's own files are not work.
    // stateDir is relative to the project root; iterationDir, like any fs path, to the process cwd.
    const stableDirs = relativesInside(root, [path.resolve(root, stateDir), cairnDir]);
    const excludedDirs = [...stableDirs, ...relativesInside(root, [path.resolve(iterationDir)])];
    // The engine is told about the stable directories it does not skip anyway, when `<dir>/x` is
    // a valid RelPath (the check its glob validation makes): the glob language has no escapes, but
    // its only wildcards (`*`, `?`) cannot occur in one, so `<dir>/**` then matches exactly that
    // directory's tree (`st[1]` included). Only stable directories: the exclude list is part of the
    // stat cache's key, so a per-iteration exclude would throw the cache away on every snapshot.
    const engineDirs = stableDirs.filter((rel) => isValidRelPath(`${rel}/x`) && !alwaysSkipped(rel));
    // Every other excluded directory (the iteration dir, a state dir named `st*`…) is filtered
    // afterwards; one the engine already leaves out needs no filter (usually nothing is left).
    const leftToFilter = excludedDirs.filter((dir) => !alwaysSkipped(dir) && !under(dir, engineDirs));
    const scanOptions: ScanOptions = {
      respectGitignore: this.options.respectGitignore ?? true,
      withContentDigest: true,
      cache: true,
      exclude: [...engineDirs.map((rel) => `${rel}/**`), ...(this.options.exclude ?? [])],
    };
    // The engine keeps its stat cache outside the snapshotted tree (its default, under
    // $XDG_CACHE_HOME/cairn) and refuses one inside it; a caller may still choose the place.
    if (this.options.cacheDir !== undefined) scanOptions.cacheDir = path.resolve(projectRoot, this.options.cacheDir);
    if (this.options.onProgress !== undefined) scanOptions.onProgress = this.options.onProgress;
    const result = scanTreeSync(root, this.inventoryScanOptions(scanOptions));
    const isExcluded = (rel: string): boolean => under(rel, excludedDirs);
    const recovered = recoverInvalidNames(root, result.skipped, isExcluded);
    let files = recovered.entries.length > 0 ? [...result.files, ...recovered.entries] : result.files;
    if (leftToFilter.length > 0) files = files.filter((f) => !under(f.path, leftToFilter));
    beforeStore?.();
    const store = this.inventoryStore(projectRoot);
    const stored = store.put(files);
    const ref: InventoryRef = {
      digest: stored.digest,
      files: files.length,
      bytes: files.reduce((sum, f) => sum + f.bytes, 0),
      skipped: recovered.stillSkipped.length,
    };
    if (recovered.stillSkipped.length > 0) {
      ref.skippedPaths = recovered.stillSkipped.slice(0, SKIPPED_PATHS_LISTED).map((s) => ({ path: s.path, reason: s.reason }));
    }
    return { ref, store, files };
  }
}

/** A capture's inventory: its ref in the record, the store it was put in, its entries. */
interface CapturedInventory {
  ref: InventoryRef;
  store: InventoryStore;
  files: readonly InventoryEntry[];
}

/** The method as this class defines it: anything else there is the caller's and is called in line. */
const OWN_CAPTURE_GIT_STATUS: unknown = Object.getOwnPropertyDescriptor(SnapshotManager.prototype, 'captureGitStatus')?.value;
const OWN_GET_COMMITS_SINCE: unknown = Object.getOwnPropertyDescriptor(SnapshotManager.prototype, 'getCommitsSince')?.value;

/**
 * The capture methods take two paths. Upstream's README also shows an object-style call
 * (`capturePreSnapshot({sessionId, iteration, …})`) that its implementation never supported;
 * say so clearly instead of failing deep inside `path.join`.
 */
function requirePaths(method: string, projectRoot: unknown, iterationDir: unknown): void {
  if (typeof projectRoot !== 'string' || projectRoot === '' || typeof iterationDir !== 'string' || iterationDir === '') {
    throw new CairnError('ERR_INVALID_OPTION', `${method}(projectRoot, iterationDir) takes two non-empty paths (strings); the object-style call shown in upstream's README is not part of the API`);
  }
}

/** `dir` as a POSIX path relative to root, or null when it is outside root or is root itself. */
function relativeInside(root: string, dir: string): string | null {
  const abs = path.resolve(root, dir);
  return isStrictlyInside(abs, root) ? toPosixRelative(root, abs) : null;
}

/** The distinct `dirs` that lie inside root, as POSIX paths relative to it. */
function relativesInside(root: string, dirs: readonly string[]): string[] {
  return [...new Set(dirs.map((dir) => relativeInside(root, dir)).filter((rel): rel is string => rel !== null))];
}

/** Whether `rel` is one of `dirs` or lies below one. */
function under(rel: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => rel === dir || rel.startsWith(`${dir}/`));
}

/** Whether the engine never enters `rel` (a `.git` or `.cairn` segment, at any depth). */
function alwaysSkipped(rel: string): boolean {
  return rel.split('/').some((segment) => ALWAYS_SKIP.includes(segment));
}

/**
 * cairn's data directory carries a `.gitignore` of `*`, so an agent's `git add -A` never commits
 * inventories, caches or the store into the user's repository.
 */
function ensureSelfIgnored(cairnDir: string, projectRoot: string): void {
  const { root, parts } = rootedAt(cairnDir, path.resolve(projectRoot));
  const dir = ContainedDir.open(root, parts, { create: true })!;
  try {
    if (dir.lstat('.gitignore') !== null) return;
    dir.writeFile('.gitignore', '# cairn data: never commit\n*\n', { exclusive: true });
  } catch (e) {
    if (errnoCode(e) !== 'EEXIST') throw e;
  } finally {
    dir.close();
  }
}

function workingTreeChanges(store: InventoryStore, pre: InventoryRef | undefined, post: InventoryRef): WorkingTreeChanges | null {
  if (pre === undefined) return null;
  try {
    return store.diff(pre.digest, post.digest);
  } catch {
    // The pre inventory was pruned or damaged: fall back to the commit range, as upstream does.
    return null;
  }
}

/** An iteration directory inside the project is reached without following a link below the root. */
function writeSnapshotFile(file: string, snapshot: PreSnapshot | PostSnapshot, projectRoot: string): void {
  writeFileWithin(file, path.resolve(projectRoot), `${JSON.stringify(snapshot, null, 2)}\n`);
}

/** The largest pre/post-snapshot file read (cairn's own are far smaller). */
const MAX_SNAPSHOT_FILE_BYTES = 256 * 1024 * 1024;

/** Text of a pre/post-snapshot file: no link at its name (nor below `within`), non-blocking, bounded, strict UTF-8. */
function readSnapshotFile(file: string, within: string | undefined, kind: 'pre' | 'post', missing: string): string {
  let bytes: Buffer | null;
  try {
    bytes = readFileWithin(file, within === undefined ? undefined : path.resolve(within), { maxBytes: MAX_SNAPSHOT_FILE_BYTES });
  } catch (e) {
    if (e instanceof CairnError) throw e;
    if (errnoCode(e) === 'ENOENT') bytes = null;
    else throw new CairnError('ERR_IO', `cannot read ${kind}-snapshot ${file}: ${(e as Error).message}`, { path: file, cause: e });
  }
  if (bytes === null) throw new CairnError('ERR_NOT_FOUND', missing, { path: file });
  return decodeUtf8Strict(bytes, file);
}

/** Reads `pre-snapshot.json`: absent → the seed's error; unreadable or corrupt → a clear error naming the file. */
export function readPreSnapshot(file: string, within?: string): PreSnapshot {
  return parseSnapshotText(readSnapshotFile(file, within, 'pre', PRE_SNAPSHOT_NOT_FOUND), file, 'pre') as PreSnapshot;
}

/** Reads `post-snapshot.json` (for reports); errors name the file. */
export function readPostSnapshot(file: string, within?: string): PostSnapshot {
  const missing = `post-snapshot not found: ${file}; run \`cairn session post\` for this iteration first`;
  return parseSnapshotText(readSnapshotFile(file, within, 'post', missing), file, 'post') as PostSnapshot;
}

function parseSnapshotText(text: string, file: string, kind: 'pre' | 'post'): unknown {
  const parsed = parseJsonBounded(text, { file, what: `${kind}-snapshot file`, hint: `capture a new ${kind}-snapshot` });
  const record = parsed as { timestamp?: unknown; git?: unknown } | null;
  if (typeof record !== 'object' || record === null || Array.isArray(record) || typeof record.timestamp !== 'string' || typeof record.git !== 'object' || record.git === null) {
    throw new CairnError('ERR_CORRUPT', `${kind}-snapshot file ${file} is not a ${kind}-snapshot (needs "timestamp" and "git"); capture a new ${kind}-snapshot`, { path: file });
  }
  return parsed;
}
