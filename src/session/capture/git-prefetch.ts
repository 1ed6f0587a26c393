/**
 * `git status` started before it is needed, for the CLI's `session pre`/`post`: the command
 * starts it first thing, and git runs while Node loads and compiles the session library and
 * scans the tree (on Node 20 the loading alone takes about as long as git on a 5k-file repo),
 * instead of after. The synchronous capture then reads it through a SnapshotManager subclass.
 *
 * Node cannot wait synchronously for a child started asynchronously, so the child is `sh`
 * running the very two commands captureGitStatus runs (fixed arguments; the root is the cwd),
 * into files of a private temp directory (mkdtemp, 0700), and writing their exit codes last,
 * as one line: the reader waits for that line (Atomics.wait between looks). When anything goes
 * wrong (no sh, a spawn error, no answer within the bound) the reader returns null and the
 * caller runs git itself, so the status is always git's own.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GitStatus } from '../types.js';
import { GIT_BASE_ARGS, REV_PARSE_ARGS, STATUS_ARGS, gitEnv, parseStatus } from './git.js';
import type { SnapshotManager } from './snapshot-manager.js';

/** How long a reader waits for the prefetched status before running git itself. */
const WAIT_MS = 10 * 60 * 1000;
const POLL_MS = 2;

export interface PrefetchedGitStatus {
  /** The status of `projectRoot` (once: a later call gets null), or null when it cannot be had; waits for git. */
  take(projectRoot: string): GitStatus | null;
  /** Removes the temp directory now, or (git still running) has the child remove it when done. */
  dispose(): void;
}

const NONE: PrefetchedGitStatus = { take: () => null, dispose: () => undefined };

/** Fixed arguments only (no quoting needed); checked, so a future argument with a quote fails loudly here. */
function shellWords(args: readonly string[]): string {
  for (const a of args) if (!/^[A-Za-z0-9=._,/-]+$/.test(a)) throw new Error(`git-prefetch: argument ${a} needs quoting`);
  return args.join(' ');
}

/** Starts `git rev-parse` then `git status` (only inside a work tree) in `projectRoot`; never throws. */
export function prefetchGitStatus(projectRoot: string): PrefetchedGitStatus {
  let dir: string;
  try {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-git-'));
  } catch {
    return NONE;
  }
  const root = path.resolve(projectRoot);
  const git = `git ${shellWords(GIT_BASE_ARGS)}`;
  const script =
    `${git} ${shellWords(REV_PARSE_ARGS)} >"$1/rev" 2>/dev/null; r=$?; s=-; first=; IFS= read -r first <"$1/rev"; ` +
    `if [ $r -eq 0 ] && [ "$first" = true ]; then ${git} ${shellWords(STATUS_ARGS)} >"$1/status" 2>/dev/null; s=$?; fi; ` +
    `echo "$r $s" >"$1/codes"; if [ -e "$1/disposed" ]; then rm -rf "$1"; fi`;
  try {
    if (process.platform === 'win32') throw new Error('no sh');
    const child = spawn('sh', ['-c', script, 'sh', dir], { cwd: root, env: gitEnv(), stdio: 'ignore' });
    child.on('error', () => undefined); // a failed spawn has no pid (below); a later error is the child's
    if (child.pid === undefined) throw new Error('sh did not start');
    child.unref();
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return NONE;
  }
  let taken = false;
  return {
    take(asked: string): GitStatus | null {
      if (taken || path.resolve(asked) !== root) return null;
      taken = true;
      const codesFile = path.join(dir, 'codes');
      const wait = new Int32Array(new SharedArrayBuffer(4));
      const since = Date.now();
      let codes = '';
      // The codes line is one small write, ending in a newline: until it is whole, wait.
      while (!codes.endsWith('\n')) {
        if (Date.now() - since > WAIT_MS) return null;
        Atomics.wait(wait, 0, 0, POLL_MS);
        try {
          codes = fs.readFileSync(codesFile, 'utf8');
        } catch {
          codes = '';
        }
      }
      try {
        const [r, s] = codes.trim().split(' ');
        if (r === undefined || !/^\d+$/.test(r) || s === undefined) return null; // sh failed to run git at all
        const read = (name: string, code: string): string | null => (code === '0' ? fs.readFileSync(path.join(dir, name), 'utf8') : null);
        return parseStatus({ revParse: read('rev', r), status: s === '-' ? null : read('status', s) });
      } catch {
        return null;
      }
    },
    dispose(): void {
      // A command refused before take() disposes while git may still write here, and removing
      // the directory under git fails (ENOTEMPTY). So: mark it disposed, then remove it only if
      // the codes line is written (git is done); otherwise the script removes it after writing
      // that line, since it looks for the mark last. Each side writes before it looks, so at
      // least one of them sees the other's write and the directory never outlives git.
      try {
        fs.writeFileSync(path.join(dir, 'disposed'), '');
      } catch {
        return; // the directory is gone already
      }
      let gitDone = false;
      try {
        gitDone = fs.readFileSync(path.join(dir, 'codes'), 'utf8').endsWith('\n');
      } catch {
        // no codes line yet: git still runs
      }
      if (!gitDone) return; // the script removes the directory after its codes line
      try {
        fs.rmSync(dir, { recursive: true, force: true });
      } catch {
        // the script may be removing it at the same moment: best effort
      }
    },
  };
}

/**
 * `Manager` (the library's SnapshotManager, as loaded by the caller) with a captureGitStatus that
 * takes the prefetched status, and asks git itself when there is none.
 */
export function withPrefetchedGitStatus(Manager: typeof SnapshotManager, prefetched: PrefetchedGitStatus | null): typeof SnapshotManager {
  if (prefetched === null) return Manager;
  return class extends Manager {
    override captureGitStatus(projectRoot: string): GitStatus {
      return prefetched.take(projectRoot) ?? super.captureGitStatus(projectRoot);
    }
  };
}
