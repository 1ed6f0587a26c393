/**
 * Reading an iteration's content: the bytes of (iteration, side pre|post, path), for `session
 * diff`, the report and restore. `openIteration` reads the iteration's records once;
 * `readIterationContent` is the one-call form.
 */
import * as path from 'node:path';
import { CairnError } from '../core/errors.js';
import { InventoryStore, type InventoryEntry } from '../session/inventory-store/inventory-store.js';
import { iterationName, resolveIterationDir } from '../session/records/iterations.js';
import { POST_SNAPSHOT_FILE, PRE_SNAPSHOT_FILE } from '../session/files.js';
import { readPostSnapshot, readPreSnapshot } from '../session/capture/snapshot-manager.js';
import type { PostSnapshot, PreSnapshot } from '../session/types.js';
import { openContentStore } from './capture.js';
import type { ContentRecord, NotRestorable } from './record.js';
import { ContentResolver } from './resolve.js';
import type { ContentStore } from './store.js';

export type Side = 'pre' | 'post';

/** One path at one side: a file (bytes, exec bit) or a symlink (its target). */
export interface PathContent {
  path: string;
  kind: 'file' | 'symlink';
  /** `'0755'` when executable. */
  mode: string;
  sha256?: string;
  /** Files: the bytes. */
  bytes?: Buffer;
  /** Symlinks: the link's target. */
  target?: string;
}

export interface IterationContent {
  /** `003`, as the directory is named. */
  iteration: string;
  dir: string;
  pre: PreSnapshot;
  /** null while the iteration has no post-snapshot yet. */
  post: PostSnapshot | null;
  /** Every inventoried path of a side (null when that side has no inventory). */
  entries(side: Side): Map<string, InventoryEntry> | null;
  /** The paths that differ between pre and post, with both entries (O(changed)). */
  changes(): Array<{ path: string; before: InventoryEntry | null; after: InventoryEntry | null }>;
  /** A path's content at a side; null when the path did not exist there. Throws ERR_NOT_RESTORABLE when its bytes were not kept. */
  read(side: Side, relPath: string): PathContent | null;
  /** What a side's capture could not keep (over the cap, unreadable …). */
  notRestorable(side: Side): NotRestorable[];
}

export interface OpenIterationOptions {
  /** cairn's data directory (default `<projectRoot>/.cairn`). */
  cairnDir?: string;
  /** Resolve a relative iteration directory against this (default process.cwd()). */
  cwd?: string;
}

export function openIteration(projectRoot: string, iteration?: string | number, options: OpenIterationOptions = {}): IterationContent {
  const root = path.resolve(projectRoot);
  const cairnDir = path.resolve(root, options.cairnDir ?? '.cairn');
  const dir = resolveIterationDir(root, iteration === undefined ? undefined : String(iteration), options.cwd);
  const pre = readPreSnapshot(path.join(dir, PRE_SNAPSHOT_FILE));
  let post: PostSnapshot | null = null;
  try {
    post = readPostSnapshot(path.join(dir, POST_SNAPSHOT_FILE));
  } catch (e) {
    if (!(e instanceof CairnError && e.code === 'ERR_NOT_FOUND')) throw e;
  }
  const inventories = new InventoryStore(path.join(cairnDir, 'inventories'), { within: path.dirname(path.resolve(cairnDir)) });
  const store = openContentStore(cairnDir);
  return new IterationContentImpl(root, iterationName(dir), dir, pre, post, inventories, store);
}

/** The content of `relPath` (POSIX, relative to the root) at the iteration's pre or post. */
export function readIterationContent(projectRoot: string, iteration: string | number | undefined, side: Side, relPath: string, options: OpenIterationOptions = {}): PathContent | null {
  return openIteration(projectRoot, iteration, options).read(side, relPath);
}

/** Commits that hold the files a capture left to git: the side's own first. */
export function commitsOf(pre: PreSnapshot, post: PostSnapshot | null, side: Side): string[] {
  const preCommits = [pre.content?.gitCommit].filter((c): c is string => c !== undefined);
  const postCommits = [post?.content?.gitCommit].filter((c): c is string => c !== undefined);
  return side === 'pre' ? [...preCommits, ...postCommits] : [...postCommits, ...preCommits];
}

/**
 * One ContentResolver per side, made on first use, looking in `store`, then in the commits
 * `commits(side)` names, then on disk: how `openIteration` and the review read a side's bytes.
 */
export function resolversBySide(root: string, store: ContentStore, commits: (side: Side) => string[]): (side: Side) => ContentResolver {
  const made = new Map<Side, ContentResolver>();
  return (side) => {
    let resolver = made.get(side);
    if (resolver === undefined) {
      resolver = new ContentResolver(root, store, commits(side));
      made.set(side, resolver);
    }
    return resolver;
  };
}

class IterationContentImpl implements IterationContent {
  private readonly cachedEntries = new Map<Side, Map<string, InventoryEntry> | null>();
  private readonly resolver: (side: Side) => ContentResolver;

  constructor(
    private readonly root: string,
    readonly iteration: string,
    readonly dir: string,
    readonly pre: PreSnapshot,
    readonly post: PostSnapshot | null,
    private readonly inventories: InventoryStore,
    store: ContentStore,
  ) {
    this.resolver = resolversBySide(root, store, (side) => commitsOf(pre, post, side));
  }

  private digest(side: Side): string | null {
    return (side === 'pre' ? this.pre.inventory?.digest : this.post?.inventory?.digest) ?? null;
  }

  private record(side: Side): ContentRecord | undefined {
    return side === 'pre' ? this.pre.content : (this.post?.content ?? undefined);
  }

  entries(side: Side): Map<string, InventoryEntry> | null {
    if (!this.cachedEntries.has(side)) {
      const digest = this.digest(side);
      this.cachedEntries.set(side, digest === null ? null : new Map(this.inventories.get(digest).map((e) => [e.path, e])));
    }
    return this.cachedEntries.get(side) ?? null;
  }

  changes(): Array<{ path: string; before: InventoryEntry | null; after: InventoryEntry | null }> {
    const from = this.digest('pre');
    const to = this.digest('post');
    if (from === null || to === null) throw new CairnError('ERR_NOT_FOUND', `iteration ${this.iteration} has no ${from === null ? 'pre' : 'post'} inventory to compare`, { path: this.dir });
    return this.inventories.changedEntries(from, to);
  }

  notRestorable(side: Side): NotRestorable[] {
    const own = this.record(side)?.notRestorable ?? [];
    return side === 'pre' ? [...own, ...(this.post?.content?.preNotRestorable ?? [])] : own;
  }

  read(side: Side, relPath: string): PathContent | null {
    const digest = this.digest(side);
    if (digest === null) throw new CairnError('ERR_NOT_FOUND', `iteration ${this.iteration} has no ${side} inventory`, { path: this.dir });
    const entry = this.inventories.lookup(digest, [relPath]).get(relPath);
    if (entry === undefined) return null;
    const out: PathContent = { path: relPath, kind: entry.kind === 'symlink' ? 'symlink' : 'file', mode: entry.mode };
    if (entry.sha256 !== undefined) out.sha256 = entry.sha256;
    if (out.kind === 'symlink') {
      const target = this.record(side)?.symlinks?.[relPath];
      if (target === undefined) throw notRestorable(this.iteration, side, relPath);
      out.target = target;
      return out;
    }
    const bytes = entry.bytes === 0 && entry.sha256 === EMPTY_SHA256 ? Buffer.alloc(0) : this.resolver(side).bytes(entry);
    if (bytes === null) throw notRestorable(this.iteration, side, relPath);
    out.bytes = bytes;
    return out;
  }
}

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

function notRestorable(iteration: string, side: Side, relPath: string): CairnError {
  return new CairnError('ERR_NOT_RESTORABLE', `the ${side} content of ${JSON.stringify(relPath)} in iteration ${iteration} was not kept (over the size cap, unreadable, or lost from git before cairn copied it)`, { details: { iteration, side, path: relPath } });
}
