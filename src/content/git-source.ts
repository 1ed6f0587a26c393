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
 * for the paths git has there; missing ones are absent from the map, and so is every path whose
 * bytes fail `accept` (the caller's check against the digest it expects). One `git cat-file
 * --batch` reads the blobs. A path in `blobIds` is asked for by that id first (a hint, such as the
 * index's entry: git reads the blob without walking the commit's trees); one whose blob fails
 * `accept` is asked for again by `<commit>:<path>`. A blob whose bytes fail `accept` (its
 * working-tree form differs: eol conversion, a smudge filter such as LFS) is read again through
 * `cat-file --filters`, as is a name with a newline (which the batch protocol cannot carry).
 */
export function readAtCommit(root: string, commit: string, paths: readonly string[], accept: (path: string, bytes: Buffer) => boolean = () => true, blobIds: ReadonlyMap<string, string> = new Map()): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (!isSafeCommit(commit) || paths.length === 0) return out;
  const env = gitEnv();
  // `<commit>:./<path>` names the path from git's working directory (the root), wherever the root
  // lies in the work tree: no `rev-parse --show-prefix` (a process per post) to find its place.
  const atCommit = (p: string): string => `${commit}:./${p}`;
  const single: string[] = [];
  const byId: Array<[string, string]> = [];
  const byPath: Array<[string, string]> = [];
  for (const p of paths) {
    if (p.includes('\n') || p.includes('\r')) single.push(p);
    else {
      const id = blobIds.get(p);
      if (id !== undefined && isObjectId(id)) byId.push([p, id]);
      else byPath.push([p, atCommit(p)]);
    }
  }
  // Ids first: a path whose blob is not the one wanted joins the by-path batch.
  if (byId.length > 0) {
    for (const [p, bytes] of catBatch(root, env, byId)) {
      if (bytes !== null && accept(p, bytes)) out.set(p, bytes);
      else byPath.push([p, atCommit(p)]);
    }
  }
  if (byPath.length > 0) {
    for (const [p, bytes] of catBatch(root, env, byPath)) {
      if (bytes === null) continue; // not at that commit
      if (accept(p, bytes)) out.set(p, bytes);
      else single.push(p);
    }
  }
  for (const p of single) {
    try {
      const bytes = execFileSync('git', [...GIT_BASE_ARGS, 'cat-file', '--filters', atCommit(p)], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
      if (accept(p, bytes)) out.set(p, bytes);
    } catch {
      // not at that commit
    }
  }
  return out;
}

function isObjectId(id: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(id);
}

/** One `git cat-file --batch` of `names` ([path, object name]): each path with its blob's bytes, or null (missing, not a blob). */
function catBatch(root: string, env: NodeJS.ProcessEnv, names: ReadonlyArray<readonly [string, string]>): Array<[string, Buffer | null]> {
  let stdout: Buffer;
  try {
    stdout = execFileSync('git', [...GIT_BASE_ARGS, 'cat-file', '--batch'], {
      cwd: root,
      env,
      input: names.map(([, name]) => `${name}\n`).join(''),
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 1 << 30,
    });
  } catch {
    stdout = Buffer.alloc(0);
  }
  const got: Array<[string, Buffer | null]> = [];
  let at = 0;
  for (const [p] of names) {
    const nl = stdout.indexOf(0x0a, at);
    if (nl < 0) {
      got.push([p, null]);
      continue;
    }
    const header = stdout.subarray(at, nl).toString('utf8');
    at = nl + 1;
    const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
    if (m === null) {
      got.push([p, null]); // "<name> missing" / ambiguous
      continue;
    }
    const size = Number(m[2]);
    const bytes = Buffer.from(stdout.subarray(at, at + size));
    at += size + 1;
    got.push([p, m[1] === 'blob' ? bytes : null]);
  }
  return got;
}

/**
 * The gitlinks at or below `root` as git lists them (`ls-files --stage`, paths relative to the
 * directory it runs in): for an index git-index.ts does not read. `[]` when git cannot say
 * (no repository: nothing there is held by one).
 */
export function gitlinksFromGit(root: string): string[] {
  let out: string;
  try {
    out = execFileSync('git', [...GIT_BASE_ARGS, 'ls-files', '-z', '--stage', '--', '.'], { cwd: root, env: gitEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
  } catch {
    return [];
  }
  const links: string[] = [];
  for (const record of out.split('\0')) {
    if (record.startsWith('160000 ')) links.push(record.slice(record.indexOf('\t') + 1));
  }
  return links;
}
