/**
 * Which directory is "the project" when a command is not told (`--root`): found the way git finds
 * its work tree, so `cairn` works from any subdirectory and never starts a second `.cairn/` there.
 *
 * 1. walking up from the start directory, the first directory holding `.git` (a directory, or the
 *    file a worktree or submodule has);
 * 2. outside git, the nearest directory holding a `.cairn/` directory;
 * 3. else the start directory itself.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export type RootReason = 'git' | 'cairn' | 'cwd';

export interface FoundRoot {
  root: string;
  /** What marked it: a `.git` entry, a `.cairn/` directory, or nothing (the start directory). */
  reason: RootReason;
}

function holds(dir: string, name: string, wantDirectory: boolean): boolean {
  try {
    const st = fs.lstatSync(path.join(dir, name));
    return wantDirectory ? st.isDirectory() : st.isDirectory() || st.isFile();
  } catch {
    return false;
  }
}

function walkUp(start: string, test: (dir: string) => boolean): string | null {
  let dir = start;
  for (;;) {
    if (test(dir)) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The project root for `start` (absolute or relative to the process's directory). */
export function findProjectRoot(start: string): FoundRoot {
  const from = path.resolve(start);
  const git = walkUp(from, (dir) => holds(dir, '.git', false));
  if (git !== null) return { root: git, reason: 'git' };
  const cairn = walkUp(from, (dir) => holds(dir, '.cairn', true));
  if (cairn !== null) return { root: cairn, reason: 'cairn' };
  return { root: from, reason: 'cwd' };
}
