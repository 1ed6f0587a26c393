/**
 * Files the repo-snapshot engine leaves out because their names break the seed's RelPath rules
 * (a `"`, a newline, NFD letters, a trailing dot…) are still real work an agent may have done.
 * For the working-tree diff they are hashed here, exactly named, so a file called `a"b.txt`
 * created by a shell still shows up as added. Ignored files stay out: inside a git repository
 * only paths git tracks or lists as untracked (not ignored) are taken.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { entryMode } from '../../inventory/entry-mode.js';
import { ALWAYS_SKIP, type SkippedEntry } from '../../inventory/index.js';
import { runGit, splitNul } from './git.js';
import type { InventoryEntry } from '../inventory-store/inventory-store.js';

const NEVER_ENTER = new Set(ALWAYS_SKIP);

function entryFor(root: string, rel: string): InventoryEntry | null {
  const absolute = path.join(root, ...rel.split('/'));
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(absolute);
  } catch {
    return null;
  }
  const mode = entryMode(stat.mode);
  if (stat.isSymbolicLink()) return { path: rel, bytes: 0, mode: '0644', kind: 'symlink' };
  if (!stat.isFile()) return null;
  try {
    const content = fs.readFileSync(absolute);
    return { path: rel, bytes: content.length, sha256: createHash('sha256').update(content).digest('hex'), mode, kind: 'file' };
  } catch {
    return null;
  }
}

function walk(root: string, rel: string, out: InventoryEntry[]): void {
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(path.join(root, ...rel.split('/')), { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of names) {
    const child = `${rel}/${d.name}`;
    if (d.isDirectory()) {
      if (!NEVER_ENTER.has(d.name)) walk(root, child, out);
    } else {
      const entry = entryFor(root, child);
      if (entry) out.push(entry);
    }
  }
}

/**
 * Entries for the skipped `invalid-name` paths (files, and every file under a skipped directory),
 * plus the skipped entries that remain unrecovered. Skipped paths under an `excluded` directory
 * are neither: they are not work, so they are not reported as skipped either.
 */
export function recoverInvalidNames(root: string, skipped: readonly SkippedEntry[], excluded: (rel: string) => boolean): { entries: InventoryEntry[]; stillSkipped: SkippedEntry[] } {
  const relevant = skipped.filter((s) => !excluded(s.path));
  const candidates = relevant.filter((s) => s.reason === 'invalid-name');
  if (candidates.length === 0) return { entries: [], stillSkipped: relevant };
  const listed = runGit(root, ['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  const gitPaths = listed === null ? null : splitNul(listed);
  const entries: InventoryEntry[] = [];
  const recovered = new Set<string>();
  for (const s of candidates) {
    const before = entries.length;
    let isDir: boolean;
    try {
      isDir = fs.lstatSync(path.join(root, ...s.path.split('/'))).isDirectory();
    } catch {
      continue;
    }
    if (gitPaths === null) {
      if (isDir) walk(root, s.path, entries);
      else {
        const e = entryFor(root, s.path);
        if (e) entries.push(e);
      }
    } else {
      const prefix = `${s.path}/`;
      for (const p of gitPaths) {
        if (p === s.path || (isDir && p.startsWith(prefix))) {
          const e = entryFor(root, p);
          if (e) entries.push(e);
        }
      }
    }
    // An ignored path is not work either: it counts as handled, not as skipped.
    if (entries.length > before || gitPaths !== null) recovered.add(s.path);
  }
  const unique = new Map(entries.filter((e) => !excluded(e.path)).map((e) => [e.path, e]));
  return { entries: [...unique.values()], stillSkipped: relevant.filter((s) => !recovered.has(s.path)) };
}
