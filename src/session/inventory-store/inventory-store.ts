/**
 * Content-addressed storage of working-tree inventories, shaped like git trees: one object per
 * directory listing, named by the SHA-256 of its canonical (RFC 8785) form, whose entries are
 * files (size, digest, mode, kind) or subdirectories (the digest of their own object). Two
 * inventories of a mostly unchanged tree share every unchanged directory, so each new inventory
 * costs storage in proportion to the directories on the paths that changed, and comparing two
 * inventories skips every subtree whose digest is equal.
 *
 * Layout under the inventory directory (default `<projectRoot>/.cairn/inventories/`):
 *   objects/<2 hex>/<62 hex>   directory objects (JSON, canonical), one file each
 *   packed/                    directory objects of incremental puts, many to a pack (see below)
 *   refs/<hex>.json            which snapshot file references which root (GC roots)
 *   pending/<pid>-<hex>.json   a put under way, then the root it stored until its ref is written
 *   pruning                    a prune under way (its owner: pid, host, start)
 *   prune-epoch                a count of the prunes begun, bumped by each before it reads anything
 *   known-objects              the objects of the last put and the epoch they were stored in
 *   last-put                   that put's epoch, a digest of its entries and its root
 *
 * Put and prune, without a lock and without touching objects that already exist. A put writes
 * its pending mark, then looks for `pruning`: while a prune runs, it takes its mark back, waits
 * for the prune to end and begins again. Only then does it look at objects (writing the missing
 * ones), and once every object of its inventory is on disk it names its root in the mark; the
 * ref replaces the mark later (addRef). A prune writes `pruning`, bumps the epoch, waits until
 * no live put holds a mark without a root, and takes every named mark whose owner lives, or
 * that is younger than the grace period, as a root. So nothing a put found on disk is deleted
 * under it: a prune that was running when the put looked made the put wait; one that began
 * later sees the put's mark and keeps its inventory. Objects younger than the grace period are
 * still kept (for a writer that knows no marks). A put does not even look at the objects of
 * the last put (`known-objects`) when no prune has begun since (same epoch, no `pruning`):
 * they cannot have been deleted (one lstat of the root checks that the store was not removed
 * by hand). Tested with a prune running in another process while inventories are put.
 *
 * A long-running process keeps its last put in memory (PutMemory, ./put-memory.ts: the tree
 * with each directory's object, and the objects known on disk) and patches it to the next
 * put's entries: only the directories on changed paths are made and looked at, and neither
 * `last-put` nor `known-objects` is written (what they say stays true). The memory is trusted on
 * the terms of `known-objects`: in the epoch it was made in (a prune by any process ends it;
 * one by this process drops it) and while its root is there (one lstat); a put that fails or
 * cannot be patched exactly drops it, and the next put is plain and makes a new one.
 *
 * Packs. Creating a file is most of what a small object costs (~130 µs on this machine's ext4,
 * against ~15 µs to write an existing one), and a put of 1 % of a tree makes an object for every
 * directory on a changed path (5k files: ~100, 50k: ~600). So a put that knows which objects are
 * on disk already (the resident memory, or `known-objects`) and has at least PACK_MIN new ones
 * writes them as one pack of the content store's kind (../../content/store.ts: a whole file or
 * none, brotli blocks, bytes checked against their name on read), in `packed/`, not fsynced like
 * a loose object. The first put of an epoch (it cannot tell new objects from old) writes loose
 * ones, each looked at by its name as before. A read looks for the loose file, then in the packs
 * (listed again once on a miss: another process may have written one since); a prune collects
 * packs by the same reachability, deleting dead packs and rewriting partly live ones.
 *
 * Every object and ref is reached through ContainedDir (../core/contained-dir.ts): no link in
 * `.cairn/`, `inventories/`, `objects/`, a fan-out directory or at a file name is followed, so
 * prune deletes only files inside the store, and a link it meets is left alone, never its target.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseJsonBounded } from '../../core/bounded-json.js';
import { ContainedDir, ContainmentError, rootedAt } from '../../core/contained-dir.js';
import { CairnError, errnoCode } from '../../core/errors.js';
import { ContentStore } from '../../content/store.js';
import { ownerDeathReason, processStartTicks } from '../../core/lock.js';
import { decodeUtf8Strict } from '../../core/utf8.js';
import { compareUtf8 } from '../../core/utf8.js';
import { sameContent } from '../../inventory/diff.js';
import { PutMemory } from './put-memory.js';
import { buildTree, isDirRef, makeObject, type BuildNode, type DirRef, type FileNode, type InventoryEntry, type MadeObject, type TreeEntry, type TreeObject } from './tree-object.js';
import type { WorkingTreeChanges } from '../types.js';

export type { DirRef, FileNode, InventoryEntry, TreeEntry } from './tree-object.js';
export { canonicalTree } from './tree-object.js';

const DIGEST_PREFIX = 'sha256:';

function hexOf(digest: string): string {
  const hex = digest.startsWith(DIGEST_PREFIX) ? digest.slice(DIGEST_PREFIX.length) : digest;
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new CairnError('ERR_INVALID_SNAPSHOT', `"${digest}" is not an inventory digest (expected sha256:<64 hex>)`);
  }
  return hex;
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

/** The largest object or ref file read: a directory listing of ~10^6 entries; anything larger was not written by cairn. */
const MAX_OBJECT_BYTES = 512 * 1024 * 1024;
const MAX_REF_BYTES = 64 * 1024;

/**
 * The opened `objects/` directory and the fan-out directories met so far, for the length of one
 * operation (a put or a walk reads thousands of objects; each fan is opened once), and the packs
 * as listed in that operation.
 */
class ObjectsDir {
  private readonly fans = new Map<string, ContainedDir | null>();
  private packs: ContentStore | null = null;

  constructor(
    readonly dir: ContainedDir | null,
    private readonly openPacks: () => ContentStore,
  ) {}

  /** The packed objects, listed once per operation; `again`: listed anew (after a miss). */
  packed(again = false): ContentStore {
    if (this.packs === null || again) this.packs = this.openPacks();
    return this.packs;
  }

  /** The bytes of packed object `hex` (checked against it), or null when no pack holds it. */
  packedBytes(hex: string): Buffer | null {
    for (const again of [false, true]) {
      const packs = this.packed(again);
      if (!packs.has(hex)) continue;
      try {
        return packs.get(hex);
      } catch (e) {
        // Its pack went since the listing (a prune rewrote it): list again, once.
        if (again) throw e;
      }
    }
    return null;
  }

  fan(name: string, create: boolean): ContainedDir | null {
    const known = this.fans.get(name);
    if (known !== undefined && (known !== null || !create)) return known;
    const opened = this.dir === null ? null : this.dir.child(name, { create });
    this.fans.set(name, opened);
    return opened;
  }

  close(): void {
    for (const fan of this.fans.values()) fan?.close();
    this.dir?.close();
  }
}

export class InventoryStore {
  readonly dir: string;
  private readonly root: string;
  private readonly parts: readonly string[];

  /**
   * `within`: a directory above `dir` from which no link is followed (the snapshot manager
   * passes the project root for `<root>/.cairn/inventories`); without it, `dir` is the root.
   */
  constructor(dir: string, options: { within?: string } = {}) {
    this.dir = path.resolve(dir);
    const { root, parts } = rootedAt(this.dir, options.within);
    this.root = root;
    this.parts = parts;
  }

  private objectPath(hex: string): string {
    return path.join(this.dir, 'objects', hex.slice(0, 2), hex.slice(2));
  }

  private open(sub: string, create: boolean): ContainedDir | null {
    return ContainedDir.open(this.root, [...this.parts, sub], { create });
  }

  /** The objects directory of the operation under way (see withObjects), for walks that do not pass it along. */
  private active: ObjectsDir | undefined;

  /** Runs `fn` with `objects/` opened once (re-entrant: an operation inside another shares its handles). */
  private withObjects<T>(create: boolean, fn: (objects: ObjectsDir) => T): T {
    if (this.active !== undefined && (!create || this.active.dir !== null)) return fn(this.active);
    const objects = new ObjectsDir(this.open('objects', create), () => new ContentStore(path.join(this.dir, PACKED_DIR), { within: this.root, compression: 'fast' }));
    const outer = this.active;
    this.active = objects;
    try {
      return fn(objects);
    } finally {
      this.active = outer;
      objects.close();
    }
  }

  /** Stores an inventory (entries with POSIX paths) and returns the digest of its root directory object. */
  put(entries: readonly InventoryEntry[]): StoreInventoryResult {
    const stats = { objectsWritten: 0, bytesWritten: 0 };
    const home = ContainedDir.open(this.root, this.parts, { create: true })!;
    let digest: string;
    try {
      const mark = this.beginPut(home);
      try {
        const lastTree = MEMORY.get(this.dir)?.tree;
        // One opening of objects/ and one listing of the packs for the whole put: its root checks
        // (has) and its writes share them, rather than each listing every pack again.
        digest = DIGEST_PREFIX + this.withObjects(true, () => this.residentPut(home, mark.epoch, entries, stats) ?? this.plainPut(home, mark.epoch, entries, stats, lastTree));
      } catch (e) {
        // The mark must not outlive a put that failed: a prune would wait for it.
        try {
          withChild(home, PENDING_DIR, (pending) => pending.unlink(mark.name));
        } catch {
          // the put's own error is the one to report; a leftover mark of this process is not waited for
        }
        throw e;
      }
      // Every object is on disk: the mark now keeps this root until addRef replaces it with a ref.
      withChild(home, PENDING_DIR, (pending) => pending.writeFile(mark.name, `${JSON.stringify({ ...mark.owner, digest })}\n`, { fsync: false }));
      this.pendingMarks.set(digest, mark.name);
    } finally {
      home.close();
    }
    return { digest, ...stats };
  }

  /**
   * The put of a process that put into this store before, in the same prune epoch, with its root
   * still there: patched from the last put's tree (see PutMemory), so only the objects on the
   * changed paths are made and looked at. Returns the root, or null when there is no such memory
   * or it cannot serve these entries (then it is dropped, and the plain put makes a new one).
   */
  private residentPut(home: ContainedDir, epoch: string, entries: readonly InventoryEntry[], stats: { objectsWritten: number; bytesWritten: number }): string | null {
    const memory = MEMORY.get(this.dir);
    if (memory === undefined) return null;
    // Dropped first: a put that fails midway leaves no memory behind, whatever it had patched.
    MEMORY.delete(this.dir);
    if (memory.epoch !== epoch || !this.has(DIGEST_PREFIX + memory.rootHex)) return null;
    const made = memory.patch(entries);
    if (made === null) return null;
    const objectsOf = new Map(made.map((m) => [m.hex, m.text]));
    this.writeObjects(objectsOf, memory.onDisk, stats);
    for (const m of made) {
      memory.onDisk.add(m.hex);
      this.remember(m.hex, m.object);
    }
    if (memory.onDisk.size <= MEMORY_OBJECTS_MAX) MEMORY.set(this.dir, memory);
    return memory.rootHex;
  }

  /**
   * The put that builds the whole tree from `entries` (the first of a process, or after a prune);
   * it leaves the memory for the next. `lastTree`: the last put's tree in this process, whose
   * unchanged directories' objects are reused instead of made again.
   */
  private plainPut(home: ContainedDir, epoch: string, entries: readonly InventoryEntry[], stats: { objectsWritten: number; bytesWritten: number }, lastTree?: BuildNode): string {
    const key = putKey(entries);
    const same = this.lastPutRoot(home, epoch, key);
    if (same !== null) return same;
    // Every object is serialised and named first; the store is touched only after that.
    const objectsOf = new Map<string, string>();
    const parsed = new Map<string, TreeObject>();
    const tree = buildTree(entries);
    const hex = hashNode(tree, objectsOf, parsed, lastTree);
    this.storeObjects(home, epoch, objectsOf, stats);
    home.writeFile(LAST_PUT_FILE, `${epoch}\n${key}\n${hex}\n`, { fsync: false });
    for (const [h, object] of parsed) this.remember(h, object);
    MEMORY.set(this.dir, new PutMemory(epoch, tree, new Set(objectsOf.keys())));
    return hex;
  }

  /** Writes the objects that are not on disk yet, and the list of this put's objects when it differs from the last one. */
  private storeObjects(home: ContainedDir, epoch: string, objectsOf: ReadonlyMap<string, string>, stats: { objectsWritten: number; bytesWritten: number }): void {
    const known = this.knownObjects(home, epoch);
    this.writeObjects(objectsOf, known, stats);
    if (known === null || objectsOf.size !== known.size || [...objectsOf.keys()].some((h) => !known.has(h))) {
      home.writeFile(KNOWN_FILE, `${epoch}\n${[...objectsOf.keys()].join('\n')}\n`, { fsync: false });
    }
  }

  /**
   * Writes each of `objectsOf` that is not in `known` and not whole on disk already: as one pack
   * when `known` tells the new ones (at least PACK_MIN of them), else each in its own file.
   */
  private writeObjects(objectsOf: ReadonlyMap<string, string>, known: ReadonlySet<string> | null, stats: { objectsWritten: number; bytesWritten: number }): void {
    this.withObjects(true, (objects) => {
      if (known !== null) {
        const fresh: { sha256: string; bytes: Buffer }[] = [];
        for (const [objectHex, text] of objectsOf) if (!known.has(objectHex)) fresh.push({ sha256: objectHex, bytes: Buffer.from(text, 'utf8') });
        if (fresh.length >= PACK_MIN) {
          const written = objects.packed().put(fresh, { durable: false });
          stats.objectsWritten += written.objectsWritten;
          stats.bytesWritten += written.rawBytes;
          return;
        }
      }
      for (const [objectHex, text] of objectsOf) {
        if (known?.has(objectHex) === true) continue;
        const fan = objects.fan(objectHex.slice(0, 2), true)!;
        const rest = objectHex.slice(2);
        const bytes = Buffer.from(text, 'utf8');
        // Objects are not fsynced (a first inventory writes thousands): a torn object after power
        // loss is caught by the digest check on read. A new one is made at its name, without the
        // temp and rename of an atomic write (most of a 1 % put's cost): no root names it until
        // this put has written it whole, and a put that finds it short (see below) replaces it.
        // Made first, looked at only when the name is taken (O_EXCL; most of a put's objects are
        // new, so no lstat for them).
        if (!createObject(fan, rest, bytes)) {
          const there = fan.lstat(rest);
          // Whole there: no prune can delete it now (see the top). A shorter one is a write killed midway.
          if (there?.isFile() === true && there.size === bytes.length) continue;
          // A link, a torn object or a name another put took meanwhile: replaced atomically.
          fan.writeFile(rest, bytes, { fsync: false });
        }
        stats.objectsWritten++;
        stats.bytesWritten += bytes.length;
      }
    });
  }

  /** The marks this store's puts wrote, by root digest, until addRef replaces them. */
  private readonly pendingMarks = new Map<string, string>();

  /**
   * Writes this put's mark, then makes sure no prune runs (waiting for one to end, with the mark
   * taken back meanwhile); returns the mark and the prune epoch the put works in.
   */
  private beginPut(home: ContainedDir): { name: string; owner: MarkOwner; epoch: string } {
    const owner = markOwner();
    const name = `${process.pid}-${createHash('sha256').update(`${owner.startedAt}${Math.random()}${process.hrtime.bigint()}`).digest('hex').slice(0, 16)}.json`;
    const waitedSince = Date.now();
    for (;;) {
      const pending = home.child(PENDING_DIR, { create: true })!;
      try {
        pending.writeFile(name, `${JSON.stringify(owner)}\n`, { fsync: false });
        const pruning = livePruneOwner(home);
        if (pruning === null) return { name, owner, epoch: readEpoch(home) };
        pending.unlink(name); // a prune waits for marks without a root: do not hold one while waiting for it
        if (Date.now() - waitedSince > PRUNE_WAIT_MS) {
          throw new CairnError('ERR_LOCK_TIMEOUT', `a prune of ${this.dir} (pid ${pruning.pid}, since ${pruning.startedAt}) is still running; wait for it to finish, or stop it, and try again`, { path: this.dir });
        }
      } finally {
        pending.close();
      }
      sleepSync(POLL_MS);
    }
  }

  /**
   * The root of the last put when it stored exactly these entries (`key`, see putKey), no prune
   * has begun since and its root is still there: then every object of it is on disk (the same
   * argument as knownObjects), and nothing needs to be serialised, hashed or looked at again.
   */
  private lastPutRoot(home: ContainedDir, epoch: string, key: string): string | null {
    let lines: string[];
    try {
      lines = (home.readFile(LAST_PUT_FILE, { maxBytes: 1024 })?.toString('latin1') ?? '').split('\n');
    } catch {
      return null; // a damaged memo only costs the put it would have saved
    }
    const [memoEpoch, memoKey, rootHex] = lines;
    if (memoEpoch !== epoch || memoKey !== key || rootHex === undefined || !/^[0-9a-f]{64}$/.test(rootHex)) return null;
    return this.has(DIGEST_PREFIX + rootHex) ? rootHex : null;
  }

  /** The objects the last put stored, when no prune has begun since and its root is still there. */
  private knownObjects(home: ContainedDir, epoch: string): Set<string> | null {
    let text: string;
    try {
      const bytes = home.readFile(KNOWN_FILE, { maxBytes: MAX_OBJECT_BYTES });
      if (bytes === null) return null;
      text = bytes.toString('latin1');
    } catch {
      return null; // a damaged list only costs the lstats it would have saved
    }
    const lines = text.split('\n');
    if (lines[0] !== epoch || lines[lines.length - 1] !== '') return null;
    // The last line is the last put's root (objects are listed children first): if it is gone,
    // the store was emptied by hand. A stray line can match no object name and costs nothing.
    const lastRoot = lines[lines.length - 2];
    if (lastRoot === undefined || !/^[0-9a-f]{64}$/.test(lastRoot) || !this.has(DIGEST_PREFIX + lastRoot)) return null;
    return new Set(lines.slice(1, -1));
  }

  /**
   * Objects this process put or read (and checked) in this store's directory, by name: a post's
   * diff, its content capture and the review after it walk the same changed paths, the new side
   * of which the put has just built. An object's name is its content, so a remembered one is
   * always right; a prune forgets them all.
   */
  private get objectCache(): Map<string, TreeObject> {
    let cache = REMEMBERED.get(this.dir);
    if (cache === undefined) {
      cache = new Map();
      REMEMBERED.set(this.dir, cache);
    }
    return cache;
  }

  private remember(hex: string, object: TreeObject): void {
    let total = 0;
    for (const cache of REMEMBERED.values()) total += cache.size;
    if (total >= OBJECT_CACHE_MAX) REMEMBERED.clear();
    this.objectCache.set(hex, object);
  }

  /**
   * Before a walk from a remembered root: the root must still be on disk, as a walk of the disk
   * would find (a store removed by hand is gone for this process too). Below a present root
   * every object is there: a prune keeps whatever a kept root reaches.
   */
  private rootOnDisk(hex: string | null): void {
    if (hex === null || REMEMBERED.get(this.dir)?.has(hex) !== true || this.has(DIGEST_PREFIX + hex)) return;
    REMEMBERED.delete(this.dir);
    this.readObject(hex); // not remembered now: the error a read of the disk gives
  }

  private readObject(hex: string, objects: ObjectsDir | undefined = this.active): TreeObject {
    const known = REMEMBERED.get(this.dir)?.get(hex);
    if (known !== undefined) return known;
    if (objects === undefined) return this.withObjects(false, (opened) => this.readObject(hex, opened));
    const file = this.objectPath(hex);
    let bytes: Buffer | null;
    let packed = false;
    try {
      bytes = objects.fan(hex.slice(0, 2), false)?.readFile(hex.slice(2), { maxBytes: MAX_OBJECT_BYTES }) ?? null;
      if (bytes === null) {
        bytes = objects.packedBytes(hex); // checked against its name by the pack's reader
        packed = bytes !== null;
      }
    } catch (e) {
      if (e instanceof CairnError) throw e;
      throw new CairnError('ERR_IO', `cannot read inventory object ${file}: ${(e as Error).message}`, { path: file, cause: e });
    }
    if (bytes === null) {
      throw new CairnError('ERR_NOT_FOUND', `inventory object ${hex} is missing (${file}); it may have been pruned — take a new snapshot`, { path: file });
    }
    if (!packed && createHash('sha256').update(bytes).digest('hex') !== hex) {
      throw new CairnError('ERR_CORRUPT', `inventory object ${file} does not match its digest; delete it and take a new snapshot`, { path: file });
    }
    const object = parseJsonBounded(decodeUtf8Strict(bytes, file), { file, what: 'inventory object' }) as TreeObject;
    this.remember(hex, object);
    return object;
  }

  /** True when the root object of `digest` is present. */
  has(digest: string): boolean {
    const hex = hexOf(digest);
    return this.withObjects(false, (objects) => objects.fan(hex.slice(0, 2), false)?.lstat(hex.slice(2))?.isFile() === true || objects.packed().has(hex) || objects.packed(true).has(hex));
  }

  /** Every entry of a stored inventory, sorted by UTF-8 byte order of path. */
  get(digest: string): InventoryEntry[] {
    const out: InventoryEntry[] = [];
    this.rootOnDisk(hexOf(digest));
    this.withObjects(false, (objects) => this.collect(hexOf(digest), '', out, objects));
    out.sort((a, b) => compareUtf8(a.path, b.path));
    return out;
  }

  private collect(hex: string, prefix: string, out: InventoryEntry[], objects: ObjectsDir): void {
    for (const entry of this.readObject(hex, objects).entries) {
      const entryPath = prefix + entry.name;
      if (isDirRef(entry)) this.collect(entry.tree, `${entryPath}/`, out, objects);
      else {
        const item: InventoryEntry = { path: entryPath, bytes: entry.bytes, mode: entry.mode, kind: entry.kind };
        if (entry.sha256 !== undefined) item.sha256 = entry.sha256;
        out.push(item);
      }
    }
  }

  /**
   * Files added, modified and deleted from inventory `from` to inventory `to`: the paths of
   * `changedEntries` (one walk for both: a post asks for this pair's diff, then its content
   * capture and its review for the entries). A file is modified when its digest differs (when
   * both sides have one; otherwise size or kind), or its mode or kind changed; a directory that
   * became a file (or the reverse) is its files deleted and the file added.
   */
  diff(from: string, to: string): WorkingTreeChanges {
    const changes: WorkingTreeChanges = { added: [], modified: [], deleted: [] };
    // changedEntries is in path order, so each list is too
    for (const c of this.changedEntries(from, to)) (c.before === null ? changes.added : c.after === null ? changes.deleted : changes.modified).push(c.path);
    return changes;
  }

  /**
   * Every path whose entry differs between `from` and `to` (`before`/`after` null where the path
   * is absent), in UTF-8 byte order of path. Equal subtrees (same digest) are skipped unread.
   * The last answer of this process for a store directory is kept (both inventories are
   * immutable, so it holds while both roots are on disk) and handed out as copies: a post's
   * diff, its content capture and its review each ask for the same pair in turn.
   */
  changedEntries(from: string, to: string): EntryChange[] {
    const kept = LAST_CHANGES.get(this.dir);
    if (kept !== undefined && kept.from === from && kept.to === to && this.has(from) && this.has(to)) return copyChanges(kept.changes);
    const out: EntryChange[] = [];
    const byPath = new Map<string, { before: InventoryEntry | null; after: InventoryEntry | null }>();
    const note = (entry: InventoryEntry, side: 'before' | 'after'): void => {
      const slot = byPath.get(entry.path) ?? { before: null, after: null };
      slot[side] = entry;
      byPath.set(entry.path, slot);
    };
    this.rootOnDisk(hexOf(from));
    this.rootOnDisk(hexOf(to));
    this.withObjects(false, () => this.changedWalk(hexOf(from), hexOf(to), '', note));
    for (const [p, slot] of byPath) out.push({ path: p, ...slot });
    out.sort((a, b) => compareUtf8(a.path, b.path));
    if (out.length <= LAST_CHANGES_MAX) LAST_CHANGES.set(this.dir, { from, to, changes: copyChanges(out) });
    else LAST_CHANGES.delete(this.dir);
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
    if (this.active === undefined) {
      this.rootOnDisk(hexOf(treeHexOrDigest));
      return this.withObjects(false, () => this.forEachFile(treeHexOrDigest, prefix, visit, seen));
    }
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
    if (this.active === undefined) return this.withObjects(false, () => this.lookup(digest, paths));
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
    this.rootOnDisk(rootHex);
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
    const refs = this.open('refs', false);
    try {
      for (const entry of refs?.entries() ?? []) {
        if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
        const digest = liveRefDigest(refs!, entry.name);
        if (digest !== null) roots.add(digest);
      }
    } finally {
      refs?.close();
    }
    return [...roots];
  }

  /** Records that `snapshotFile` references `digest`, so pruning keeps that inventory. */
  addRef(snapshotFile: string, digest: string): void {
    const absolute = path.resolve(snapshotFile);
    const name = createHash('sha256').update(absolute).digest('hex');
    const refs = this.open('refs', true)!;
    try {
      refs.writeFile(`${name}.json`, `${JSON.stringify({ snapshotFile: absolute, digest })}\n`);
    } finally {
      refs.close();
    }
    // The ref keeps the inventory from now on: the put's mark is no longer needed.
    this.release(digest);
  }

  /**
   * Drops the mark of an inventory this process put: once a ref keeps it, or when no snapshot
   * will reference it (restore's look at the live tree), whose mark would otherwise keep it until
   * a prune found its owner gone; its objects then go with the next prune like any unreferenced.
   */
  release(digest: string): void {
    const mark = this.pendingMarks.get(digest);
    if (mark === undefined) return;
    this.pendingMarks.delete(digest);
    const pending = this.open(PENDING_DIR, false);
    try {
      pending?.unlink(mark);
    } finally {
      pending?.close();
    }
  }

  /**
   * Garbage collection by reachability: the roots are the inventories that existing snapshot
   * files still reference; every object not reachable from a root, and older than `graceMs`
   * (so an inventory being written right now by another process is safe), is deleted. Only
   * regular files inside the store are ever deleted; links and strays are left alone.
   */
  prune(options: { graceMs?: number; dryRun?: boolean } = {}): InventoryPruneResult {
    const graceMs = options.graceMs ?? 15 * 60 * 1000;
    const dryRun = options.dryRun ?? false;
    const home = ContainedDir.open(this.root, this.parts, { create: false });
    if (home === null) return { kept: 0, deleted: 0, bytesFreed: 0, refsRemoved: 0, dryRun };
    REMEMBERED.delete(this.dir); // a prune reads what is on disk, and may delete what was remembered
    LAST_CHANGES.delete(this.dir);
    MEMORY.delete(this.dir);
    try {
      if (!dryRun) this.beginPrune(home);
      try {
        return this.pruneUnreachable(home, graceMs, dryRun);
      } finally {
        if (!dryRun) home.unlink(PRUNING_FILE);
      }
    } finally {
      REMEMBERED.delete(this.dir);
      home.close();
    }
  }

  /** Writes the `pruning` marker (waiting for another prune to end) and bumps the epoch. */
  private beginPrune(home: ContainedDir): void {
    const owner = markOwner();
    const waitedSince = Date.now();
    for (;;) {
      try {
        home.writeFile(PRUNING_FILE, `${JSON.stringify(owner)}\n`, { exclusive: true, fsync: false });
        break;
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') throw e;
      }
      const other = livePruneOwner(home);
      if (other !== null && Date.now() - waitedSince > PRUNE_WAIT_MS) {
        throw new CairnError('ERR_LOCK_TIMEOUT', `another prune of ${this.dir} (pid ${other.pid}, since ${other.startedAt}) is still running; wait for it to finish and try again`, { path: this.dir });
      }
      if (other !== null) sleepSync(POLL_MS);
    }
    home.writeFile(EPOCH_FILE, `${Number(readEpoch(home)) + 1}\n`, { fsync: false });
  }

  /**
   * The roots a prune keeps from the pending marks: each named root whose owner lives or that is
   * younger than the grace period. Waits while a live put holds a mark without a root (it is
   * looking at objects); removes marks that keep nothing any more.
   */
  private pendingRoots(home: ContainedDir, graceMs: number, dryRun: boolean): string[] {
    const waitedSince = Date.now();
    for (;;) {
      const pending = home.child(PENDING_DIR, { create: false });
      if (pending === null) return [];
      try {
        const roots: string[] = [];
        let busy: MarkOwner | null = null;
        let beingWritten: string | null = null;
        for (const entry of pending.entries()) {
          if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
          const mark = readMark(pending, entry.name);
          const ageMs = Date.now() - (pending.lstat(entry.name)?.mtimeMs ?? 0);
          // A put's first write of its mark is not atomic with its name: an unreadable fresh mark
          // is a put beginning, to wait for like any mark without a root. Removing it (as a grace
          // of 0 once did) let that put go on unmarked and the next prune delete its objects.
          if (mark === null && ageMs < UNREADABLE_MARK_MS) {
            beingWritten = entry.name;
            continue;
          }
          // This process's own mark without a root is a leftover: puts are synchronous, none is under way here.
          const alive = mark !== null && ownerAlive(mark) && !(mark.pid === process.pid && mark.digest === undefined);
          const young = ageMs < graceMs;
          if (mark !== null && alive && mark.digest === undefined) busy = mark;
          else if (mark !== null && typeof mark.digest === 'string' && (alive || young)) roots.push(mark.digest);
          else if (!alive && !young && !dryRun) pending.unlink(entry.name);
        }
        if ((busy === null && beingWritten === null) || dryRun) return roots;
        if (Date.now() - waitedSince > PRUNE_WAIT_MS) {
          const who = busy !== null ? `pid ${busy.pid}, since ${busy.startedAt}` : `mark ${beingWritten ?? ''}`;
          throw new CairnError('ERR_LOCK_TIMEOUT', `an inventory is being stored in ${this.dir} (${who}) and has not finished; try the prune again`, { path: this.dir });
        }
      } finally {
        pending.close();
      }
      sleepSync(POLL_MS);
    }
  }

  private pruneUnreachable(home: ContainedDir, graceMs: number, dryRun: boolean): InventoryPruneResult {
    // The marks before the refs: addRef writes its ref before it removes the mark, so a root is
    // seen in one or the other.
    const roots = new Set<string>(this.pendingRoots(home, graceMs, dryRun));
    let refsRemoved = 0;
    const refs = this.open('refs', false);
    try {
      for (const entry of refs?.entries() ?? []) {
        if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
        const digest = liveRefDigest(refs!, entry.name);
        if (digest !== null) roots.add(digest);
        else {
          refsRemoved++;
          if (!dryRun) refs!.unlink(entry.name);
        }
      }
    } finally {
      refs?.close();
    }
    return this.withObjects(false, (objects) => {
      const reachable = new Set<string>();
      const mark = (hex: string): void => {
        if (reachable.has(hex)) return;
        reachable.add(hex);
        let object: TreeObject;
        try {
          object = this.readObject(hex, objects);
        } catch {
          return; // a missing or corrupt object cannot keep anything else alive
        }
        for (const entry of object.entries) if (isDirRef(entry)) mark(entry.tree);
      };
      for (const digest of roots) {
        try {
          mark(hexOf(digest));
        } catch {
          // a mark naming no digest keeps nothing
        }
      }

      const cutoff = Date.now() - graceMs;
      let kept = 0;
      let deleted = 0;
      let bytesFreed = 0;
      forEachObject(objects, (fan, name, stat) => {
        // (a grace of 0 keeps nothing by age: a file's time is finer than Date.now(), so one written this millisecond would look younger than "now")
        if (reachable.has(fan.name + name) || (graceMs > 0 && stat.mtimeMs > cutoff)) {
          kept++;
          return;
        }
        deleted++;
        bytesFreed += stat.size;
        if (!dryRun) fan.dir.unlink(name);
      });
      // Packs by the same rule: dead ones deleted, partly live ones rewritten with the live objects.
      const packs = objects.packed(true).gc(reachable, { graceMs, dryRun });
      return { kept: kept + packs.objectsKept, deleted: deleted + packs.objectsDeleted, bytesFreed: bytesFreed + packs.bytesFreed, refsRemoved, dryRun };
    });
  }

  /** Number and total size of stored objects. */
  usage(): InventoryUsage {
    let objects = 0;
    let bytes = 0;
    this.withObjects(false, (dir) => {
      forEachObject(dir, (_fan, _name, stat) => {
        objects++;
        bytes += stat.size;
      });
      const packed = dir.packed().du();
      objects += packed.objects;
      bytes += packed.storedBytes;
    });
    const refs = this.open('refs', false);
    try {
      return { objects, bytes, refs: (refs?.entries() ?? []).filter((e) => e.isFile() && e.name.endsWith('.json')).length };
    } finally {
      refs?.close();
    }
  }
}

/** Every regular file in a fan-out directory of `objects/`, with its lstat; links and other strays are skipped, never followed. */
function forEachObject(objects: ObjectsDir, visit: (fan: { name: string; dir: ContainedDir }, name: string, stat: fs.Stats) => void): void {
  if (objects.dir === null) return;
  for (const fanEntry of objects.dir.entries()) {
    if (!fanEntry.isDirectory() || !/^[0-9a-f]{2}$/.test(fanEntry.name)) continue;
    let fan: ContainedDir | null;
    try {
      fan = objects.fan(fanEntry.name, false);
    } catch (e) {
      if (e instanceof ContainmentError) continue; // swapped for a link or a file meanwhile: not ours
      throw e;
    }
    if (fan === null) continue;
    for (const entry of fan.entries()) {
      if (!entry.isFile() || !/^[0-9a-f]{62}$/.test(entry.name)) continue;
      const stat = fan.lstat(entry.name);
      if (stat === null || !stat.isFile()) continue; // removed or swapped meanwhile
      visit({ name: fanEntry.name, dir: fan }, entry.name, stat);
    }
  }
}

const PENDING_DIR = 'pending';
/** The packs of incremental puts (a content store of their objects, see the top). */
const PACKED_DIR = 'packed';
/** Fewer new objects than this are written loose: a pack saves nothing on a few files. */
const PACK_MIN = 8;
const PRUNING_FILE = 'pruning';
const EPOCH_FILE = 'prune-epoch';
const KNOWN_FILE = 'known-objects';
/** Objects remembered (see readObject), by store directory, then by name. */
const REMEMBERED = new Map<string, Map<string, TreeObject>>();

/** A path two inventories disagree on, with its entry on each side (null where absent). */
export interface EntryChange {
  path: string;
  before: InventoryEntry | null;
  after: InventoryEntry | null;
}
/** The last changedEntries answer, by store directory (see changedEntries). */
const LAST_CHANGES = new Map<string, { from: string; to: string; changes: EntryChange[] }>();
/** Longest answer kept: a long-running process holds it until its next walk (~150 bytes a path). */
const LAST_CHANGES_MAX = 50_000;

function copyEntry(e: InventoryEntry | null): InventoryEntry | null {
  return e === null ? null : { ...e };
}

/** Copies down to the entries: what one caller does with its answer cannot change another's. */
function copyChanges(changes: readonly EntryChange[]): EntryChange[] {
  return changes.map((c) => ({ path: c.path, before: copyEntry(c.before), after: copyEntry(c.after) }));
}
/**
 * The last put of this process in each store directory, to patch in the next (see PutMemory):
 * trusted only in the prune epoch it was made in, and while its root is on disk (the guard of
 * known-objects); a prune here drops it.
 */
const MEMORY = new Map<string, PutMemory>();
/** Objects a memory may know on disk before it is dropped (the next put is plain and starts afresh). */
const MEMORY_OBJECTS_MAX = 200_000;
/** How many objects the process remembers before it starts over: ~2x the directories of a 250k-file tree. */
const OBJECT_CACHE_MAX = 100_000;
/** The last put's epoch, entries (putKey) and root: a put of the same entries in the same epoch stores nothing. */
const LAST_PUT_FILE = 'last-put';
/** Bumped whenever the objects' form (canonicalTree) or the key's text changes. */
const PUT_KEY_VERSION = 'cairn.inventory-put/1';
/** How long a put waits for a running prune, and a prune for the puts under way, before giving up. */
const PRUNE_WAIT_MS = 120_000;
const POLL_MS = 20;
/** An unreadable mark younger than this is being written (a put's first write); older, it is damaged. */
const UNREADABLE_MARK_MS = 10_000;
const MAX_MARK_BYTES = 4096;

/** Who holds a pending mark or the prune marker (what ownerDeathReason needs to tell a dead one). */
interface MarkOwner {
  pid: number;
  host: string;
  startedAt: string;
  processStart?: number;
}

function markOwner(): MarkOwner {
  const owner: MarkOwner = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
  const start = processStartTicks(process.pid);
  if (start !== undefined) owner.processStart = start;
  return owner;
}

/** A mark or marker read back: its owner, and the root it keeps (pending marks that name one). */
function readMark(dir: ContainedDir, name: string): (MarkOwner & { digest?: string }) | null {
  try {
    const bytes = dir.readFile(name, { maxBytes: MAX_MARK_BYTES });
    if (bytes === null) return null;
    const v = JSON.parse(bytes.toString('utf8')) as Partial<MarkOwner & { digest: unknown }>;
    if (typeof v.pid !== 'number' || typeof v.host !== 'string' || typeof v.startedAt !== 'string') return null;
    return v as MarkOwner & { digest?: string };
  } catch {
    return null; // being written (a put's first write is not atomic with its name) or damaged
  }
}

function ownerAlive(owner: MarkOwner): boolean {
  return ownerDeathReason({ token: '', ...owner }) === undefined;
}

/** The owner of the prune under way, or null; a marker left by a prune that died is removed. */
function livePruneOwner(home: ContainedDir): MarkOwner | null {
  if (home.lstat(PRUNING_FILE) === null) return null;
  const owner = readMark(home, PRUNING_FILE);
  if (owner !== null && ownerAlive(owner)) return owner; // (written whole by link(2): unreadable means damaged)
  home.unlink(PRUNING_FILE);
  return null;
}

function readEpoch(home: ContainedDir): string {
  try {
    const text = home.readFile(EPOCH_FILE, { maxBytes: 64 })?.toString('latin1').trim() ?? '0';
    return /^\d+$/.test(text) ? text : '0';
  } catch {
    return '0';
  }
}

/** Runs `fn` on the child directory `name` of `home` (created when missing), closing it after. */
function withChild<T>(home: ContainedDir, name: string, fn: (dir: ContainedDir) => T): T {
  const dir = home.child(name, { create: true })!;
  try {
    return fn(dir);
  } finally {
    dir.close();
  }
}

/**
 * Makes the new object file `name` in `fan` (exclusive, no link followed) with `bytes`; false when
 * the name was taken meanwhile. A failed write takes its partial file away.
 */
function createObject(fan: ContainedDir, name: string, bytes: Buffer): boolean {
  let fd: number;
  try {
    fd = fan.createFile(name);
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') return false;
    throw e;
  }
  try {
    fs.writeFileSync(fd, bytes);
  } catch (e) {
    fs.closeSync(fd);
    fan.unlink(name);
    throw e;
  }
  fs.closeSync(fd);
  return true;
}

/** Blocks this thread for `ms` (the store's API is synchronous). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A digest of the entries as put receives them, every field that reaches an object: equal keys,
 * equal inventories. Paths are length-prefixed, so no two lists share a text whatever a path holds
 * (a file system's never hold a NUL, but put takes any list), and the text is hashed as UTF-8
 * unless a path holds a surrogate code unit (UTF-8 would merge two lone ones), then as UTF-16:
 * the tags keep the two kinds of text apart. ~5x
 * cheaper than building the objects (50k entries: ~15 ms against ~80 ms).
 */
function putKey(entries: readonly InventoryEntry[]): string {
  return putKeyAs(entries, 'utf8') ?? (putKeyAs(entries, 'utf16le') as string);
}

function putKeyAs(entries: readonly InventoryEntry[], encoding: 'utf8' | 'utf16le'): string | null {
  const hash = createHash('sha256').update(`${PUT_KEY_VERSION} ${encoding}\n`, 'latin1');
  let chunk = '';
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as InventoryEntry;
    chunk += `${e.path.length}:${e.path}\0${e.bytes}\0${e.mode}\0${e.kind}\0${e.sha256 ?? '-'}\n`;
    if ((i & 4095) === 4095 || i === entries.length - 1) {
      if (encoding === 'utf8' && SURROGATE.test(chunk)) return null;
      hash.update(chunk, encoding);
      chunk = '';
    }
  }
  return hash.digest('hex');
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Serialises and names the object of `node` and, first, of every directory below it (children
 * before parents). `last`: the directory at the same path in this process's last put, whose
 * object is taken again when its files and subdirectory objects are the same (sameListing).
 */
function hashNode(node: BuildNode, out: Map<string, string>, parsed: Map<string, TreeObject>, last?: BuildNode): string {
  const children: DirRef[] = [];
  for (const [name, child] of node.dirs) children.push({ name, tree: hashNode(child, out, parsed, last?.dirs.get(name)) });
  let made = last?.made;
  if (made === undefined || !sameListing(made, node.files, children)) made = makeObject(node.files, children);
  node.made = made;
  out.delete(made.hex); // an equal directory met before moves after this one's children
  out.set(made.hex, made.text);
  parsed.set(made.hex, made.object);
  return made.hex;
}

function sameListing(made: MadeObject, files: readonly FileNode[], children: readonly DirRef[]): boolean {
  if (made.files.length !== files.length || made.children.length !== children.length) return false;
  for (let i = 0; i < files.length; i++) {
    const a = made.files[i] as FileNode;
    const b = files[i] as FileNode;
    if (a.name !== b.name || a.bytes !== b.bytes || a.sha256 !== b.sha256 || a.mode !== b.mode || a.kind !== b.kind) return false;
  }
  for (let i = 0; i < children.length; i++) {
    const a = made.children[i] as DirRef;
    const b = children[i] as DirRef;
    if (a.name !== b.name || a.tree !== b.tree) return false;
  }
  return true;
}

function asEntry(node: FileNode, entryPath: string): InventoryEntry {
  const item: InventoryEntry = { path: entryPath, bytes: node.bytes, mode: node.mode, kind: node.kind };
  if (node.sha256 !== undefined) item.sha256 = node.sha256;
  return item;
}

/** The largest pre/post snapshot file a ref's liveness check reads. */
const MAX_SNAPSHOT_FILE_BYTES = 256 * 1024 * 1024;

/**
 * The digest a ref protects, or null when its snapshot file no longer references it. The ref is
 * read through its opened directory; the snapshot file it names (an iteration directory, which
 * may lie anywhere) is only read, non-blocking, without following a link at its name, and only
 * decides what is kept.
 */
function liveRefDigest(refs: ContainedDir, name: string): string | null {
  try {
    const where = refs.shown(name);
    const refBytes = refs.readFile(name, { maxBytes: MAX_REF_BYTES });
    if (refBytes === null) return null;
    const ref = parseJsonBounded(decodeUtf8Strict(refBytes, where), { file: where, maxDepth: 4 }) as { snapshotFile?: unknown; digest?: unknown };
    if (typeof ref.snapshotFile !== 'string' || typeof ref.digest !== 'string' || !path.isAbsolute(ref.snapshotFile)) return null;
    const fd = fs.openSync(ref.snapshotFile, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    let text: string;
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile() || st.size > MAX_SNAPSHOT_FILE_BYTES) return null;
      text = decodeUtf8Strict(fs.readFileSync(fd), ref.snapshotFile);
    } finally {
      fs.closeSync(fd);
    }
    const snapshot = parseJsonBounded(text, { file: ref.snapshotFile }) as { inventory?: { digest?: unknown } } | null;
    return snapshot?.inventory?.digest === ref.digest ? ref.digest : null;
  } catch {
    return null;
  }
}
