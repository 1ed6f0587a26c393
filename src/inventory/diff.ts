import { compareUtf8 } from '../core/utf8.js';
import type { RepoSnapshot, RepoSnapshotEntry, RepoSnapshotChange, RepoSnapshotDiff } from './types.js';

/** What content comparison looks at in an entry (a RepoSnapshot entry or an inventory-store file node). */
export interface ContentRecord {
  mode: string;
  kind: string;
  bytes: number;
  sha256?: string | undefined;
}

/**
 * Whether two records of one path describe the same content. Shared with the session's
 * inventory store, so a snapshot diff and an iteration's working-tree changes agree.
 */
export function sameContent(a: ContentRecord, b: ContentRecord): boolean {
  if (a.mode !== b.mode || a.kind !== b.kind) return false;
  // The seed's rule: digests when BOTH sides have one, else size (+ kind, checked above).
  // Upstream compared a digest with "bytes:<n>" when only one side had one, reporting every
  // file as changed between a digest and a --no-digest snapshot; that is the defect we avoid.
  if (a.sha256 !== undefined && b.sha256 !== undefined) return a.sha256 === b.sha256;
  return a.bytes === b.bytes;
}

/** Entries sorted by path with later duplicates winning (as upstream's Map did). */
function sortedUnique(files: readonly RepoSnapshotEntry[]): RepoSnapshotEntry[] {
  let sorted = true;
  for (let i = 1; i < files.length; i++) {
    if (compareUtf8(files[i - 1]!.path, files[i]!.path) >= 0) {
      sorted = false;
      break;
    }
  }
  if (sorted) return files as RepoSnapshotEntry[];
  const byPath = new Map<string, RepoSnapshotEntry>();
  for (const f of files) byPath.set(f.path, f);
  return [...byPath.values()].sort((x, y) => compareUtf8(x.path, y.path));
}

/**
 * What changed from `a` to `b`, by path: pure, all lists sorted by compareUtf8. A merge-join
 * over the (already sorted) file lists. `truncated` and `snapshotDigest` are not consulted:
 * paths beyond a truncation show up as added/removed, as in the seed (`diffWithinCut` stops at the cut).
 */
export function diffSnapshots(a: Pick<RepoSnapshot, 'body'>, b: Pick<RepoSnapshot, 'body'>): RepoSnapshotDiff {
  const left = sortedUnique(a.body.files);
  const right = sortedUnique(b.body.files);
  const added: string[] = [];
  const removed: string[] = [];
  const changed: RepoSnapshotChange[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const x = left[i];
    const y = right[j];
    const c = x === undefined ? 1 : y === undefined ? -1 : compareUtf8(x.path, y.path);
    if (c < 0) {
      removed.push(x!.path);
      i++;
    } else if (c > 0) {
      added.push(y!.path);
      j++;
    } else {
      if (!sameContent(x!, y!)) changed.push({ path: x!.path, from: x!.sha256 ?? null, to: y!.sha256 ?? null });
      i++;
      j++;
    }
  }
  return { added, removed, changed };
}

export function isEmptySnapshotDiff(d: RepoSnapshotDiff): boolean {
  return d.added.length === 0 && d.removed.length === 0 && d.changed.length === 0;
}
