/**
 * Issue 21: a resident capture runs git on the tracked files only and keeps the untracked list it
 * held, asking git again (`ls-files --others`) only at the paths the watcher named
 * (untrackedPlan, src/daemon/watched-manager.ts). The watcher names a new directory, and may or
 * may not name what appeared inside it before its watch was set (a repository's `.git` among
 * them), so the plan must give git's own answer for any such mix of names. Each case here is
 * checked against a whole `git status` of the same tree.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IndexNames } from '../../src/daemon/index-names.js';
import { untrackedPlan } from '../../src/daemon/watched-manager.js';
import { captureGitStatus, captureGitStatusInBackground } from '../../src/session/capture/git.js';
import { commitAll, git, trackedDirs, write } from '../session/helpers.js';

const { repo } = trackedDirs();

/** A repository with a few tracked files, and its whole status and index names held (as after a whole run). */
function held(): { root: string; untracked: string[]; index: IndexNames } {
  const root = repo();
  for (const f of ['d0/a.txt', 'd0/b.txt', 'd1/c.txt', 'top.txt']) write(root, f, `${f}\n`);
  commitAll(root, 'init');
  write(root, 'd1/loose.txt', 'untracked\n');
  return { root, untracked: captureGitStatus(root).untracked, index: IndexNames.current(path.join(root, '.git'), null)! };
}

/** The status a tracked run answers with under `plan`: git's tracked lines, the held untracked entries kept, git's listing at the named paths. */
function trackedRun(root: string, start: ReturnType<typeof held>, named: readonly string[]): ReturnType<typeof captureGitStatus> {
  const plan = untrackedPlan(root, null, start.untracked, start.index, new Set(named));
  if (typeof plan === 'string') throw new Error(`a whole run was asked for: ${plan}`);
  const fresh = captureGitStatusInBackground(root, undefined, undefined, { trackedOthers: plan.others })();
  return { ...fresh, untracked: [...new Set([...plan.kept, ...fresh.untracked])].sort() };
}

describe('untrackedPlan: the untracked list of a run of the tracked files', () => {
  it('lists a new repository once, as git does, whether or not the files inside it were named too', () => {
    for (const named of [['d0/nested'], ['d0/nested', 'd0/nested/n.txt'], ['d0/nested/n.txt', 'd0/nested', 'd0/nested/deep'], ['d0', 'd0/nested/n.txt']]) {
      const start = held();
      git(start.root, 'init', '-q', path.join(start.root, 'd0', 'nested'));
      write(start.root, 'd0/nested/n.txt', 'n\n');
      write(start.root, 'd0/nested/deep/m.txt', 'm\n');
      const whole = captureGitStatus(start.root);
      expect(whole.untracked, 'git lists the repository as one entry').toContain('d0/nested/');
      expect(trackedRun(start.root, start, named), named.join(' ')).toEqual(whole);
    }
  });

  it('gives git\'s whole answer for new directories, files and repositories named at any depth, outer and inner names mixed', () => {
    const PLACE = fc.constantFrom('d0', 'd1', 'd0/x', 'd1/y/z', 'n');
    const ITEM = fc.record({ place: PLACE, kind: fc.constantFrom('file', 'dir', 'repo'), name: fc.constantFrom('p', 'q', 'r') });
    fc.assert(
      fc.property(fc.array(ITEM, { minLength: 1, maxLength: 5 }), fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), (items, pick) => {
        const start = held();
        const made = new Set<string>();
        for (const { place, kind, name } of items) {
          const at = `${place}/${name}`;
          if (fs.existsSync(path.join(start.root, at))) continue;
          if (kind === 'file') write(start.root, at, 'f\n');
          else {
            write(start.root, `${at}/inner.txt`, 'i\n');
            if (kind === 'repo') git(start.root, 'init', '-q', path.join(start.root, at));
            made.add(`${at}/inner.txt`);
          }
          made.add(at);
        }
        // What the watcher may name: every created path's new top directory, and any mix of the paths below.
        const named = new Set<string>();
        for (const p of made) {
          const parts = p.split('/');
          const outermost = parts.findIndex((_s, i) => !['d0', 'd1'].includes(parts.slice(0, i + 1).join('/')));
          named.add(parts.slice(0, outermost + 1).join('/')); // its parent was watched: the new entry is named
        }
        [...made].forEach((p, i) => pick[i % pick.length] && named.add(p));
        expect(trackedRun(start.root, start, [...named].sort())).toEqual(captureGitStatus(start.root));
      }),
      { numRuns: 25 },
    );
  });
});
