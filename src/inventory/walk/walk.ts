import * as fs from 'node:fs';
import * as path from 'node:path';
import { errnoCode } from '../../core/errors.js';
import { compareUtf8 } from '../../core/utf8.js';
import { isIgnored, parseGitignore, type GitignoreFile } from '../rules/gitignore.js';
import type { PathMatcher } from '../rules/glob.js';
import { isRacy, type RacyFrom } from '../rules/racy.js';
import { MAX_REL_PATH_LENGTH, relPathProblem, RESERVED_WINDOWS_NAME } from '../rules/relpath.js';
import { RELIST_DIR, type CachedDir, type DirStatRow, type Listing, type StatCacheData } from '../cache/stat-cache.js';
import type { FileOutcome } from '../io/read-file.js';
import type { SkippedEntry, SkipReason } from '../types.js';

/** Names made only of these characters pass every RelPath rule but the two checked next to it. */
const PLAIN_NAME = /^[A-Za-z0-9_.-]+$/;
const DOT = 0x2e;

const T_DIR = 'd'.charCodeAt(0);
const T_FILE = 'f'.charCodeAt(0);
const T_LINK = 'l'.charCodeAt(0);
const T_OTHER = 'o'.charCodeAt(0);
const T_BAD_UTF8 = 'x'.charCodeAt(0);

/**
 * A file or symlink the walk found and kept, and (filled in by the scanner) its result. One
 * object per file for both jobs: a 100k-file scan keeps all of them until the end.
 */
export interface WalkItem {
  rel: string;
  kind: 'file' | 'symlink';
  /** For a link to an in-root regular file: the target's real path and its root-relative path. */
  target: string | undefined;
  targetRel: string | undefined;
  /** A link that resolves nowhere hashable (dangling, loop, outside the root, not a file): bytes 0, no digest. */
  unresolved: boolean;
  /** A .gitignore already read (and hashed) on the main thread while entering its directory. */
  outcome: FileOutcome | undefined;
  // Result, set by the scanner.
  done: boolean;
  skip: SkipReason | undefined;
  detail: string | undefined;
  bytes: number;
  mode: number;
  /** Row of the scan's digest table holding this file's sha256, or -1. */
  shaRow: number;
}

function item(rel: string, kind: 'file' | 'symlink', extra?: Partial<WalkItem>): WalkItem {
  // All fields always present: one hidden class for every item.
  const it: WalkItem = { rel, kind, target: undefined, targetRel: undefined, unresolved: false, outcome: undefined, done: false, skip: undefined, detail: undefined, bytes: 0, mode: 0, shaRow: -1 };
  return extra === undefined ? it : Object.assign(it, extra);
}

/** What the walk does with one directory entry (classifyEntry). */
export const V_OUT = 0;
export const V_DIR = 1;
export const V_FILE = 2;
export const V_LINK = 3;

/** The rules that decide which entries a walk keeps. */
export type WalkRules = Pick<WalkOptions, 'include' | 'exclude' | 'excludeDirs' | 'respectGitignore' | 'skipNames'>;

/**
 * The walk's verdict on one entry of a directory listing (`type`: a Listing type code), given
 * the ignore rules in force there: left out silently (V_OUT: ignored, excluded, an always-skipped
 * directory), a directory to enter, a file or symlink to record, or a skip to report. Ignore
 * rules and globs come first: "skipped" reports only paths that would have been recorded.
 * Shared by the walk and the incremental update of a stored result, so both decide alike.
 */
export function classifyEntry(o: WalkRules, ignoreStack: readonly GitignoreFile[], rel: string, name: string, type: number): number | SkippedEntry {
  if (type === T_DIR && o.skipNames.has(name)) return V_OUT;
  if (type === T_BAD_UTF8) return { path: rel, reason: 'invalid-utf8', detail: 'the name on disk is not valid UTF-8' };
  if (type === T_DIR) {
    if (o.respectGitignore && isIgnored(ignoreStack, rel, true)) return V_OUT;
    if (o.excludeDirs?.(rel)) return V_OUT;
    const problem = nameProblem(rel, name);
    if (problem !== null) return { path: rel, reason: 'invalid-name', detail: `${problem} (directory: its whole subtree is left out)` };
    return V_DIR;
  }
  if (o.respectGitignore && isIgnored(ignoreStack, rel, false)) return V_OUT;
  if (o.include !== null && !o.include(rel)) return V_OUT;
  if (o.exclude?.(rel)) return V_OUT;
  const problem = nameProblem(rel, name);
  if (problem !== null) return { path: rel, reason: 'invalid-name', detail: problem };
  if (type === T_OTHER) return { path: rel, reason: 'not-regular-file', detail: 'FIFO, socket or device' };
  return type === T_LINK ? V_LINK : V_FILE;
}

/** The seed's RelPath rules: the whole path's length, the new segment's content. */
function nameProblem(rel: string, name: string): string | null {
  if (rel.length > MAX_REL_PATH_LENGTH) return `longer than ${MAX_REL_PATH_LENGTH} characters`;
  // Most names are plain ASCII words: those break no rule unless they end in '.' or are a
  // reserved Windows name, and the full check (NFC normalisation, regexes) is skipped.
  if (PLAIN_NAME.test(name) && name.charCodeAt(name.length - 1) !== DOT && !RESERVED_WINDOWS_NAME.test(name)) return null;
  return relPathProblem(name);
}

export interface WalkOptions {
  rootReal: string;
  include: PathMatcher | null;
  exclude: PathMatcher | null;
  /**
   * The directories `exclude` drops whole, never opened (glob.ts compileDirectoryExcludes): one an
   * exclude glob matches itself, or `X` for a glob `X/**`.
   */
  excludeDirs: PathMatcher | null;
  respectGitignore: boolean;
  skipNames: ReadonlySet<string>;
  previous: StatCacheData;
  next: StatCacheData;
  /** mtime/ctime at or after this (ms) are racy: listings seen then are listed again next time. */
  racyFrom: RacyFrom;
  /**
   * Set when every cached directory was lstat-checked moments ago (stored-result check): the
   * ones that moved. The others' stats and listings are reused without another lstat.
   */
  changedDirs: ReadonlySet<string> | null;
  /** Reads a .gitignore (and hashes it, so it is read once). */
  readGitignore: (abs: string, cacheKey: string) => FileOutcome;
  /** Receives skipped paths with the number of items emitted before them (their walk position). */
  onSkip: (s: SkippedEntry, position: number) => void;
  /** Called when a visited directory could not be recorded in the cache (names not valid UTF-8). */
  onUntrusted: () => void;
}

interface Frame {
  abs: string;
  /** '' for the root, else 'a/b' */
  rel: string;
  listing: Listing;
  index: number;
  pushedIgnore: boolean;
  /** A .gitignore read while entering this directory, emitted when the walk reaches it. */
  gitignoreOutcome?: FileOutcome;
}

/**
 * Depth-first walk in final sort order: each directory's entries sorted by compareUtf8 of
 * `name` (files) / `name + '/'` (directories), which is exactly the order of the sorted paths,
 * so stopping early leaves a prefix. Pull-based (`next()`), so the scanner can pause it for
 * back-pressure and stop it at a budget. Ignored and excluded directories are never opened;
 * a directory whose stat matches the cache is not listed again.
 */
export class Walker {
  private readonly stack: Frame[] = [];
  private readonly ignoreStack: GitignoreFile[] = [];
  private emitted = 0;
  done = false;

  constructor(private readonly o: WalkOptions) {
    const root = this.enter(o.rootReal, '');
    if (root === undefined) this.done = true;
    else this.stack.push(root);
  }

  /** Next kept file or symlink, or null when the walk is over. */
  next(): WalkItem | null {
    const o = this.o;
    for (;;) {
      const frame = this.stack[this.stack.length - 1];
      if (frame === undefined) {
        this.done = true;
        return null;
      }
      if (frame.index >= frame.listing.names.length) {
        this.stack.pop();
        if (frame.pushedIgnore) this.ignoreStack.pop();
        continue;
      }
      const i = frame.index++;
      const name = frame.listing.names[i]!;
      const type = frame.listing.types.charCodeAt(i);
      const rel = frame.rel === '' ? name : `${frame.rel}/${name}`;
      const v = classifyEntry(o, this.ignoreStack, rel, name, type);
      if (typeof v !== 'number') {
        this.skip(v);
        continue;
      }
      if (v === V_OUT) continue;
      if (v === V_DIR) {
        const child = this.enter(path.join(frame.abs, name), rel);
        if (child !== undefined) this.stack.push(child);
        continue;
      }
      this.emitted++;
      if (v === V_LINK) return this.symlinkItem(rel, path.join(frame.abs, name));
      if (frame.gitignoreOutcome !== undefined && name === '.gitignore') return item(rel, 'file', { outcome: frame.gitignoreOutcome });
      return item(rel, 'file');
    }
  }

  private skip(s: SkippedEntry): void {
    this.o.onSkip(s, this.emitted);
  }

  /** Lists a directory (or reuses its cached listing) and reads its .gitignore. */
  private enter(abs: string, rel: string): Frame | undefined {
    const o = this.o;
    const known = o.changedDirs !== null && !o.changedDirs.has(rel) ? o.previous.dirs.get(rel) : undefined;
    if (known !== undefined) {
      o.next.dirs.set(rel, known);
      return this.frame(abs, rel, known.listing);
    }
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(abs, { throwIfNoEntry: false });
    } catch (e) {
      this.skip({ path: rel === '' ? '.' : rel, reason: 'unreadable-dir', detail: errText(e) });
      return undefined;
    }
    if (st === undefined || !st.isDirectory()) {
      this.skip({ path: rel === '' ? '.' : rel, reason: 'vanished', detail: 'directory disappeared or was replaced during the scan' });
      return undefined;
    }
    // Stat BEFORE listing: a change racing the readdir then shows up as a newer mtime next time.
    const stat: DirStatRow = [st.mtimeMs, st.ctimeMs, st.ino, st.dev];
    const cached = o.previous.dirs.get(rel);
    let listing: Listing;
    if (cached !== undefined && sameDirStat(cached.stat, stat)) {
      listing = cached.listing;
      o.next.dirs.set(rel, cached);
    } else {
      try {
        listing = readListing(abs);
      } catch (e) {
        this.skip({ path: rel === '' ? '.' : rel, reason: 'unreadable-dir', detail: errText(e) });
        return undefined;
      }
      // A listing seen while racy is kept but marked to be listed again (and compared) next time.
      if (!listing.types.includes('x')) o.next.dirs.set(rel, { stat: dirStatRow(st, o.racyFrom), listing } satisfies CachedDir);
      else o.onUntrusted();
    }
    return this.frame(abs, rel, listing);
  }

  /** A directory's frame, with its .gitignore read and pushed. */
  private frame(abs: string, rel: string, listing: Listing): Frame {
    const o = this.o;
    const frame: Frame = { abs, rel, listing, index: 0, pushedIgnore: false };
    if (o.respectGitignore) {
      // git does not follow a symlinked .gitignore in the work tree; only a regular file counts.
      const gi = listing.names.indexOf('.gitignore');
      if (gi >= 0 && listing.types.charCodeAt(gi) === T_FILE) {
        const giRel = rel === '' ? '.gitignore' : `${rel}/.gitignore`;
        const outcome = o.readGitignore(path.join(abs, '.gitignore'), giRel);
        frame.gitignoreOutcome = outcome;
        if (outcome.text !== undefined) {
          this.ignoreStack.push(parseGitignore(outcome.text, rel));
          frame.pushedIgnore = true;
        }
      }
    }
    return frame;
  }

  private symlinkItem(rel: string, abs: string): WalkItem {
    const r = resolveLink(this.o.rootReal, abs);
    return r === null ? item(rel, 'symlink', { unresolved: true }) : item(rel, 'symlink', r);
  }
}

/**
 * Where a symlink leads when that is an in-root regular file (its real path and root-relative
 * path), else null: dangling, a loop, outside the root or not a regular file (recorded with
 * bytes 0 and no digest). Shared with the stored-result path, which re-resolves every link.
 */
export function resolveLink(rootReal: string, abs: string): { target: string; targetRel: string } | null {
  let target: string;
  try {
    target = fs.realpathSync.native(abs);
  } catch {
    return null; // dangling or a loop
  }
  const inside = rootReal === '/' ? target !== '/' : target.startsWith(`${rootReal}/`);
  if (!inside) return null;
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(target, { throwIfNoEntry: false });
  } catch {
    st = undefined;
  }
  if (st === undefined || !st.isFile()) return null;
  return { target, targetRel: rootReal === '/' ? target.slice(1) : target.slice(rootReal.length + 1) };
}

function sameDirStat(a: DirStatRow, b: DirStatRow): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
}

function errText(e: unknown): string {
  return errnoCode(e) ?? (e instanceof Error ? e.message : String(e));
}

/**
 * A directory as the cache records it, listed now: stat first (a change racing the listing then
 * shows as a newer mtime next time), then its entries; a directory seen changing less than the
 * racy margin ago gets RELIST_DIR, to be listed again and compared next time. Null when it is not
 * a directory (any more) or cannot be listed: the caller leaves it to the walk, which reports it.
 */
export function listDirectory(abs: string, racyFrom: RacyFrom): CachedDir | null {
  const st = fs.lstatSync(abs, { throwIfNoEntry: false });
  if (st === undefined || !st.isDirectory()) return null;
  try {
    return { stat: dirStatRow(st, racyFrom), listing: readListing(abs) };
  } catch {
    return null;
  }
}

/** The stat the cache records for a directory: RELIST_DIR when it changed too recently to trust. */
function dirStatRow(st: fs.Stats, racyFrom: RacyFrom): DirStatRow {
  return isRacy(racyFrom, st.mtimeMs, st.ctimeMs, st.dev) ? RELIST_DIR : [st.mtimeMs, st.ctimeMs, st.ino, st.dev];
}

/**
 * Lists one directory, sorted in walk order. Names are decoded as UTF-8 by Node, which turns
 * invalid bytes into U+FFFD — so two different names could become one path. Only when a name
 * holds U+FFFD do we re-read the directory as raw bytes to tell a real U+FFFD from a bad name;
 * bad names are marked 'x' and reported, never hashed under a wrong path.
 */
export function readListing(abs: string): Listing {
  const dirents = fs.readdirSync(abs, { withFileTypes: true });
  const keyed: { name: string; type: string; key: string }[] = new Array<{ name: string; type: string; key: string }>(dirents.length);
  let suspicious = false;
  for (let i = 0; i < dirents.length; i++) {
    const d = dirents[i]!;
    const isDir = d.isDirectory();
    const type = isDir ? 'd' : d.isFile() ? 'f' : d.isSymbolicLink() ? 'l' : 'o';
    if (d.name.includes('\uFFFD')) suspicious = true;
    keyed[i] = { name: d.name, type, key: isDir ? `${d.name}/` : d.name };
  }
  if (suspicious) markInvalidUtf8(abs, keyed);
  keyed.sort((a, b) => compareUtf8(a.key, b.key));
  return { names: keyed.map((k) => k.name), types: keyed.map((k) => k.type).join('') };
}

function markInvalidUtf8(abs: string, entries: { name: string; type: string }[]): void {
  const raw = fs.readdirSync(abs, { encoding: 'buffer' });
  const valid = new Set<string>();
  for (const b of raw) {
    const s = b.toString('utf8');
    if (Buffer.from(s, 'utf8').equals(b)) valid.add(s);
  }
  for (const e of entries) if (e.name.includes('\uFFFD') && !valid.has(e.name)) e.type = 'x';
}
