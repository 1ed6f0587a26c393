import { compareUtf8 } from '../../core/utf8.js';
import { parseGitignore, type GitignoreFile } from '../rules/gitignore.js';
import { prefixOf, type Prepared } from '../walk/prepare.js';
import type { RacyFrom } from '../rules/racy.js';
import { fileReader, processFile } from '../io/read-file.js';
import type { CachedDir, Listing } from '../cache/stat-cache.js';
import { LINK_ROW, type StoredResult } from '../cache/result.js';
import { classifyEntry, listDirectory, V_DIR, V_FILE, V_OUT } from '../walk/walk.js';

const T_FILE = 'f'.charCodeAt(0);
const T_DIR = 'd'.charCodeAt(0);
/** New files the update adds (and reads on the main thread) before the walk, hashing on every core, is the better way. */
const NEW_FILES_MAX = 2000;

/**
 * Brings a stored result up to date with directories whose stat moved and .gitignore files
 * whose rules changed, without walking the tree. The common agent step writes a file by rename
 * (same names, new mtime), creates a few files or deletes some: each moved directory is listed
 * again and compared with its cached listing; same names and types change nothing, new regular
 * files the ignore rules keep are added (as rows to read), removed files and whole removed
 * directories are dropped. Where the rules changed (`newRules`: directories whose .gitignore was
 * edited, with the text read for it; or a .gitignore appeared or went), that directory's subtree
 * is classified again from the cached listings. A new directory is listed, with all it holds,
 * and classified the same way. Anything else (a new symlink, a type change, a new name to report
 * as skipped, a new directory inside a subtree being classified again) returns null: the walk
 * decides.
 *
 * Nothing is changed until the whole update is known to apply. Then `p.previous` (file table,
 * directory listings, entry rows), `stored` and `p.verified` are updated in place, and the rows
 * to read (the verified pass's changed rows, renumbered, plus the new files) are returned, with
 * whether the list of entries itself changed (then a digest stored with the result is stale)
 * and, for each new entry, the index it had before (-1: added).
 */
export function applyDirChanges(p: Prepared, stored: StoredResult, changedFiles: readonly number[], changedDirs: ReadonlySet<string>, newRules: ReadonlyMap<string, string>, racyFrom: RacyFrom): { changed: number[]; entriesChanged: boolean; entryFrom: Int32Array; rulesRead: ReadonlyMap<string, Buffer> } | null {
  const prev = p.previous;
  const t = prev.files;
  const entryRows = prev.entryRows;
  if (entryRows === undefined) return null;
  const prefix = prefixOf(p.rootReal);
  const staged = new Map<string, CachedDir>();
  const removedDirs = new Set<string>();
  const removedPaths = new Set<string>();
  const added: string[] = [];
  const listingOf = (rel: string): Listing | undefined => (staged.get(rel) ?? prev.dirs.get(rel))?.listing;
  // Asked for every row of the table: a set lookup per ancestor, not a scan of every removed directory.
  const removedOrUnder = (rel: string): boolean => {
    if (removedDirs.size === 0) return false;
    for (let at = rel.length; at > 0; at = rel.lastIndexOf('/', at - 1)) if (removedDirs.has(rel.slice(0, at))) return true;
    return false;
  };
  const join = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);
  // An entry's path: its row's, or its link's (renumbering rows below never changes a link's path).
  const storedPath = (e: number): string => (e >= LINK_ROW ? stored.links[e - LINK_ROW]![0] : t.paths[e]!);
  /** The run [from, to) of stored entries under directory `dir` ('' holds all): entries are in path order. */
  const entriesUnder = (dir: string): [number, number] => {
    if (dir === '') return [0, entryRows.length];
    const prefix = `${dir}/`;
    let lo = 0;
    let hi = entryRows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareUtf8(storedPath(entryRows[mid]!), prefix) < 0) lo = mid + 1;
      else hi = mid;
    }
    let to = lo;
    while (to < entryRows.length && storedPath(entryRows[to]!).startsWith(prefix)) to++;
    return [lo, to];
  };
  const rules = new RulesReader(p, newRules, listingOf);
  const reclassify = new Set(newRules.keys());
  const diffs: { dir: string; added: [string, number][]; removed: [string, number][] }[] = [];

  // 1. List every moved directory again. Parents sort before their children, so a removed
  //    directory is known before its subdirectories come up.
  for (const dir of [...changedDirs].sort()) {
    if (removedOrUnder(dir)) continue;
    // Null: gone (but not through a parent listed again), or unreadable.
    const listed = listDirectory(dir === '' ? p.rootReal : prefix + dir, racyFrom);
    if (listed === null) return null;
    const now = listed.listing;
    const before = prev.dirs.get(dir)!.listing;
    const old = new Map<string, number>();
    for (let i = 0; i < before.names.length; i++) old.set(before.names[i]!, before.types.charCodeAt(i));
    const diff = { dir, added: [] as [string, number][], removed: [] as [string, number][] };
    for (let i = 0; i < now.names.length; i++) {
      const name = now.names[i]!;
      const type = now.types.charCodeAt(i);
      const was = old.get(name);
      old.delete(name);
      if (was === type) continue;
      if (was !== undefined) return null; // a type change
      diff.added.push([name, type]);
    }
    for (const [name, type] of old) {
      diff.removed.push([name, type]);
      if (type === T_DIR) removedDirs.add(join(dir, name));
    }
    // A .gitignore that appeared or went changes the rules of the whole subtree.
    if (p.respectGitignore && [...diff.added, ...diff.removed].some(([name]) => name === '.gitignore')) reclassify.add(dir);
    diffs.push(diff);
    staged.set(dir, listed);
  }

  // 2. Subtrees whose rules changed are classified again whole; the outermost ones suffice.
  const roots = [...reclassify].sort().filter((r, i, all) => !all.slice(0, i).some((q) => within(r, q)));
  const inRoots = (rel: string): boolean => roots.some((r) => within(rel, r));

  // A directory that was not there before: listed (stat first, as the walk does, so a change
  // racing the listing shows next time) with everything under it, and classified as the walk
  // would. A symlink, a name to report or more new files than re-reading on this thread suits
  // (the walk hashes on every core) leave it to the walk.
  const addNewDir = (rel: string): boolean => {
    const listed = listDirectory(prefix + rel, racyFrom);
    if (listed === null) return false;
    const listing = listed.listing;
    staged.set(rel, listed);
    const stack = rules.stackFor(rel);
    if (stack === null) return false;
    for (let i = 0; i < listing.names.length; i++) {
      const name = listing.names[i]!;
      const child = join(rel, name);
      const v = classifyEntry(p, stack, child, name, listing.types.charCodeAt(i));
      if (v === V_OUT) continue;
      if (v === V_DIR) {
        if (!addNewDir(child)) return false;
      } else if (v === V_FILE && added.length < NEW_FILES_MAX) added.push(child);
      else return false;
    }
    return true;
  };

  // 3. Elsewhere, only the names that came or went matter.
  for (const { dir, added: came, removed: went } of diffs) {
    if (inRoots(dir)) continue;
    for (const [name, type] of came) {
      const rel = join(dir, name);
      const stack = rules.stackFor(dir);
      if (stack === null) return null;
      const v = classifyEntry(p, stack, rel, name, type);
      if (v === V_OUT) continue;
      if (v === V_DIR) {
        if (!addNewDir(rel)) return null;
        continue;
      }
      if (v !== V_FILE || added.length >= NEW_FILES_MAX) return null; // a symlink, or a skip to report
      added.push(rel);
    }
    for (const [name, type] of went) if (type !== T_DIR) removedPaths.add(join(dir, name));
  }

  // 4. Classify every entry under each root with the rules now in force, from the cached listings.
  if (roots.length > 0) {
    const kept = new Map<string, number>();
    const keptSkips = new Set<string>();
    const visit = (dir: string): boolean => {
      const listing = listingOf(dir);
      const stack = rules.stackFor(dir);
      if (listing === undefined || stack === null) return false;
      for (let i = 0; i < listing.names.length; i++) {
        const name = listing.names[i]!;
        const rel = join(dir, name);
        const type = listing.types.charCodeAt(i);
        const v = classifyEntry(p, stack, rel, name, type);
        if (typeof v !== 'number') keptSkips.add(rel);
        else if (v === V_DIR) {
          if (listingOf(rel) === undefined || !visit(rel)) return false; // never listed (was ignored): the walk lists it
        } else if (v === V_OUT) {
          // A directory the walk had entered and the rules now leave out goes, with all under it.
          if (type === T_DIR && prev.dirs.has(rel)) removedDirs.add(rel);
        } else kept.set(rel, v);
      }
      return true;
    };
    for (const r of roots) if (!visit(r)) return null;
    // Entries are in path order: those under a root are one run of them.
    for (const r of roots) {
      const [from, to] = entriesUnder(r);
      for (let k = from; k < to; k++) {
        const path = storedPath(entryRows[k]!);
        if (!kept.delete(path)) removedPaths.add(path);
      }
    }
    for (const [rel, v] of kept) {
      if (v !== V_FILE) return null; // a symlink newly in: the walk resolves it
      added.push(rel);
    }
    const skipsBefore = stored.skipped.filter((sk) => inRoots(sk.path)).map((sk) => sk.path);
    if (skipsBefore.length !== keptSkips.size || skipsBefore.some((x) => !keptSkips.has(x))) return null;
  }

  // Rows of removed files and of everything under removed directories go (a .gitignore that is
  // no longer an entry but still sets rules keeps its row); the rest keep their order. When
  // nothing went (files added, rules edited without effect), every row and entry stays as it is.
  const nothingGone = removedPaths.size === 0 && removedDirs.size === 0;
  const entryGone = (rel: string): boolean => removedPaths.has(rel) || removedOrUnder(rel);
  const rowGone = (rel: string): boolean => removedOrUnder(rel) || (removedPaths.has(rel) && !rules.isRulesFile(rel));
  const newIndex = new Int32Array(nothingGone ? 0 : t.size);
  let keptRows = nothingGone ? t.size : 0;
  if (!nothingGone) for (let i = 0; i < t.size; i++) newIndex[i] = rowGone(t.paths[i]!) ? -1 : keptRows++;
  const rowNow = (i: number): number => (nothingGone ? i : newIndex[i]!);
  const links = nothingGone ? stored.links : stored.links.map(([path, target, row]): [string, string | null, number] => [path, target, row < 0 ? row : newIndex[row]!]);
  let keptEntries: ArrayLike<number> = entryRows;
  let keptFrom: ArrayLike<number> | null = null; // null: entry j came from index j
  if (!nothingGone) {
    const entries: number[] = [];
    const from: number[] = [];
    for (let k = 0; k < entryRows.length; k++) {
      const e = entryRows[k]!;
      if (entryGone(storedPath(e))) continue;
      entries.push(e >= LINK_ROW ? e : newIndex[e]!);
      from.push(k);
    }
    keptEntries = entries;
    keptFrom = from;
  }
  const skipped = nothingGone ? stored.skipped : stored.skipped.filter((sk) => !entryGone(sk.path));

  // Commit: compact the table, add the new files (a .gitignore newly in already has its row;
  // others get a racy row: read before use), merge the entries.
  if (!nothingGone) compactTable(p, newIndex, keptRows);
  added.sort(compareUtf8);
  // Rows already there, looked up once; each appended row joins them (a path has one row).
  const known = t.rowsOf(roots.length > 0 ? [...added, ...rules.shas.keys()] : rules.shas.keys());
  const addedRows = added.map((rel) => {
    const row = (roots.length > 0 ? known.get(rel) : undefined) ?? t.appendUnread(rel);
    known.set(rel, row);
    return row;
  });
  // Every .gitignore read for its rules gets a row, entry or not (as the walk records it), so
  // the lstat pass sees it when it is edited next.
  const rulesRows: number[] = [];
  for (const rel of rules.shas.keys()) if (known.get(rel) === undefined) rulesRows.push(t.appendUnread(rel));
  const merged = new Uint32Array(keptEntries.length + added.length);
  const entryFrom = new Int32Array(merged.length).fill(-1);
  let a = 0;
  let k = 0;
  for (let j = 0; j < keptEntries.length; j++) {
    const e = keptEntries[j]!;
    const path = storedPath(e);
    while (a < added.length && compareUtf8(added[a]!, path) < 0) merged[k++] = addedRows[a++]!;
    entryFrom[k] = keptFrom === null ? j : keptFrom[j]!;
    merged[k++] = e;
  }
  while (a < added.length) merged[k++] = addedRows[a++]!;
  prev.entryRows = merged;
  stored.links = links;
  stored.skipped = skipped;
  let dirKeysChanged = false;
  for (const [dir, d] of staged) {
    if (!prev.dirs.has(dir)) dirKeysChanged = true;
    prev.dirs.set(dir, d);
  }
  if (removedDirs.size > 0) {
    for (const dir of [...prev.dirs.keys()]) {
      if (removedOrUnder(dir)) {
        prev.dirs.delete(dir);
        dirKeysChanged = true;
      }
    }
  }
  // The loaded string table (file paths, then directory paths) holds while neither list changed.
  if (dirKeysChanged || !nothingGone || t.size !== keptRows) delete prev.pathsTable;
  const changed = new Set<number>();
  for (const i of changedFiles) if (rowNow(i) >= 0) changed.add(rowNow(i));
  for (const i of addedRows) changed.add(i);
  for (const i of rulesRows) changed.add(i);
  return { changed: [...changed], entriesChanged: added.length > 0 || keptEntries.length !== entryRows.length, entryFrom, rulesRead: rules.shas };
}

/** `rel` is `dir` or inside it ('' holds everything). */
function within(rel: string, dir: string): boolean {
  return dir === '' || rel === dir || rel.startsWith(`${dir}/`);
}

/** Drops the rows whose newIndex is -1 from the file table (and the verified marks), keeping order. */
function compactTable(p: Prepared, newIndex: Int32Array, kept: number): void {
  const t = p.previous.files;
  const v = p.verified;
  if (kept === t.size) return;
  const nextVerified = v === undefined ? undefined : new Uint8Array(kept);
  t.keepRows((i) => newIndex[i]! >= 0);
  if (v !== undefined && nextVerified !== undefined) {
    for (let i = 0; i < newIndex.length; i++) if (newIndex[i]! >= 0) nextVerified[newIndex[i]!] = v[i]!;
    p.verified = nextVerified;
  }
}

/**
 * The .gitignore rules in force inside a directory: those of the root and of every directory
 * down to it, from the current listings. A .gitignore whose new text was just read (and
 * recorded) for `newRules` is parsed from that text, so the rules match the recorded digest;
 * the others are read again (they are few and small). Null when one cannot be read: the walk
 * then reports it properly.
 */
class RulesReader {
  private readonly parsed = new Map<string, GitignoreFile | undefined | null>();
  /** sha256 of each .gitignore read here, by its path: a new one's row must hold these very bytes. */
  readonly shas = new Map<string, Buffer>();
  /** .gitignore files are small: a 64 KiB buffer hashes one in a read. */
  private readonly reader = fileReader(true, Buffer.allocUnsafe(64 * 1024));

  constructor(
    private readonly p: Prepared,
    private readonly newRules: ReadonlyMap<string, string>,
    private readonly listingOf: (rel: string) => Listing | undefined,
  ) {}

  /** True when `rel` is a .gitignore the walk reads: a regular file named so in a listed directory. */
  isRulesFile(rel: string): boolean {
    const slash = rel.lastIndexOf('/');
    if (rel.slice(slash + 1) !== '.gitignore') return false;
    const listing = this.listingOf(slash < 0 ? '' : rel.slice(0, slash));
    const i = listing?.names.indexOf('.gitignore') ?? -1;
    return i >= 0 && listing!.types.charCodeAt(i) === T_FILE;
  }

  stackFor(dir: string): GitignoreFile[] | null {
    if (!this.p.respectGitignore) return [];
    const stack: GitignoreFile[] = [];
    const parts = dir === '' ? [] : dir.split('/');
    for (let depth = 0; depth <= parts.length; depth++) {
      const f = this.rulesOf(parts.slice(0, depth).join('/'));
      if (f === null) return null;
      if (f !== undefined) stack.push(f);
    }
    return stack;
  }

  /** The parsed .gitignore of one directory, undefined when it has none, null when unreadable. */
  private rulesOf(base: string): GitignoreFile | undefined | null {
    if (this.parsed.has(base)) return this.parsed.get(base);
    let out: GitignoreFile | undefined | null;
    const listing = this.listingOf(base);
    const gi = listing?.names.indexOf('.gitignore') ?? -1;
    if (listing === undefined) out = null;
    else if (gi < 0 || listing.types.charCodeAt(gi) !== T_FILE) out = undefined;
    else {
      let text = this.newRules.get(base);
      if (text === undefined) {
        const rel = base === '' ? '.gitignore' : `${base}/.gitignore`;
        const o = processFile(this.reader, prefixOf(this.p.rootReal) + rel, null, true);
        text = o.text;
        if (o.sha !== undefined) this.shas.set(rel, o.sha);
      }
      out = text === undefined ? null : parseGitignore(text, base);
    }
    this.parsed.set(base, out);
    return out;
  }
}
