/**
 * What `session pre` and `session post` copy into the content store, and why so little.
 *
 * - In a git repository, pre copies only what git does not hold: the paths `git status` lists
 *   (staged, modified, untracked), and every file inside a nested repository (an untracked one,
 *   or a submodule's work tree: the outer index and commits hold no file of it, only a commit id
 *   of another repository, and status names it as one directory or not at all). A tracked file matching the index is left to git; post then
 *   copies, for each path the iteration changed, its pre-state bytes from the pre commit (before
 *   an amend or gc could lose them; by the blob id the index still holds where it fits, git-index.ts)
 *   and its post-state bytes from disk. So a clean pre copies
 *   nothing, and every path an iteration changed has both sides in cairn's own store.
 * - Outside git, the first capture copies every file; later ones only what changed since the
 *   last complete capture (the baseline, an inventory digest, O(changed) by its Merkle diff).
 * - Dedup is by the inventory's sha256 (no second pass over the tree); the bytes actually copied
 *   are checked against it, because a file may change between the scan and the copy.
 * - Files over the cap (default 50 MiB), unreadable ones and ones that changed while copied are
 *   recorded as not restorable, never skipped silently. Symlink targets are kept in the record
 *   (the inventory hashes what a link points at, not the link).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomicSync } from '../core/atomic-write.js';
import { CairnError, errnoCode } from '../core/errors.js';
import type { InventoryEntry, InventoryStore } from '../session/inventory-store/inventory-store.js';
import { blobIdsInIndex, gitlinksInIndex } from './git-index.js';
import { gitlinksFromGit, readAtCommit } from './git-source.js';
import type { ContentRecord, NotRestorable } from './record.js';
import { ContentStore, sha256Of, type ContentItem } from './store.js';

export const DEFAULT_CONTENT_CAP_BYTES = 50 * 1024 * 1024;
/** A capture flushes a pack whenever this many raw bytes wait (first captures of big trees). */
const FLUSH_RAW_BYTES = 64 * 1024 * 1024;
/** Raw bytes a post keeps in memory for its review (the review reads the rest back from the store). */
const KEPT_RAW_BYTES = 64 * 1024 * 1024;

/** The bytes a post's capture stored, by the content record it made (see capturedBytes). */
const CAPTURED = new WeakMap<ContentRecord, ReadonlyMap<string, Buffer>>();

/**
 * The bytes the post capture that made `record` copied into the store, by sha256, each checked
 * against that digest when copied (from disk or git): the review that follows the post diffs
 * them without reading back and decompressing what was just packed. Empty for any other record
 * (a pre's, one read from disk): those bytes are read from the store.
 */
export function capturedBytes(record: ContentRecord | undefined): ReadonlyMap<string, Buffer> {
  return (record === undefined ? undefined : CAPTURED.get(record)) ?? new Map();
}

export interface CaptureContext {
  root: string;
  /** `<root>/.cairn` (or the configured data dir). */
  cairnDir: string;
  inventories: InventoryStore;
  /** This side's inventory digest and its entries. */
  digest: string;
  files: readonly InventoryEntry[];
  /** The git status of this side (null or branch 'unknown' outside git). */
  git: { branch: string; commit: string; staged: string[]; unstaged: string[]; untracked: string[] } | null;
  capBytes?: number;
}

export function contentDir(cairnDir: string): string {
  return path.join(cairnDir, 'content');
}

/**
 * The project's content store, after proving that no component of `<cairnDir>/content/packs`
 * is a symlink (a planted link there would send cairn's writes outside the project).
 */
export function openContentStore(cairnDir: string): ContentStore {
  const dir = contentDir(cairnDir);
  for (const p of [cairnDir, dir, path.join(dir, 'packs')]) {
    try {
      if (fs.lstatSync(p).isSymbolicLink()) {
        throw new CairnError('ERR_CONTAINMENT', `${p} is a symlink; cairn keeps its data only in real directories: remove the link and retry`, { path: p });
      }
    } catch (e) {
      if (e instanceof CairnError) throw e;
      if (errnoCode(e) !== 'ENOENT') throw e;
    }
  }
  return new ContentStore(dir, { within: path.dirname(path.resolve(cairnDir)) });
}

function inGit(ctx: CaptureContext): boolean {
  return ctx.git !== null && ctx.git.branch !== 'unknown';
}

/**
 * Finds entries by path. A scan's inventory is in code-unit order, checked here in one pass, so a
 * binary search finds each of a few dirty paths without a map of the whole tree (~1 vs ~10 ms at
 * 50k files); any other order (recovered names appended, entries built by hand) gets the map.
 */
export function entryFinder(files: readonly InventoryEntry[]): (p: string) => InventoryEntry | undefined {
  for (let i = 1; i < files.length; i++) {
    if (!(files[i - 1]!.path < files[i]!.path)) {
      const map = new Map<string, InventoryEntry>();
      for (const f of files) map.set(f.path, f);
      return (p) => map.get(p);
    }
  }
  return (p) => {
    let lo = 0;
    let hi = files.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = files[mid]!;
      if (at.path === p) return at;
      if (at.path < p) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  };
}

/**
 * Collects items and writes them to the store in packs of at most FLUSH_RAW_BYTES. With `kept`,
 * it also keeps the bytes it was given (checked against their digests before they were added),
 * up to KEPT_RAW_BYTES in all, for the review that follows a post (see capturedBytes).
 */
class PackWriter {
  private items: ContentItem[] = [];
  private pendingBytes = 0;
  private readonly queued = new Set<string>();
  private keptBytes = 0;
  readonly totals = { objectsWritten: 0, rawBytes: 0, packBytes: 0 };
  constructor(
    private readonly store: ContentStore,
    readonly kept: Map<string, Buffer> | null = null,
  ) {}

  /** Whether `sha` is stored or queued (a stored one's pack is refreshed: see ContentStore.claim). */
  has(sha: string): boolean {
    return this.queued.has(sha) || this.store.claim(sha);
  }

  add(item: ContentItem & { bytes: Buffer }): void {
    if (this.queued.has(item.sha256)) return;
    this.queued.add(item.sha256);
    if (this.kept !== null && this.keptBytes + item.bytes.length <= KEPT_RAW_BYTES) {
      this.kept.set(item.sha256, item.bytes);
      this.keptBytes += item.bytes.length;
    }
    this.items.push(item);
    this.pendingBytes += item.bytes.length;
    if (this.pendingBytes >= FLUSH_RAW_BYTES) this.flush();
  }

  flush(): void {
    if (this.items.length === 0) return;
    const r = this.store.put(this.items);
    this.totals.objectsWritten += r.objectsWritten;
    this.totals.rawBytes += r.rawBytes;
    this.totals.packBytes += r.packBytes;
    this.items = [];
    this.pendingBytes = 0;
  }
}

/** Reads a regular file of the tree without following a symlink at its name; null when it cannot. */
export function readTreeFile(root: string, rel: string): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(path.join(root, rel), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return null;
    return fs.readFileSync(fd);
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** Copies one file of the tree into the writer, checked against the inventory's digest. */
function copyFromDisk(ctx: Pick<CaptureContext, 'root'>, entry: InventoryEntry, writer: PackWriter, cap: number, lost: NotRestorable[]): void {
  if (entry.kind !== 'file' || entry.sha256 === undefined) return;
  if (writer.has(entry.sha256)) return;
  if (entry.bytes > cap) {
    lost.push({ path: entry.path, reason: 'over-size-cap' });
    return;
  }
  const bytes = readTreeFile(ctx.root, entry.path);
  if (bytes === null) {
    lost.push({ path: entry.path, reason: 'unreadable' });
    return;
  }
  if (sha256Of(bytes) !== entry.sha256) {
    lost.push({ path: entry.path, reason: 'changed-while-captured' });
    return;
  }
  writer.add({ sha256: entry.sha256, bytes });
}

function symlinkTargets(ctx: Pick<CaptureContext, 'root' | 'files'>, lost: NotRestorable[]): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const f of ctx.files) {
    if (f.kind !== 'symlink') continue;
    let target: Buffer;
    try {
      target = fs.readlinkSync(path.join(ctx.root, f.path), { encoding: 'buffer' });
    } catch {
      lost.push({ path: f.path, reason: 'unreadable' });
      continue;
    }
    const text = target.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(target)) {
      lost.push({ path: f.path, reason: 'symlink-target-not-utf8' });
      continue;
    }
    (out ??= {})[f.path] = text;
  }
  return out;
}

function baselineFile(cairnDir: string): string {
  return path.join(contentDir(cairnDir), 'baseline.json');
}

function readBaseline(cairnDir: string, inventories: InventoryStore): string | null {
  try {
    const digest = (JSON.parse(fs.readFileSync(baselineFile(cairnDir), 'utf8')) as { digest?: unknown }).digest;
    return typeof digest === 'string' && inventories.has(digest) ? digest : null;
  } catch {
    return null;
  }
}

function writeBaseline(cairnDir: string, digest: string): void {
  writeFileAtomicSync(baselineFile(cairnDir), `${JSON.stringify({ digest })}\n`, { mkdir: true, fsync: false });
}

function record(ctx: CaptureContext, writer: PackWriter, lost: NotRestorable[], symlinks: Record<string, string> | undefined): ContentRecord {
  const rec: ContentRecord = { version: 1, capBytes: ctx.capBytes ?? DEFAULT_CONTENT_CAP_BYTES, ...writer.totals };
  if (inGit(ctx) && ctx.git !== null && ctx.git.commit !== 'unknown') rec.gitCommit = ctx.git.commit;
  if (symlinks !== undefined) rec.symlinks = symlinks;
  if (lost.length > 0) rec.notRestorable = lost;
  return rec;
}

/**
 * The directories (each with a trailing `/`) whose files git's status never lists one by one,
 * though the outer repository holds none of them: a repository inside the tree, which status
 * names as one untracked `dir/` (git does not enter it), and a gitlink (a submodule, or a
 * repository `git add` took in), which the index holds as one commit id of another repository
 * and status lists only when that repository changed. Each file below them must be copied.
 */
function nestedRepositories(root: string, status: { untracked: readonly string[] }): string[] {
  const dirs = status.untracked.filter((p) => p.endsWith('/'));
  for (const link of gitlinksInIndex(root) ?? gitlinksFromGit(root)) dirs.push(`${link}/`);
  return dirs;
}

/** `session pre`: keeps what git does not hold (or, outside git, what changed since the baseline). */
export function capturePreContent(ctx: CaptureContext): ContentRecord {
  const cap = ctx.capBytes ?? DEFAULT_CONTENT_CAP_BYTES;
  const store = openContentStore(ctx.cairnDir);
  const writer = new PackWriter(store);
  const lost: NotRestorable[] = [];
  const symlinks = symlinkTargets(ctx, lost);
  if (inGit(ctx) && ctx.git !== null) {
    const dirty = [...ctx.git.staged, ...ctx.git.unstaged, ...ctx.git.untracked];
    if (dirty.length > 0) {
      const entryAt = entryFinder(ctx.files);
      for (const p of new Set(dirty)) {
        const entry = entryAt(p);
        if (entry !== undefined) copyFromDisk(ctx, entry, writer, cap, lost);
      }
    }
    const nested = nestedRepositories(ctx.root, ctx.git);
    if (nested.length > 0) {
      for (const entry of ctx.files) if (nested.some((dir) => entry.path.startsWith(dir))) copyFromDisk(ctx, entry, writer, cap, lost);
    }
    writer.flush();
    return record(ctx, writer, lost, symlinks);
  }
  const baseline = readBaseline(ctx.cairnDir, ctx.inventories);
  if (baseline === null) for (const entry of ctx.files) copyFromDisk(ctx, entry, writer, cap, lost);
  else for (const change of ctx.inventories.changedEntries(baseline, ctx.digest)) if (change.after !== null) copyFromDisk(ctx, change.after, writer, cap, lost);
  writer.flush();
  writeBaseline(ctx.cairnDir, ctx.digest);
  return record(ctx, writer, lost, symlinks);
}

/**
 * `session post`: for every path the iteration changed, its post bytes (from disk) and its pre
 * bytes (already stored, or from the pre commit, checked against the pre inventory's digest).
 */
export function capturePostContent(ctx: CaptureContext, pre: { digest: string; gitCommit?: string; capBytes?: number }): ContentRecord {
  return copyPostContent(ctx, pre)(ctx.git);
}

/**
 * capturePostContent in two steps, for a caller still waiting for git's status: the bytes are
 * copied and stored now (which paths and which bytes follow from the two inventories alone), and
 * the record is made from the status once it is there (it says only whether the tree is in git,
 * and at which commit). The same packs, record and baseline as the one-step call.
 */
export function copyPostContent(ctx: Omit<CaptureContext, 'git'>, pre: { digest: string; gitCommit?: string; capBytes?: number }): (git: CaptureContext['git']) => ContentRecord {
  const cap = ctx.capBytes ?? DEFAULT_CONTENT_CAP_BYTES;
  const store = openContentStore(ctx.cairnDir);
  const writer = new PackWriter(store, new Map());
  const lost: NotRestorable[] = [];
  const preLost: NotRestorable[] = [];
  const symlinks = symlinkTargets(ctx, lost);
  const changes = ctx.inventories.changedEntries(pre.digest, ctx.digest);
  const fromGit: Array<InventoryEntry & { sha256: string }> = [];
  for (const change of changes) {
    if (change.after !== null) copyFromDisk(ctx, change.after, writer, cap, lost);
    const before = change.before;
    if (before === null || before.kind !== 'file' || before.sha256 === undefined || writer.has(before.sha256)) continue;
    if (before.bytes > cap) preLost.push({ path: before.path, reason: 'over-size-cap' });
    else fromGit.push({ ...before, sha256: before.sha256 });
  }
  if (fromGit.length > 0) {
    const expected = new Map(fromGit.map((e) => [e.path, e.sha256]));
    // readAtCommit keeps only bytes that `accept` checked against the pre inventory's digest;
    // the index's blob ids only say where to look first (git-index.ts).
    const got = pre.gitCommit === undefined ? new Map<string, Buffer>() : readAtCommit(ctx.root, pre.gitCommit, fromGit.map((e) => e.path), (p, bytes) => sha256Of(bytes) === expected.get(p), blobIdsInIndex(ctx.root, fromGit));
    for (const entry of fromGit) {
      const bytes = got.get(entry.path);
      if (bytes !== undefined) writer.add({ sha256: entry.sha256, bytes });
      else preLost.push({ path: entry.path, reason: pre.gitCommit === undefined ? 'not-captured' : 'not-in-git' });
    }
  }
  writer.flush();
  return (git) => {
    const side = { ...ctx, git };
    if (!inGit(side)) writeBaseline(ctx.cairnDir, ctx.digest);
    const rec = record(side, writer, lost, symlinks);
    if (preLost.length > 0) rec.preNotRestorable = preLost;
    if (writer.kept !== null) CAPTURED.set(rec, writer.kept);
    return rec;
  };
}
