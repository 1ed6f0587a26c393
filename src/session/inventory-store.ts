/**
 * Content-addressed storage of working-tree inventories, shaped like git trees: one object per
 * directory listing, named by the SHA-256 of its canonical (RFC 8785) form, whose entries are
 * files (size, digest, mode, kind) or subdirectories (the digest of their own object). Two
 * inventories of a mostly unchanged tree share every unchanged directory, so each new inventory
 * costs storage in proportion to the directories on the paths that changed, and comparing two
 * inventories skips every subtree whose digest is equal.
 *
 * Layout under the inventory directory (default `<projectRoot>/.cairn/inventories/`):
 *   objects/<2 hex>/<62 hex>   directory objects (JSON, canonical)
 *   refs/<hex>.json            which snapshot file references which root (GC roots)
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomicSync } from '../core/atomic-write.js';
import { CairnError, errnoCode } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import { compareUtf8 } from '../core/utf8.js';
import { sameContent } from '../inventory/diff.js';
import type { WorkingTreeChanges } from './types.js';

/** One inventoried path, as the repo-snapshot engine reports it. */
export interface InventoryEntry {
  path: string;
  bytes: number;
  sha256?: string;
  mode: string;
  kind: string;
}

export interface FileNode {
  name: string;
  bytes: number;
  sha256?: string;
  mode: string;
  kind: string;
}
export interface DirRef {
  name: string;
  tree: string;
}
export type TreeEntry = FileNode | DirRef;
interface TreeObject {
  entries: TreeEntry[];
}

const DIGEST_PREFIX = 'sha256:';

function isDirRef(entry: TreeEntry): entry is DirRef {
  return 'tree' in entry;
}

function hexOf(digest: string): string {
  const hex = digest.startsWith(DIGEST_PREFIX) ? digest.slice(DIGEST_PREFIX.length) : digest;
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new CairnError('ERR_INVALID_SNAPSHOT', `"${digest}" is not an inventory digest (expected sha256:<64 hex>)`);
  }
  return hex;
}

interface BuildNode {
  files: FileNode[];
  dirs: Map<string, BuildNode>;
}

export interface StoreInventoryResult {
  digest: string;
  /** Directory objects written by this call (the rest already existed and are shared). */
  objectsWritten: number;
  bytesWritten: number;
}

export interface InventoryPruneResult {
  /** Objects still referenced by a snapshot file. */
  kept: number;
  deleted: number;
  bytesFreed: number;
  /** Refs whose snapshot file is gone or now references another inventory. */
  refsRemoved: number;
  dryRun: boolean;
}

export interface InventoryUsage {
  objects: number;
  bytes: number;
  refs: number;
}

export class InventoryStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  private objectPath(hex: string): string {
    return path.join(this.dir, 'objects', hex.slice(0, 2), hex.slice(2));
  }

  /** Stores an inventory (entries with POSIX paths) and returns the digest of its root directory object. */
  put(entries: readonly InventoryEntry[]): StoreInventoryResult {
    const root: BuildNode = { files: [], dirs: new Map() };
    for (const entry of entries) {
      const segments = entry.path.split('/');
      const name = segments.pop() as string;
      let node = root;
      for (const segment of segments) {
        let child = node.dirs.get(segment);
        if (child === undefined) {
          child = { files: [], dirs: new Map() };
          node.dirs.set(segment, child);
        }
        node = child;
      }
      const file: FileNode = { name, bytes: entry.bytes, mode: entry.mode, kind: entry.kind };
      if (entry.sha256 !== undefined) file.sha256 = entry.sha256;
      node.files.push(file);
    }
    const stats = { objectsWritten: 0, bytesWritten: 0 };
    const hex = this.writeNode(root, stats);
    return { digest: DIGEST_PREFIX + hex, ...stats };
  }

  private writeNode(node: BuildNode, stats: { objectsWritten: number; bytesWritten: number }): string {
    const entries: TreeEntry[] = [...node.files];
    for (const [name, child] of node.dirs) entries.push({ name, tree: this.writeNode(child, stats) });
    entries.sort((a, b) => compareUtf8(a.name, b.name));
    const text = canonicalTree(entries);
    const hex = createHash('sha256').update(text).digest('hex');
    const target = this.objectPath(hex);
    const now = new Date();
    try {
      // Already stored: refresh its mtime so a concurrent prune's grace period protects it.
      fs.utimesSync(target, now, now);
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT') throw e;
      // Objects are rename-atomic but not fsynced (a first inventory writes thousands); a torn
      // object after power loss is caught by the digest check on read.
      writeFileAtomicSync(target, text, { mkdir: true, fsync: false });
      stats.objectsWritten++;
      stats.bytesWritten += Buffer.byteLength(text);
    }
    return hex;
  }

  private readObject(hex: string): TreeObject {
    const file = this.objectPath(hex);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new CairnError('ERR_NOT_FOUND', `inventory object ${hex} is missing (${file}); it may have been pruned — take a new snapshot`, { path: file, cause: e });
    }
    if (createHash('sha256').update(text).digest('hex') !== hex) {
      throw new CairnError('ERR_CORRUPT', `inventory object ${file} does not match its digest; delete it and take a new snapshot`, { path: file });
    }
    return JSON.parse(text) as TreeObject;
  }

  /** True when the root object of `digest` is present. */
  has(digest: string): boolean {
    return fs.existsSync(this.objectPath(hexOf(digest)));
  }

  /** Every entry of a stored inventory, sorted by UTF-8 byte order of path. */
  get(digest: string): InventoryEntry[] {
    const out: InventoryEntry[] = [];
    this.collect(hexOf(digest), '', out);
    out.sort((a, b) => compareUtf8(a.path, b.path));
    return out;
  }

  private collect(hex: string, prefix: string, out: InventoryEntry[]): void {
    for (const entry of this.readObject(hex).entries) {
      const entryPath = prefix + entry.name;
      if (isDirRef(entry)) this.collect(entry.tree, `${entryPath}/`, out);
      else {
        const item: InventoryEntry = { path: entryPath, bytes: entry.bytes, mode: entry.mode, kind: entry.kind };
        if (entry.sha256 !== undefined) item.sha256 = entry.sha256;
        out.push(item);
      }
    }
  }

  /**
   * Files added, modified and deleted from inventory `from` to inventory `to`. Equal subtrees
   * (same digest) are skipped without being read. A file is modified when its digest differs
   * (when both sides have one; otherwise size or kind), or its mode or kind changed.
   */
  diff(from: string, to: string): WorkingTreeChanges {
    const changes: WorkingTreeChanges = { added: [], modified: [], deleted: [] };
    this.diffTrees(hexOf(from), hexOf(to), '', changes);
    changes.added.sort(compareUtf8);
    changes.modified.sort(compareUtf8);
    changes.deleted.sort(compareUtf8);
    return changes;
  }

  private diffTrees(fromHex: string | null, toHex: string | null, prefix: string, changes: WorkingTreeChanges): void {
    if (fromHex === toHex) return;
    const fromEntries = new Map((fromHex === null ? [] : this.readObject(fromHex).entries).map((e) => [e.name, e]));
    const toEntries = new Map((toHex === null ? [] : this.readObject(toHex).entries).map((e) => [e.name, e]));
    for (const [name, before] of fromEntries) {
      const after = toEntries.get(name);
      const entryPath = prefix + name;
      if (after === undefined) this.allFiles(before, entryPath, changes.deleted);
      else if (isDirRef(before) && isDirRef(after)) this.diffTrees(before.tree, after.tree, `${entryPath}/`, changes);
      else if (isDirRef(before) || isDirRef(after)) {
        // a directory became a file or the reverse
        this.allFiles(before, entryPath, changes.deleted);
        this.allFiles(after, entryPath, changes.added);
      } else if (!sameContent(before, after)) changes.modified.push(entryPath);
    }
    for (const [name, after] of toEntries) {
      if (!fromEntries.has(name)) this.allFiles(after, prefix + name, changes.added);
    }
  }

  private allFiles(entry: TreeEntry, entryPath: string, into: string[]): void {
    if (!isDirRef(entry)) {
      into.push(entryPath);
      return;
    }
    for (const child of this.readObject(entry.tree).entries) this.allFiles(child, `${entryPath}/${child.name}`, into);
  }

  /**
   * Like `diff`, with the entries: every path whose entry differs between `from` and `to`
   * (`before`/`after` null where the path is absent). Equal subtrees are skipped unread.
   */
  changedEntries(from: string, to: string): Array<{ path: string; before: InventoryEntry | null; after: InventoryEntry | null }> {
    const out: Array<{ path: string; before: InventoryEntry | null; after: InventoryEntry | null }> = [];
    const byPath = new Map<string, { before: InventoryEntry | null; after: InventoryEntry | null }>();
    const note = (entry: InventoryEntry, side: 'before' | 'after'): void => {
      const slot = byPath.get(entry.path) ?? { before: null, after: null };
      slot[side] = entry;
      byPath.set(entry.path, slot);
    };
    this.changedWalk(hexOf(from), hexOf(to), '', note);
    for (const [p, slot] of byPath) out.push({ path: p, ...slot });
    out.sort((a, b) => compareUtf8(a.path, b.path));
    return out;
  }

  private changedWalk(fromHex: string | null, toHex: string | null, prefix: string, note: (e: InventoryEntry, side: 'before' | 'after') => void): void {
    if (fromHex === toHex) return;
    const fromEntries = new Map((fromHex === null ? [] : this.readObject(fromHex).entries).map((e) => [e.name, e]));
    const toEntries = new Map((toHex === null ? [] : this.readObject(toHex).entries).map((e) => [e.name, e]));
    const all = (entry: TreeEntry, entryPath: string, side: 'before' | 'after'): void => {
      if (!isDirRef(entry)) note(asEntry(entry, entryPath), side);
      else this.forEachFile(entry.tree, `${entryPath}/`, (e) => note(e, side));
    };
    for (const [name, before] of fromEntries) {
      const after = toEntries.get(name);
      const entryPath = prefix + name;
      if (after === undefined) all(before, entryPath, 'before');
      else if (isDirRef(before) && isDirRef(after)) this.changedWalk(before.tree, after.tree, `${entryPath}/`, note);
      else if (isDirRef(before) || isDirRef(after) || !sameContent(before, after)) {
        all(before, entryPath, 'before');
        all(after, entryPath, 'after');
      }
    }
    for (const [name, after] of toEntries) if (!fromEntries.has(name)) all(after, prefix + name, 'after');
  }

  /** Calls `visit` for every file below tree `hex`; trees in `seen` are skipped (and added). */
  forEachFile(treeHexOrDigest: string, prefix: string, visit: (entry: InventoryEntry) => void, seen?: Set<string>): void {
    const hex = hexOf(treeHexOrDigest);
    if (seen !== undefined) {
      if (seen.has(hex)) return;
      seen.add(hex);
    }
    for (const entry of this.readObject(hex).entries) {
      if (isDirRef(entry)) this.forEachFile(entry.tree, `${prefix}${entry.name}/`, visit, seen);
      else visit(asEntry(entry, prefix + entry.name));
    }
  }

  /** The entry of each of `paths` in inventory `digest` (absent paths are left out), reading only the trees on their way. */
  lookup(digest: string, paths: Iterable<string>): Map<string, InventoryEntry> {
    const out = new Map<string, InventoryEntry>();
    const trees = new Map<string, Map<string, TreeEntry>>();
    const treeOf = (hex: string): Map<string, TreeEntry> => {
      let t = trees.get(hex);
      if (t === undefined) {
        t = new Map(this.readObject(hex).entries.map((e) => [e.name, e]));
        trees.set(hex, t);
      }
      return t;
    };
    const rootHex = hexOf(digest);
    for (const p of paths) {
      const segments = p.split('/');
      let hex = rootHex;
      for (let i = 0; i < segments.length; i++) {
        const entry = treeOf(hex).get(segments[i] as string);
        if (entry === undefined) break;
        if (i === segments.length - 1) {
          if (!isDirRef(entry)) out.set(p, asEntry(entry, p));
        } else if (isDirRef(entry)) hex = entry.tree;
        else break;
      }
    }
    return out;
  }

  /** The root digests that live snapshot files reference (what `prune` keeps). */
  liveRoots(): string[] {
    const roots = new Set<string>();
    for (const name of safeReaddir(this.refsDir())) {
      if (!name.endsWith('.json')) continue;
      const digest = liveRefDigest(path.join(this.refsDir(), name));
      if (digest !== null) roots.add(digest);
    }
    return [...roots];
  }

  private refsDir(): string {
    return path.join(this.dir, 'refs');
  }

  /** Records that `snapshotFile` references `digest`, so pruning keeps that inventory. */
  addRef(snapshotFile: string, digest: string): void {
    const absolute = path.resolve(snapshotFile);
    const name = createHash('sha256').update(absolute).digest('hex');
    writeFileAtomicSync(path.join(this.refsDir(), `${name}.json`), `${JSON.stringify({ snapshotFile: absolute, digest })}\n`, { mkdir: true });
  }

  /**
   * Garbage collection by reachability: the roots are the inventories that existing snapshot
   * files still reference; every object not reachable from a root, and older than `graceMs`
   * (so an inventory being written right now by another process is safe), is deleted.
   */
  prune(options: { graceMs?: number; dryRun?: boolean } = {}): InventoryPruneResult {
    const graceMs = options.graceMs ?? 15 * 60 * 1000;
    const dryRun = options.dryRun ?? false;
    const roots = new Set<string>();
    let refsRemoved = 0;
    for (const name of safeReaddir(this.refsDir())) {
      if (!name.endsWith('.json')) continue;
      const refFile = path.join(this.refsDir(), name);
      const digest = liveRefDigest(refFile);
      if (digest !== null) roots.add(digest);
      else {
        refsRemoved++;
        if (!dryRun) fs.rmSync(refFile, { force: true });
      }
    }
    const reachable = new Set<string>();
    const mark = (hex: string): void => {
      if (reachable.has(hex)) return;
      reachable.add(hex);
      let object: TreeObject;
      try {
        object = this.readObject(hex);
      } catch {
        return; // a missing or corrupt object cannot keep anything else alive
      }
      for (const entry of object.entries) if (isDirRef(entry)) mark(entry.tree);
    };
    for (const digest of roots) mark(hexOf(digest));

    const cutoff = Date.now() - graceMs;
    let kept = 0;
    let deleted = 0;
    let bytesFreed = 0;
    const objectsDir = path.join(this.dir, 'objects');
    for (const fan of safeReaddir(objectsDir)) {
      for (const rest of safeReaddir(path.join(objectsDir, fan))) {
        const file = path.join(objectsDir, fan, rest);
        if (reachable.has(fan + rest)) {
          kept++;
          continue;
        }
        let stat: fs.Stats;
        try {
          stat = fs.statSync(file);
        } catch {
          continue;
        }
        if (stat.mtimeMs > cutoff) {
          kept++;
          continue;
        }
        deleted++;
        bytesFreed += stat.size;
        if (!dryRun) fs.rmSync(file, { force: true });
      }
    }
    return { kept, deleted, bytesFreed, refsRemoved, dryRun };
  }

  /** Number and total size of stored objects. */
  usage(): InventoryUsage {
    let objects = 0;
    let bytes = 0;
    const objectsDir = path.join(this.dir, 'objects');
    for (const fan of safeReaddir(objectsDir)) {
      for (const rest of safeReaddir(path.join(objectsDir, fan))) {
        try {
          bytes += fs.statSync(path.join(objectsDir, fan, rest)).size;
          objects++;
        } catch {
          // removed concurrently
        }
      }
    }
    return { objects, bytes, refs: safeReaddir(this.refsDir()).filter((n) => n.endsWith('.json')).length };
  }
}

/**
 * `canonicalize({entries})` (RFC 8785), written out for the two fixed entry shapes: trees of
 * 10^5 files are serialized on every snapshot, and the generic canonicalizer's per-object key
 * sort dominated. Keys are emitted in JCS order (bytes < kind < mode < name < sha256; name < tree);
 * a test checks equality with `canonicalize`.
 */
export function canonicalTree(entries: readonly TreeEntry[]): string {
  const parts: string[] = [];
  for (const e of entries) {
    if (isDirRef(e)) parts.push(`{"name":${JSON.stringify(e.name)},"tree":${JSON.stringify(e.tree)}}`);
    else {
      const sha = e.sha256 === undefined ? '' : `,"sha256":${JSON.stringify(e.sha256)}`;
      parts.push(`{"bytes":${canonicalNumber(e.bytes)},"kind":${JSON.stringify(e.kind)},"mode":${JSON.stringify(e.mode)},"name":${JSON.stringify(e.name)}${sha}}`);
    }
  }
  return `{"entries":[${parts.join(',')}]}`;
}

function canonicalNumber(n: number): string {
  // Sizes are non-negative integers; anything else goes through the full canonicalizer (which rejects NaN).
  return Number.isSafeInteger(n) ? String(n) : canonicalize(n);
}

function asEntry(node: FileNode, entryPath: string): InventoryEntry {
  const item: InventoryEntry = { path: entryPath, bytes: node.bytes, mode: node.mode, kind: node.kind };
  if (node.sha256 !== undefined) item.sha256 = node.sha256;
  return item;
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** The digest a ref protects, or null when its snapshot file no longer references it. */
function liveRefDigest(refFile: string): string | null {
  try {
    const ref = JSON.parse(fs.readFileSync(refFile, 'utf8')) as { snapshotFile?: unknown; digest?: unknown };
    if (typeof ref.snapshotFile !== 'string' || typeof ref.digest !== 'string') return null;
    const snapshot = JSON.parse(fs.readFileSync(ref.snapshotFile, 'utf8')) as { inventory?: { digest?: unknown } };
    return snapshot.inventory?.digest === ref.digest ? ref.digest : null;
  } catch {
    return null;
  }
}
