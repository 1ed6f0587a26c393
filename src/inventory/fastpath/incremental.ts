import { compareUtf8 } from '../../core/utf8.js';
import { parseGitignore, type GitignoreFile } from '../rules/gitignore.js';
import { prefixOf, type Prepared } from '../walk/prepare.js';
import type { RacyFrom } from '../rules/racy.js';
import { fileReader, processFile } from '../io/read-file.js';
import type { CachedDir, FileTable, Listing } from '../cache/stat-cache.js';
import { LINK_ROW, type StoredResult } from '../cache/result.js';
import { classifyEntry, listDirectory, V_DIR, V_FILE, V_OUT } from '../walk/walk.js';
import { walk, type Walk } from './outcome.js';

const T_FILE = 'f'.charCodeAt(0);
const T_DIR = 'd'.charCodeAt(0);

/** What an update that applies did: see applyDirChanges. */
export interface DirUpdate {
  /** The rows to read: the lstat pass's changed rows, renumbered, plus the new files and rules files. */
  changed: number[];
  /** Entries came or went: a digest stored with the result is stale. */
  entriesChanged: boolean;
  /** For each entry now, its index in the stored result before (-1: added). */
  entryFrom: Int32Array;
  /** The .gitignore files read for their rules, by path, with their sha256. */
  rulesRead: ReadonlyMap<string, Buffer>;
  /** With rows removed from the file table: each old row's new index (-1: gone); null when none went. */
  rowsNow: Int32Array | null;
}

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
 * as skipped, a new directory inside a subtree being classified again) is a Walk, with its reason.
 *
 * The steps (Update) look and stage; nothing is changed until the whole update is known to
 * apply. Then, in one place (Update.commit), the cache (`p.previous`: file table, directory
 * listings, entry rows) and `stored` are brought up to date in place.
 */
export function applyDirChanges(p: Prepared, stored: StoredResult, changedFiles: readonly number[], changedDirs: ReadonlySet<string>, newRules: ReadonlyMap<string, string>, racyFrom: RacyFrom): DirUpdate | Walk {
  const entryRows = p.previous.entryRows;
  if (entryRows === undefined) return walk('the cache holds no entry rows');
  const u = new Update(p, stored, entryRows, newRules, racyFrom);
  return u.listMoved(changedDirs) ?? u.placeNames() ?? u.reclassify() ?? u.commit(changedFiles);
}

/** A directory listed again: the names that came and went since its cached listing. */
interface ListingDiff {
  dir: string;
  added: [string, number][];
  removed: [string, number][];
}

/** One update under way: what the steps found and staged, applied by commit alone. */
class Update {
  private readonly t: FileTable;
  private readonly prefix: string;
  private readonly staged = new Map<string, CachedDir>();
  private readonly removedDirs = new Set<string>();
  private readonly removedPaths = new Set<string>();
  private readonly added: string[] = [];
  private readonly diffs: ListingDiff[] = [];
  private readonly reclassifyAt: Set<string>;
  /** The outermost directories whose subtree is classified again. */
  private roots: string[] = [];
  private readonly rules: RulesReader;

  constructor(
    private readonly p: Prepared,
    private readonly stored: StoredResult,
    private readonly entryRows: Uint32Array,
    newRules: ReadonlyMap<string, string>,
    private readonly racyFrom: RacyFrom,
  ) {
    this.t = p.previous.files;
    this.prefix = prefixOf(p.rootReal);
    this.rules = new RulesReader(p, newRules, (rel) => this.listingOf(rel));
    this.reclassifyAt = new Set(newRules.keys());
  }

  private listingOf(rel: string): Listing | undefined {
    return (this.staged.get(rel) ?? this.p.previous.dirs.get(rel))?.listing;
  }

  /** Asked for every row of the table: a set lookup per ancestor, not a scan of every removed directory. */
  private removedOrUnder(rel: string): boolean {
    if (this.removedDirs.size === 0) return false;
    for (let at = rel.length; at > 0; at = rel.lastIndexOf('/', at - 1)) if (this.removedDirs.has(rel.slice(0, at))) return true;
    return false;
  }

  /** An entry's path: its row's, or its link's (renumbering rows never changes a link's path). */
  private storedPath(e: number): string {
    return e >= LINK_ROW ? this.stored.links[e - LINK_ROW]![0] : this.t.paths[e]!;
  }

  /** The run [from, to) of stored entries under directory `dir` ('' holds all): entries are in path order. */
  private entriesUnder(dir: string): [number, number] {
    const rows = this.entryRows;
    if (dir === '') return [0, rows.length];
    const prefix = `${dir}/`;
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareUtf8(this.storedPath(rows[mid]!), prefix) < 0) lo = mid + 1;
      else hi = mid;
    }
    let to = lo;
    while (to < rows.length && this.storedPath(rows[to]!).startsWith(prefix)) to++;
    return [lo, to];
  }

  private inRoots(rel: string): boolean {
    return this.roots.some((r) => within(rel, r));
  }

  /**
   * 1. Lists every moved directory again. Parents sort before their children, so a removed
   *    directory is known before its subdirectories come up. Then the subtrees whose rules
   *    changed are known; the outermost ones suffice.
   */
  listMoved(changedDirs: ReadonlySet<string>): Walk | null {
    for (const dir of [...changedDirs].sort()) {
      if (this.removedOrUnder(dir)) continue;
      // Null: gone (but not through a parent listed again), or unreadable.
      const listed = listDirectory(dir === '' ? this.p.rootReal : this.prefix + dir, this.racyFrom);
      if (listed === null) return walk(`${dir === '' ? 'the root' : dir} is gone or cannot be listed`);
      const now = listed.listing;
      const before = this.p.previous.dirs.get(dir)!.listing;
      const old = new Map<string, number>();
      for (let i = 0; i < before.names.length; i++) old.set(before.names[i]!, before.types.charCodeAt(i));
      const diff: ListingDiff = { dir, added: [], removed: [] };
      for (let i = 0; i < now.names.length; i++) {
        const name = now.names[i]!;
        const type = now.types.charCodeAt(i);
        const was = old.get(name);
        old.delete(name);
        if (was === type) continue;
        if (was !== undefined) return walk(`${join(dir, name)} changed type`);
        diff.added.push([name, type]);
      }
      for (const [name, type] of old) {
        diff.removed.push([name, type]);
        if (type === T_DIR) this.removedDirs.add(join(dir, name));
      }
      // A .gitignore that appeared or went changes the rules of the whole subtree.
      if (this.p.respectGitignore && [...diff.added, ...diff.removed].some(([name]) => name === '.gitignore')) this.reclassifyAt.add(dir);
      this.diffs.push(diff);
      this.staged.set(dir, listed);
    }
    this.roots = [...this.reclassifyAt].sort().filter((r, i, all) => !all.slice(0, i).some((q) => within(r, q)));
    return null;
  }

  /** 2. Outside the subtrees classified again, only the names that came or went matter. */
  placeNames(): Walk | null {
    for (const { dir, added: came, removed: went } of this.diffs) {
      if (this.inRoots(dir)) continue;
      for (const [name, type] of came) {
        const rel = join(dir, name);
        const stack = this.rules.stackFor(dir);
        if (stack === null) return walk(`a .gitignore over ${dir === '' ? 'the root' : dir} cannot be read`);
        const v = classifyEntry(this.p, stack, rel, name, type);
        if (v === V_OUT) continue;
        if (v === V_DIR) {
          const no = this.addNewDir(rel);
          if (no !== null) return no;
          continue;
        }
        if (v !== V_FILE) return walk(`${rel} is a new symlink or a name to report as skipped`);
        if (this.added.length >= this.p.tuning.fastPathNewFilesMax) return this.tooManyNewFiles();
        this.added.push(rel);
      }
      for (const [name, type] of went) if (type !== T_DIR) this.removedPaths.add(join(dir, name));
    }
    return null;
  }

  /** New files the update adds (and reads on this thread) past tuning.fastPathNewFilesMax: the walk, hashing on every core, is the better way. */
  private tooManyNewFiles(): Walk {
    return walk(`more than ${this.p.tuning.fastPathNewFilesMax} new files: the walk hashes them on every core`);
  }

  /**
   * A directory that was not there before: listed (stat first, as the walk does, so a change
   * racing the listing shows next time) with everything under it, and classified as the walk
   * would. A symlink, a name to report or more new files than re-reading on this thread suits
   * (the walk hashes on every core) leave it to the walk.
   */
  private addNewDir(rel: string): Walk | null {
    const listed = listDirectory(this.prefix + rel, this.racyFrom);
    if (listed === null) return walk(`the new directory ${rel} cannot be listed`);
    const listing = listed.listing;
    this.staged.set(rel, listed);
    const stack = this.rules.stackFor(rel);
    if (stack === null) return walk(`a .gitignore over ${rel} cannot be read`);
    for (let i = 0; i < listing.names.length; i++) {
      const name = listing.names[i]!;
      const child = join(rel, name);
      const v = classifyEntry(this.p, stack, child, name, listing.types.charCodeAt(i));
      if (v === V_OUT) continue;
      if (v === V_DIR) {
        const no = this.addNewDir(child);
        if (no !== null) return no;
      } else if (v !== V_FILE) return walk(`${child} is a new symlink or a name to report as skipped`);
      else if (this.added.length >= this.p.tuning.fastPathNewFilesMax) return this.tooManyNewFiles();
      else this.added.push(child);
    }
    return null;
  }

  /** 3. Classifies every entry under each root with the rules now in force, from the cached listings. */
  reclassify(): Walk | null {
    if (this.roots.length === 0) return null;
    const kept = new Map<string, number>();
    const keptSkips = new Set<string>();
    const visit = (dir: string): Walk | null => {
      const listing = this.listingOf(dir);
      const stack = this.rules.stackFor(dir);
      if (listing === undefined) return walk(`${dir === '' ? 'the root' : dir} was never listed`);
      if (stack === null) return walk(`a .gitignore over ${dir === '' ? 'the root' : dir} cannot be read`);
      for (let i = 0; i < listing.names.length; i++) {
        const name = listing.names[i]!;
        const rel = join(dir, name);
        const type = listing.types.charCodeAt(i);
        const v = classifyEntry(this.p, stack, rel, name, type);
        if (typeof v !== 'number') keptSkips.add(rel);
        else if (v === V_DIR) {
          if (this.listingOf(rel) === undefined) return walk(`${rel} is newly in under the new rules and was never listed`);
          const no = visit(rel);
          if (no !== null) return no;
        } else if (v === V_OUT) {
          // A directory the walk had entered and the rules now leave out goes, with all under it.
          if (type === T_DIR && this.p.previous.dirs.has(rel)) this.removedDirs.add(rel);
        } else kept.set(rel, v);
      }
      return null;
    };
    for (const r of this.roots) {
      const no = visit(r);
      if (no !== null) return no;
    }
    // Entries are in path order: those under a root are one run of them.
    for (const r of this.roots) {
      const [from, to] = this.entriesUnder(r);
      for (let k = from; k < to; k++) {
        const path = this.storedPath(this.entryRows[k]!);
        if (!kept.delete(path)) this.removedPaths.add(path);
      }
    }
    for (const [rel, v] of kept) {
      if (v !== V_FILE) return walk(`${rel} is a symlink newly in under the new rules`);
      this.added.push(rel);
    }
    const skipsBefore = this.stored.skipped.filter((sk) => this.inRoots(sk.path)).map((sk) => sk.path);
    if (skipsBefore.length !== keptSkips.size || skipsBefore.some((x) => !keptSkips.has(x))) return walk('the names to report as skipped changed under the new rules');
    return null;
  }

  /**
   * 4. The update applies: the only step that changes its inputs. Rows of removed files and of
   *    everything under removed directories go (a .gitignore that is no longer an entry but
   *    still sets rules keeps its row); the rest keep their order. When nothing went (files
   *    added, rules edited without effect), every row and entry stays as it is. Then the new
   *    files are added (a .gitignore newly in already has its row; others get a racy row: read
   *    before use) and merged into the entries.
   */
  commit(changedFiles: readonly number[]): DirUpdate {
    const { p, t, stored, entryRows, added, rules } = this;
    const prev = p.previous;
    const nothingGone = this.removedPaths.size === 0 && this.removedDirs.size === 0;
    const entryGone = (rel: string): boolean => this.removedPaths.has(rel) || this.removedOrUnder(rel);
    const rowGone = (rel: string): boolean => this.removedOrUnder(rel) || (this.removedPaths.has(rel) && !rules.isRulesFile(rel));
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
        if (entryGone(this.storedPath(e))) continue;
        entries.push(e >= LINK_ROW ? e : newIndex[e]!);
        from.push(k);
      }
      keptEntries = entries;
      keptFrom = from;
    }
    const skipped = nothingGone ? stored.skipped : stored.skipped.filter((sk) => !entryGone(sk.path));

    const rowsRemoved = !nothingGone && keptRows !== t.size;
    if (rowsRemoved) t.keepRows((i) => newIndex[i]! >= 0);
    added.sort(compareUtf8);
    // Rows already there, looked up once; each appended row joins them (a path has one row).
    const reclassified = this.roots.length > 0;
    const known = t.rowsOf(reclassified ? [...added, ...rules.shas.keys()] : rules.shas.keys());
    const addedRows = added.map((rel) => {
      const row = (reclassified ? known.get(rel) : undefined) ?? t.appendUnread(rel);
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
      const path = this.storedPath(e);
      while (a < added.length && compareUtf8(added[a]!, path) < 0) merged[k++] = addedRows[a++]!;
      entryFrom[k] = keptFrom === null ? j : keptFrom[j]!;
      merged[k++] = e;
    }
    while (a < added.length) merged[k++] = addedRows[a++]!;
    prev.entryRows = merged;
    stored.links = links;
    stored.skipped = skipped;
    let dirKeysChanged = false;
    for (const [dir, d] of this.staged) {
      if (!prev.dirs.has(dir)) dirKeysChanged = true;
      prev.dirs.set(dir, d);
    }
    if (this.removedDirs.size > 0) {
      for (const dir of [...prev.dirs.keys()]) {
        if (this.removedOrUnder(dir)) {
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
    return { changed: [...changed], entriesChanged: added.length > 0 || keptEntries.length !== entryRows.length, entryFrom, rulesRead: rules.shas, rowsNow: rowsRemoved ? newIndex : null };
  }
}

function join(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

/** `rel` is `dir` or inside it ('' holds everything). */
function within(rel: string, dir: string): boolean {
  return dir === '' || rel === dir || rel.startsWith(`${dir}/`);
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
