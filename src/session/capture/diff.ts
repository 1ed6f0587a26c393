/** `calculateDiff`: pure, no I/O; works on snapshots read from disk, from the store, or built by hand. */
import { compareUtf8 } from '../../core/utf8.js';
import { durationBetween, formatDuration } from '../duration.js';
import { POST_SNAPSHOT_FILE, PRE_SNAPSHOT_FILE } from '../files.js';
import type { FileSnapshot, KeyFileChange, PostSnapshot, PreSnapshot, SnapshotDiff } from '../types.js';

function isOwnSnapshotFile(filePath: string): boolean {
  const base = filePath.slice(filePath.lastIndexOf('/') + 1);
  return base === PRE_SNAPSHOT_FILE || base === POST_SNAPSHOT_FILE;
}

function byPath(files: readonly FileSnapshot[] | undefined): Map<string, FileSnapshot> {
  const map = new Map<string, FileSnapshot>();
  for (const file of files ?? []) if (!isOwnSnapshotFile(file.path)) map.set(file.path, file);
  return map;
}

function sorted(paths: Iterable<string>): string[] {
  return [...paths].sort(compareUtf8);
}

/** Added, modified and deleted files between two lists of file snapshots (compared by hash). */
function compareFileSets(before: readonly FileSnapshot[] | undefined, after: readonly FileSnapshot[] | undefined): { created: string[]; updated: string[]; deleted: string[] } {
  const pre = byPath(before);
  const post = byPath(after);
  const created: string[] = [];
  const updated: string[] = [];
  const deleted: string[] = [];
  for (const [p, file] of post) {
    const old = pre.get(p);
    if (old === undefined) created.push(p);
    else if (old.hash !== file.hash) updated.push(p);
  }
  for (const p of pre.keys()) if (!post.has(p)) deleted.push(p);
  return { created: sorted(created), updated: sorted(updated), deleted: sorted(deleted) };
}

export function calculateDiff(preSnapshot: PreSnapshot, postSnapshot: PostSnapshot): SnapshotDiff {
  const durationMs = durationBetween(preSnapshot.timestamp, postSnapshot.timestamp);

  let filesAdded: string[];
  let filesModified: string[];
  let filesDeleted: string[];
  let filesSource: SnapshotDiff['filesSource'];
  if (postSnapshot.workingTree) {
    // Working tree pre → post: commits, uncommitted edits and untracked files alike.
    filesAdded = [...postSnapshot.workingTree.added];
    filesModified = [...postSnapshot.workingTree.modified];
    filesDeleted = [...postSnapshot.workingTree.deleted];
    filesSource = 'working-tree';
  } else {
    // No inventories (hand-built objects, inventory off): the seed's rule, grouped commit diffs.
    const diffs = postSnapshot.fileDiffs ?? [];
    filesAdded = diffs.filter((d) => d.status === 'added').map((d) => d.path);
    filesModified = diffs.filter((d) => d.status === 'modified').map((d) => d.path);
    filesDeleted = diffs.filter((d) => d.status === 'deleted').map((d) => d.path);
    filesSource = 'commits';
  }

  const artifacts = compareFileSets(preSnapshot.aiwg?.files, postSnapshot.aiwg?.files);

  const keyFilesChanged: KeyFileChange[] = [];
  if (postSnapshot.keyFiles !== undefined) {
    const keys = compareFileSets(preSnapshot.keyFiles, postSnapshot.keyFiles);
    for (const p of keys.created) keyFilesChanged.push({ path: p, status: 'added' });
    for (const p of keys.updated) keyFilesChanged.push({ path: p, status: 'modified' });
    for (const p of keys.deleted) keyFilesChanged.push({ path: p, status: 'deleted' });
  }

  const commits = [...(postSnapshot.commits ?? [])];
  const tests = postSnapshot.tests;
  return {
    duration: formatDuration(durationMs),
    durationMs,
    filesAdded,
    filesModified,
    filesDeleted,
    aiwgArtifactsCreated: artifacts.created,
    aiwgArtifactsUpdated: artifacts.updated,
    commitCount: commits.length,
    commits,
    hasTests: Boolean(tests?.found),
    testSummary: tests?.summary ?? null,
    aiwgArtifactsDeleted: artifacts.deleted,
    keyFilesChanged,
    filesSource,
  };
}
