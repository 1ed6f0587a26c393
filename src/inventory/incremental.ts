import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { compareUtf8 } from '../core/utf8.js';
import { parseGitignore, type GitignoreFile } from './gitignore.js';
import { prefixOf, type Prepared } from './prepare.js';
import { processFile } from './read-file.js';
import { RELIST_DIR, type CachedDir, type Listing } from './stat-cache.js';
import type { StoredResult } from './stored-result.js';
import { classifyEntry, readListing, V_FILE, V_OUT } from './walk.js';

/** Entry-row bit marking a symlink entry (stored-result.ts LINK_ROW; repeated to avoid an import cycle). */
const LINK_BIT = 0x80000000;
const T_FILE = 'f'.charCodeAt(0);

/**
 * Brings a stored result up to date with directories whose stat moved, without walking the
 * tree: the common agent step writes a file by rename (same names, new mtime), creates a few
 * files or deletes some. Each moved directory is listed again and compared with its cached
 * listing: same names and types change nothing; new regular files the ignore rules keep are
 * added (as rows to read), removed files and whole removed directories are dropped. Anything
 * else (a new directory that is not ignored, a new symlink, a .gitignore added or removed, a
 * type change, a name that must be reported as skipped) returns null: the walk decides.
 *
 * Nothing is changed until the whole update is known to apply. Then `p.previous` (file table,
 * directory listings, entry rows), `stored` and `p.verified` are updated in place, and the rows
 * to read (the verified pass's changed rows, renumbered, plus the new files) are returned, with
 * whether the list of entries itself changed (then a digest stored with the result is stale).
 */
export function applyDirChanges(p: Prepared, stored: StoredResult, changedFiles: readonly number[], changedDirs: ReadonlySet<string>, racyFromMs: number): { changed: number[]; entriesChanged: boolean } | null {
  const prev = p.previous;
  const t = prev.files;
  const entryRows = prev.entryRows;
  if (entryRows === undefined) return null;
  const prefix = prefixOf(p.rootReal);
  const staged = new Map<string, CachedDir>();
  const removedDirs: string[] = [];
  const removedPaths = new Set<string>();
  const added: string[] = [];
  const listingOf = (rel: string): Listing | undefined => (staged.get(rel) ?? prev.dirs.get(rel))?.listing;
  const under = (rel: string): boolean => removedDirs.some((d) => rel.startsWith(`${d}/`));
  const removedOrUnder = (rel: string): boolean => removedDirs.some((d) => rel === d || rel.startsWith(`${d}/`));

  // Parents sort before their children, so a removed directory is known before its subdirectories come up.
  for (const dir of [...changedDirs].sort()) {
    if (removedOrUnder(dir)) continue;
    const abs = dir === '' ? p.rootReal : prefix + dir;
    const st = fs.lstatSync(abs, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory()) return null; // gone, but not through a parent we re-listed
    let now: Listing;
    try {
      now = readListing(abs);
    } catch {
      return null;
    }
    const before = prev.dirs.get(dir)!.listing;
    const old = new Map<string, number>();
    for (let i = 0; i < before.names.length; i++) old.set(before.names[i]!, before.types.charCodeAt(i));
    let stack: GitignoreFile[] | null = null;
    for (let i = 0; i < now.names.length; i++) {
      const name = now.names[i]!;
      const type = now.types.charCodeAt(i);
      const was = old.get(name);
      old.delete(name);
      if (was === type) continue;
      if (was !== undefined || name === '.gitignore') return null; // a type change, or new ignore rules
      const rel = dir === '' ? name : `${dir}/${name}`;
      stack ??= p.respectGitignore ? ignoreStackFor(p, dir, now, listingOf) : [];
      if (stack === null) return null;
      const v = classifyEntry(p, stack, rel, name, type);
      if (v === V_OUT) continue;
      if (v !== V_FILE) return null; // a directory to walk, a symlink, or a skip to report
      added.push(rel);
    }
    for (const [name, type] of old) {
      if (name === '.gitignore') return null;
      const rel = dir === '' ? name : `${dir}/${name}`;
      if (type === 'd'.charCodeAt(0)) removedDirs.push(rel);
      else removedPaths.add(rel);
    }
    const racy = st.mtimeMs >= racyFromMs || st.ctimeMs >= racyFromMs;
    staged.set(dir, { stat: racy ? RELIST_DIR : [st.mtimeMs, st.ctimeMs, st.ino, st.dev], listing: now });
  }

  // Rows of removed files and of everything under removed directories go; the rest keep their order.
  const gone = (rel: string): boolean => removedPaths.has(rel) || under(rel);
  const newIndex = new Int32Array(t.size);
  let kept = 0;
  for (let i = 0; i < t.size; i++) newIndex[i] = gone(t.paths[i]!) ? -1 : kept++;
  const links = stored.links.map(([path, target, row]): [string, string | null, number] => [path, target, row < 0 ? row : newIndex[row]!]);
  const entryPath = (e: number): string => (e >= LINK_BIT ? links[e - LINK_BIT]![0] : t.paths[e]!);
  const keptEntries: number[] = [];
  for (const e of entryRows) {
    if (gone(entryPath(e))) continue;
    keptEntries.push(e >= LINK_BIT ? e : newIndex[e]!);
  }
  const skipped = stored.skipped.filter((s) => !gone(s.path));

  // Commit: compact the table, append the new files (racy: read before use), merge the entries.
  compactTable(p, newIndex, kept);
  added.sort(compareUtf8);
  const addedRows = added.map((rel) => t.appendUnread(rel));
  const merged = new Uint32Array(keptEntries.length + added.length);
  let a = 0;
  let k = 0;
  for (const e of keptEntries) {
    const path = e >= LINK_BIT ? links[e - LINK_BIT]![0] : t.paths[e]!;
    while (a < added.length && compareUtf8(added[a]!, path) < 0) merged[k++] = addedRows[a++]!;
    merged[k++] = e;
  }
  while (a < added.length) merged[k++] = addedRows[a++]!;
  prev.entryRows = merged;
  stored.links = links;
  stored.skipped = skipped;
  for (const [dir, d] of staged) prev.dirs.set(dir, d);
  for (const dir of [...prev.dirs.keys()]) if (removedOrUnder(dir)) prev.dirs.delete(dir);
  delete prev.pathsJoined;
  const changed: number[] = [];
  for (const i of changedFiles) if (newIndex[i]! >= 0) changed.push(newIndex[i]!);
  return { changed: changed.concat(addedRows), entriesChanged: added.length > 0 || keptEntries.length !== entryRows.length };
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
 * The .gitignore rules in force inside `dir`: those of the root and of every directory down
 * to `dir` (its listing `dirListing`), read again (they are few and small). Null when one of
 * them cannot be read: the walk then reports it properly.
 */
function ignoreStackFor(p: Prepared, dir: string, dirListing: Listing, listingOf: (rel: string) => Listing | undefined): GitignoreFile[] | null {
  const stack: GitignoreFile[] = [];
  const parts = dir === '' ? [] : dir.split('/');
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (let depth = 0; depth <= parts.length; depth++) {
    const base = parts.slice(0, depth).join('/');
    const listing = depth === parts.length ? dirListing : listingOf(base);
    if (listing === undefined) return null;
    const gi = listing.names.indexOf('.gitignore');
    if (gi < 0 || listing.types.charCodeAt(gi) !== T_FILE) continue;
    const abs = `${prefixOf(p.rootReal)}${base === '' ? '' : `${base}/`}.gitignore`;
    const o = processFile(fs, crypto, abs, null, false, false, buf, true);
    if (o.text === undefined) return null;
    stack.push(parseGitignore(o.text, base));
  }
  return stack;
}
