/**
 * Where the review reads the bytes of a path as it was at pre or at post. The diff engine asks
 * through `ContentSource` only, so the same engine runs on cairn's content store (kept by
 * `session pre`/`post`) and, for iterations captured without it, on what git and the working
 * tree still hold. Every byte string handed back is checked against the sha256 the inventory
 * recorded for that side: a source that no longer has the right bytes gives null (the file is
 * then reported as "content not captured"), never a wrong diff.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { containedPath } from '../core/paths.js';
import type { InventoryEntry } from '../session/inventory-store.js';

export type Side = 'pre' | 'post';

export interface ContentRequest {
  side: Side;
  /** POSIX path relative to the project root. */
  path: string;
  /** The inventory's entry for this path on this side (kind, mode, size, sha256). */
  entry: InventoryEntry;
}

/** Bytes of a regular file, or a symlink's target as bytes; null when not available. */
export interface ContentSource {
  read(requests: readonly ContentRequest[]): Array<Buffer | null>;
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** True when `bytes` are what the inventory recorded (a symlink's digest is its target file's, so only its kind can be checked). */
export function matchesEntry(entry: InventoryEntry, bytes: Buffer): boolean {
  if (entry.kind === 'symlink') return true;
  if (entry.sha256 !== undefined) return sha256(bytes) === entry.sha256;
  return bytes.length === entry.bytes;
}

function readWorkingTree(root: string, request: ContentRequest): Buffer | null {
  try {
    const abs = containedPath(root, path.dirname(request.path));
    const file = path.join(abs, path.basename(request.path));
    const stat = fs.lstatSync(file);
    if (request.entry.kind === 'symlink') {
      if (!stat.isSymbolicLink()) return null;
      return Buffer.from(fs.readlinkSync(file, { encoding: 'buffer' }));
    }
    if (!stat.isFile() || stat.size !== request.entry.bytes) return null;
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const bytes = fs.readFileSync(fd);
      return matchesEntry(request.entry, bytes) ? bytes : null;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
}

/** Git's environment without the variables that would point it at another repository. */
function gitEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR']) delete env[name];
  return env;
}

/** `git cat-file --batch` for many `<rev>:<path>` names in one process; null for each one git does not have. */
function catFiles(root: string, names: readonly string[]): Array<Buffer | null> {
  if (names.length === 0) return [];
  let out: Buffer;
  try {
    out = execFileSync('git', ['--literal-pathspecs', 'cat-file', '--batch'], {
      cwd: root,
      input: `${names.join('\n')}\n`,
      stdio: ['pipe', 'pipe', 'ignore'],
      maxBuffer: 4 * 1024 * 1024 * 1024,
      env: gitEnv(),
    });
  } catch {
    return names.map(() => null);
  }
  const result: Array<Buffer | null> = [];
  let at = 0;
  for (let i = 0; i < names.length; i++) {
    const eol = out.indexOf(10, at);
    if (eol < 0) {
      result.push(null);
      continue;
    }
    const header = out.toString('utf8', at, eol);
    at = eol + 1;
    const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
    if (m === null) {
      result.push(null); // "<name> missing" / "ambiguous"
      continue;
    }
    const size = Number(m[2]);
    result.push(m[1] === 'blob' ? out.subarray(at, at + size) : null);
    at += size + 1;
  }
  return result;
}

/** The repository path prefix of `root` (`sub/dir/` when root is a subdirectory), or null outside git. */
function repoPrefix(root: string): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--show-prefix'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: gitEnv() }).trim();
  } catch {
    return null;
  }
}

/**
 * Content from what is still around: the working tree (when a path still holds the recorded
 * bytes), else the commit that was HEAD at pre or at post. Enough for committed work and for
 * uncommitted work that is still on disk; a file edited before pre and changed again is not
 * recoverable this way and comes back null.
 */
export function gitAndWorkingTreeSource(root: string, commits: { pre: string; post: string }): ContentSource {
  const isCommit = (c: string): boolean => /^[0-9a-f]{40,64}$/.test(c);
  return {
    read(requests) {
      const result: Array<Buffer | null> = requests.map((r) => (r.side === 'post' || r.entry.kind === 'file' ? readWorkingTree(root, r) : null));
      const wanted: number[] = [];
      for (let i = 0; i < requests.length; i++) if (result[i] === null) wanted.push(i);
      if (wanted.length === 0) return result;
      const prefix = repoPrefix(root);
      if (prefix === null) return result;
      for (const side of ['pre', 'post'] as const) {
        const commit = commits[side];
        if (!isCommit(commit)) continue;
        const todo = wanted.filter((i) => result[i] === null && (requests[i] as ContentRequest).side === side);
        // Names with a newline cannot go through --batch; they stay null.
        const asked = todo.filter((i) => !(requests[i] as ContentRequest).path.includes('\n'));
        const blobs = catFiles(
          root,
          asked.map((i) => `${commit}:${prefix}${(requests[i] as ContentRequest).path}`),
        );
        asked.forEach((i, k) => {
          const blob = blobs[k] ?? null;
          if (blob !== null && matchesEntry((requests[i] as ContentRequest).entry, blob)) result[i] = blob;
        });
      }
      return result;
    },
  };
}
