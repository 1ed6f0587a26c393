/**
 * The seed's types (AIWG `SnapshotManager` API reference), kept field for field, plus cairn's
 * additive fields. Every addition is optional on input, so objects built by hand against the
 * seed's shapes (as upstream's own tests do) are still accepted.
 */
import type { ContentRecord } from '../content/record.js';
import type { ScanProgress } from '../inventory/index.js';
import type { TestResults, TestSummary } from './test-results/test-results.js';

export type { TestResults, TestSummary };

export interface GitStatus {
  /** Current branch name; `'HEAD'` when detached; `'unknown'` outside a git repository. */
  branch: string;
  /** Current HEAD commit hash; `'unknown'` outside a repository or before the first commit. */
  commit: string;
  /** Staged file paths (POSIX, relative to projectRoot). */
  staged: string[];
  /** Modified but unstaged file paths. */
  unstaged: string[];
  /** Untracked file paths (ignored files excluded). */
  untracked: string[];
}

export interface FileSnapshot {
  /** Relative POSIX path from the project root. */
  path: string;
  /** SHA-256 hex of the file content. */
  hash: string;
  size: number;
  /** Last modification time, ISO 8601. */
  mtime: string;
}

export interface AiwgState {
  /** Every regular file under the state directory (`.aiwg/` by default); symlinks are not followed. */
  files: FileSnapshot[];
  /** Parsed `<stateDir>/ralph/current-loop.json`, or null when absent or not a JSON object. */
  ralphState: Record<string, unknown> | null;
}

/**
 * cairn addition: a whole-tree inventory of the working tree, stored content-addressed under
 * `.cairn/inventories/` and referenced here by its digest, so snapshot files stay small.
 */
export interface InventoryRef {
  /** `sha256:<hex>` of the root directory object (a Merkle tree of directory listings). */
  digest: string;
  files: number;
  bytes: number;
  /** Paths the scanner could not inventory (unreadable, invalid names), with reasons. */
  skipped: number;
  /** The first skipped paths (at most 100) with the scanner's reason. */
  skippedPaths?: Array<{ path: string; reason: string }>;
}

export interface PreSnapshot {
  /** ISO 8601 */
  timestamp: string;
  git: GitStatus;
  keyFiles: FileSnapshot[];
  aiwg: AiwgState;
  /** cairn: the working-tree inventory taken with this snapshot. */
  inventory?: InventoryRef;
  /** cairn: the state directory used (relative to projectRoot), so post uses the same one. */
  stateDir?: string;
  /** cairn: what was kept to put the tree back as it was at pre (src/content/). */
  content?: ContentRecord;
}

export type FileDiffStatus = 'added' | 'modified' | 'deleted';

export interface FileDiff {
  path: string;
  status: FileDiffStatus;
  /** `git diff` output, for modified files. */
  diff?: string;
}

/** cairn: the working-tree changes between the pre and post inventories, committed or not. */
export interface WorkingTreeChanges {
  added: string[];
  modified: string[];
  deleted: string[];
}

export interface PostSnapshot {
  timestamp: string;
  git: GitStatus;
  /** Files changed by the commits made during the session (pre HEAD → post HEAD). */
  fileDiffs: FileDiff[];
  /** `"<sha> <subject>"`, newest first. */
  commits: string[];
  aiwg: AiwgState;
  tests: TestResults;
  /** cairn: key files at the end of the session (upstream did not capture them). */
  keyFiles?: FileSnapshot[];
  /** cairn: the working-tree inventory at the end of the session. */
  inventory?: InventoryRef;
  /** cairn: pre → post working-tree changes, computed from the two inventories at capture time. */
  workingTree?: WorkingTreeChanges;
  stateDir?: string;
  /** cairn: what was kept to put the tree back as it was at post (and the pre side of changed paths). */
  content?: ContentRecord;
}

export interface KeyFileChange {
  path: string;
  status: FileDiffStatus;
}

export interface SnapshotDiff {
  duration: string;
  durationMs: number;
  /** New files (working tree, committed or not, when inventories are available). */
  filesAdded: string[];
  filesModified: string[];
  filesDeleted: string[];
  aiwgArtifactsCreated: string[];
  aiwgArtifactsUpdated: string[];
  commitCount: number;
  commits: string[];
  hasTests: boolean;
  /** The parsed test summary, or null when none was found (upstream's behaviour). */
  testSummary?: TestSummary | null;
  /** cairn: state-dir files present before and gone after. */
  aiwgArtifactsDeleted: string[];
  /** cairn: key files added, modified or deleted between pre and post (empty if post has no keyFiles). */
  keyFilesChanged: KeyFileChange[];
  /**
   * cairn: where `filesAdded/Modified/Deleted` come from: `'working-tree'` (pre → post inventories,
   * uncommitted work included) or `'commits'` (post.fileDiffs, when no inventory is available).
   */
  filesSource: 'working-tree' | 'commits';
}

export interface SnapshotManagerOptions {
  /** State directory, relative to projectRoot (default `.aiwg`, the seed's). */
  stateDir?: string;
  /** Directory of cairn's own data (default `<projectRoot>/.cairn`). Inventories and the stat cache live under it. */
  cairnDir?: string;
  /**
   * Stat-cache directory for the working-tree scan (default: the repo-snapshot engine's own,
   * `$XDG_CACHE_HOME/cairn/snapshots`, outside the tree; the engine refuses one inside the tree).
   */
  cacheDir?: string;
  /** Take whole-tree inventories in pre and post (default true). */
  inventory?: boolean;
  /** Keep file content at pre and post so the iteration can be restored (default true; needs the inventory). */
  content?: boolean;
  /** Files larger than this are recorded as not restorable instead of copied (default 50 MiB). */
  contentCapBytes?: number;
  /** Honour `.gitignore` files in the working-tree inventory (default true). */
  respectGitignore?: boolean;
  /** Globs left out of the working-tree inventory (the repo-snapshot engine's `exclude`); pre and post must agree. */
  exclude?: string[];
  /** Progress of the working-tree scan (files seen, hashed, cached); the library never prints. */
  onProgress?: (progress: ScanProgress) => void;
}
