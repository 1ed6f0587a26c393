/** One inventoried path. Keys are in the seed's order (the digest re-orders them, see digest.ts). */
export interface RepoSnapshotEntry {
  path: string;
  bytes: number;
  sha256?: string;
  mode: '0644' | '0755';
  kind: 'file' | 'symlink';
}

export interface RepoSnapshotCounts {
  files: number;
  bytes: number;
}

export interface RepoSnapshotBody {
  files: RepoSnapshotEntry[];
  truncated: boolean;
  counts: RepoSnapshotCounts;
}

/** The seed's document (axiom `RepoSnapshot`), key for key. */
export interface RepoSnapshot {
  apiVersion: 'axiom.dev/v2';
  kind: 'RepoSnapshot';
  root: { kind: 'relative' };
  snapshotDigest: string;
  body: RepoSnapshotBody;
}

/**
 * Why a path found on disk is not in the inventory although no ignore rule or glob dropped it.
 * Stable strings: callers may switch on them.
 */
export type SkipReason =
  | 'invalid-name' // fails the RelPath rules (NFD, trailing dot/space, reserved name, too long, …)
  | 'invalid-utf8' // the on-disk name is not valid UTF-8, so no exact path string exists
  | 'not-regular-file' // FIFO, socket, device
  | 'vanished' // listed, then gone before it could be read
  | 'unreadable' // open/read failed (permissions, I/O error)
  | 'unstable' // kept changing while it was read; no trustworthy hash
  | 'unreadable-dir'; // a directory that could not be listed: its subtree is missing

export interface SkippedEntry {
  /** Relative POSIX path as decoded (may contain U+FFFD for `invalid-utf8`). */
  path: string;
  reason: SkipReason;
  /** Human-readable detail (the rule that failed, the errno code, …). */
  detail?: string;
}

export interface ScanProgress {
  /** 'scan' while walking and hashing, 'done' once, last, with the totals. */
  phase: 'scan' | 'done';
  /** Candidate files and symlinks found so far. */
  filesSeen: number;
  /** Files whose content was read and hashed (cache misses). */
  filesHashed: number;
  /** Bytes read and hashed. */
  bytesHashed: number;
  /** Files whose digest came from the stat cache. */
  filesCached: number;
  /** Candidates whose result is known (hashed, cached, or skipped). */
  filesDone: number;
}

export interface ScanWarning {
  code: 'CACHE_DISCARDED' | 'CACHE_UNWRITABLE' | 'CACHE_DISABLED';
  message: string;
  path?: string;
}

/** What the engine and the seed's surface share: ignore rules, digests, cache, threads, callbacks. */
export interface ScanCommonOptions {
  /** Honour `.gitignore` files at every level (default true). */
  respectGitignore?: boolean;
  /** Hash contents (default true); false records sizes only. */
  withContentDigest?: boolean;
  /** Use the persistent stat cache (default true). */
  cache?: boolean;
  /** Where cache files live (default `$XDG_CACHE_HOME/cairn/snapshots` or `~/.cache/cairn/snapshots`). */
  cacheDir?: string;
  /** Hash worker threads for `scanTree` (default 2; 0 hashes on the main thread). */
  jobs?: number;
  signal?: AbortSignal;
  onProgress?: (p: ScanProgress) => void;
  /** Called for every skipped path, in walk order, as it is found. */
  onSkip?: (s: SkippedEntry) => void;
  /** Notices about the cache (discarded, not writable); never thrown, never printed by the library. */
  onWarning?: (w: ScanWarning) => void;
  /**
   * Racy-timestamp margin in ms: entries changed less than this before the scan looked at them
   * are not trusted from the cache next time. Default: 100 on the root's own ext2/3/4, XFS,
   * Btrfs, tmpfs or F2FS file system, 2000 elsewhere (other file systems, mounts inside the
   * tree). Given, it applies everywhere; lower it only in tests.
   */
  racyMarginMs?: number;
}

/** What a scan left the stat cache holding, as one value a caller compares by identity (KnownUnchanged). */
export type CacheState = Readonly<Record<string, never>>;

/**
 * What a long-running caller that watches the tree knows (src/daemon/), for `scanTreeSync` and
 * `scanForSnapshot`:
 * `dir(rel)` is true when nothing in directory `rel` ('' the root) changed since the scan that
 * left the stat cache in `cacheState`, `everyDir()` when that holds for every directory. Only
 * when the cache's rows are that very state (this process's rows, kept with the file they were
 * saved as or loaded from, still in place: see cache/resident.ts) are the rows of such
 * directories taken without an lstat (never a symlink; a racy row only when it holds a digest: the
 * read that made it came after the caller's mark, so a write since is an event). At the end of the scan `onCacheState` is told the state the stat cache is
 * now in (the rows saved, or loaded and left as they were), or null when that is not known.
 */
export interface KnownUnchanged {
  dir: (rel: string) => boolean;
  /**
   * Asked only of a file row whose directory `dir` is false for: true when no event named that
   * entry, or any directory above it, since that scan (every event in its directory named the
   * entry it was about), so its row is taken without an lstat too. Absent: every row of such a
   * directory is looked at.
   */
  entry?: (rel: string) => boolean;
  /** True when `dir` is true for every directory (no event anywhere): the scan then asks `dir` nothing. */
  everyDir: () => boolean;
  cacheState: CacheState | null;
  onCacheState: (state: CacheState | null) => void;
  /**
   * When given, a scan that must save the stat cache hands the save to it instead of making it
   * (a daemon runs it once it has answered): the file written is the same, and onCacheState is
   * told by the save, not at the end of the scan. Until it runs, the cache on disk is the older one
   * (a valid cache: any process checks its rows as ever).
   */
  deferSave?: (save: () => void) => void;
}

/** Options of the uncapped scanning engine (`scanTree` / `scanTreeSync`). */
export interface ScanOptions extends ScanCommonOptions {
  include?: readonly string[];
  exclude?: readonly string[];
  /** Directory names skipped at any depth in addition to `.git` and `.cairn`. */
  alwaysSkip?: readonly string[];
  /** A watching caller's knowledge (see KnownUnchanged); honoured by `scanTreeSync` and `scanForSnapshot`. */
  knownUnchanged?: KnownUnchanged;
  /** Stop after this many files (default: no limit). `truncated` tells whether more existed. */
  maxFiles?: number;
  /** Stop before the sum of `bytes` would exceed this (default: no limit). */
  maxBytes?: number;
  /** Where the engine changes strategy (see ScanTuning); the defaults suit every tree measured. */
  tuning?: ScanTuning;
}

/**
 * The sizes at which the engine changes strategy: tuning knobs for unusual machines, and what lets
 * a test prove a strategy on a small tree. None changes a scan's result, only how it is reached.
 * Each must be a safe integer within its range (ERR_INVALID_OPTION); defaults in walk/tuning.ts.
 */
export interface ScanTuning {
  /** Cached rows (files + directories) from which a verifying worker shares the unchanged-tree lstat pass (default 20 000; >= 1). */
  parallelVerifyMin?: number;
  /** Stat cache file bytes from which that worker is booted while the cache loads, before the pass needs it (default 2 MiB; >= 0). */
  earlyVerifierCacheBytes?: number;
  /** Rows each thread of the pass claims at a time (default 1024; >= 1). */
  verifyChunkRows?: number;
  /** Changed rows the fast path updates without a walk, at the least: its limit is the larger of this and a quarter of the rows (default 2000; >= 0). */
  fastPathChangeMin?: number;
  /** New files the fast path's incremental update adds without a walk; one more leaves them to the walk (default 2000; >= 0). */
  fastPathNewFilesMax?: number;
  /** Bytes of changed files the verifying worker reads again during its pass; what is past them is read on the scan's thread after it (default 64 MiB; >= 0). */
  prereadWorkerBytes?: number;
  /** Entries the digest, its memo and the rendered text (writeRepoSnapshot, given the scan's handle) are made of at a time (default 4096; >= 1). */
  pieceEntries?: number;
}

export interface ScanResult {
  /** Sorted by compareUtf8(path). */
  files: RepoSnapshotEntry[];
  truncated: boolean;
  counts: RepoSnapshotCounts;
  skipped: SkippedEntry[];
  warnings: ScanWarning[];
}

/** The seed's options plus cairn's speed options. */
export interface RepoSnapshotOptions extends ScanCommonOptions {
  include?: string[];
  exclude?: string[];
  /** Default 20 000, silently clamped to 50 000; must be an integer >= 1. */
  maxFiles?: number;
  /** Default 64 MiB; must be an integer >= 0. */
  maxBytes?: number;
  /** Only `false` is supported (the seed's rule: links are never followed into directories). */
  followSymlinks?: boolean;
}

/** `snapshotRootDetailed` result: the document plus what was left out of it and why. */
export interface RepoSnapshotDetailed {
  snapshot: RepoSnapshot;
  skipped: SkippedEntry[];
  warnings: ScanWarning[];
}

export interface RepoSnapshotChange {
  path: string;
  from: string | null;
  to: string | null;
}

export interface RepoSnapshotDiff {
  added: string[];
  removed: string[];
  changed: RepoSnapshotChange[];
}
