/**
 * Bytes that git already holds: a path's content at a commit, as checkout would write it
 * (`cat-file --filters`: eol conversion and smudge filters applied). cairn only reads git.
 */
import { execFileSync } from 'node:child_process';

const GIT_BASE_ARGS = ['-c', 'core.quotePath=false', '--no-optional-locks'];
const REDIRECTING_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR', 'GIT_NAMESPACE', 'GIT_PREFIX'];

function gitEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of REDIRECTING_ENV) delete env[name];
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

function isSafeCommit(commit: string): boolean {
  return /^[0-9a-f]{7,64}$/.test(commit);
}

/**
 * The content of each of `paths` (POSIX, relative to `root`) at `commit`, as checkout writes it,
 * for the paths git has there; missing ones are absent from the map. One `git cat-file --batch`
 * reads the blobs; a blob whose bytes fail `accept` (its working-tree form differs: eol
 * conversion, a smudge filter such as LFS) is read again through `cat-file --filters`, as is a
 * name with a newline (which the batch protocol cannot carry).
 */
export function readAtCommit(root: string, commit: string, paths: readonly string[], accept: (path: string, bytes: Buffer) => boolean = () => true): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (!isSafeCommit(commit) || paths.length === 0) return out;
  const env = gitEnv();
  // `<commit>:./<path>` names the path from git's working directory (the root), wherever the root
  // lies in the work tree: no `rev-parse --show-prefix` (a process per post) to find its place.
  const fromRoot = './';
  const single: string[] = [];
  const batchable: string[] = [];
  for (const p of paths) (p.includes('\n') || p.includes('\r') ? single : batchable).push(p);
  if (batchable.length > 0) {
    let stdout: Buffer;
    try {
      stdout = execFileSync('git', [...GIT_BASE_ARGS, 'cat-file', '--batch'], {
        cwd: root,
        env,
        input: batchable.map((p) => `${commit}:${fromRoot}${p}\n`).join(''),
        stdio: ['pipe', 'pipe', 'pipe'],
        maxBuffer: 1 << 30,
      });
    } catch {
      stdout = Buffer.alloc(0);
    }
    let at = 0;
    for (const p of batchable) {
      const nl = stdout.indexOf(0x0a, at);
      if (nl < 0) break;
      const header = stdout.subarray(at, nl).toString('utf8');
      at = nl + 1;
      const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
      if (m === null) continue; // "<name> missing" / ambiguous
      const size = Number(m[2]);
      const bytes = Buffer.from(stdout.subarray(at, at + size));
      at += size + 1;
      if (m[1] !== 'blob') continue;
      if (accept(p, bytes)) out.set(p, bytes);
      else single.push(p);
    }
  }
  for (const p of single) {
    try {
      const bytes = execFileSync('git', [...GIT_BASE_ARGS, 'cat-file', '--filters', `${commit}:${fromRoot}${p}`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
      if (accept(p, bytes)) out.set(p, bytes);
    } catch {
      // not at that commit
    }
  }
  return out;
}
