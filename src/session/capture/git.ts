/**
 * Git, called the safe way: argument arrays (no shell ever parses a path or a commit id),
 * NUL-separated output (paths come back byte-exact, never C-quoted), git's stderr captured
 * (never leaked to the caller's terminal), and every path made POSIX-relative to projectRoot
 * even when projectRoot is a subdirectory of the repository.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { FileDiff, GitStatus } from '../types.js';

export const UNKNOWN = 'unknown';

export const GIT_BASE_ARGS = ['-c', 'core.quotePath=false', '--literal-pathspecs', '--no-optional-locks'];

/** Variables that would point git at another repository than the one at projectRoot. */
const REDIRECTING_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR', 'GIT_NAMESPACE', 'GIT_PREFIX'];

export function gitEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of REDIRECTING_ENV) delete env[name];
  // Pager, prompts and editors must never start from a library call.
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_PAGER = 'cat';
  return env;
}

/** Runs git in `cwd`; returns stdout, or null when git fails or is missing. */
export function runGit(cwd: string, args: string[]): string | null {
  return runGitWith(execFileSync, cwd, gitEnv(), [...GIT_BASE_ARGS, ...args]);
}

/** runGit's body, self-contained: also runs on a worker thread as text (captureGitStatusInBackground). */
function runGitWith(exec: typeof execFileSync, cwd: string, env: NodeJS.ProcessEnv, args: string[]): string | null {
  try {
    return exec('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1024 * 1024 * 1024, windowsHide: true });
  } catch {
    return null;
  }
}

/** Splits `-z` output into its NUL-terminated fields. */
export function splitNul(out: string): string[] {
  const parts = out.split('\0');
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** A commit id we are willing to hand to git: anything that could be read as an option is refused. */
function isSafeRevision(rev: string): boolean {
  return rev.length > 0 && !rev.startsWith('-') && !rev.includes('\0') && !/\s/.test(rev);
}

const NOT_A_REPO: GitStatus = { branch: UNKNOWN, commit: UNKNOWN, staged: [], unstaged: [], untracked: [] };

/**
 * The outputs a status is read from: `rev-parse --is-inside-work-tree --show-prefix`, then (inside
 * a work tree) `status`, and for a run of the tracked files only, `ls-files --others` of the paths
 * whose untracked entries the caller does not hold (absent when none were asked for).
 */
export interface StatusOutputs {
  revParse: string | null;
  status: string | null;
  others?: string | null;
}

export const REV_PARSE_ARGS = ['rev-parse', '--is-inside-work-tree', '--show-prefix'];
export const STATUS_ARGS = ['status', '--porcelain=v2', '-z', '--branch', '--no-renames', '--untracked-files=all', '--', '.'];
/** The same status without the untracked walk (two thirds of a whole run on a 50k-file tree): for a caller that keeps that list itself. */
export const TRACKED_STATUS_ARGS = STATUS_ARGS.map((a) => (a === '--untracked-files=all' ? '--untracked-files=no' : a));
/** The untracked files at or below literal pathspecs (appended), as `status --untracked-files=all` lists them, relative to the directory git runs in. */
export const OTHERS_ARGS = ['ls-files', '-z', '--others', '--exclude-standard', '--'];

/**
 * Runs both commands (the second only inside a work tree); with `knownRevParse`, a caller that
 * proved rev-parse's answer unchanged (a resident process) runs only the status. Self-contained:
 * also runs as text.
 */
function statusOutputs(run: (args: string[]) => string | null, revParseArgs: string[], statusArgs: string[], knownRevParse?: string, othersArgs?: string[]): StatusOutputs {
  const revParse = knownRevParse ?? run(revParseArgs);
  const status = revParse !== null && revParse.startsWith('true\n') ? run(statusArgs) : null;
  return othersArgs === undefined ? { revParse, status } : { revParse, status, others: status === null ? null : run(othersArgs) };
}

/**
 * projectRoot's path inside its work tree (`''` at the top, else `'sub/dir/'`), or null outside one.
 * Parsed by hand because a directory name may itself contain a newline.
 */
function workTreePrefix(revParse: string | null): string | null {
  if (revParse === null || !revParse.startsWith('true\n')) return null;
  return revParse.slice('true\n'.length).replace(/\n$/, '');
}

/** Skips `count` space-separated fields of a porcelain v2 record; the rest is the path (which may hold spaces). */
function afterFields(record: string, count: number): string {
  let index = 0;
  for (let i = 0; i < count; i++) {
    index = record.indexOf(' ', index) + 1;
    if (index === 0) return '';
  }
  return record.slice(index);
}

/**
 * Branch, HEAD, staged, unstaged and untracked paths from ONE `git status --porcelain=v2` (it
 * refreshes the index once and walks the tree once, where five separate commands would each pay
 * for it). Porcelain paths are relative to the repository top; limited to projectRoot with a
 * pathspec and made relative to it by dropping the prefix, so a subdirectory root is consistent.
 */
export function captureGitStatus(projectRoot: string, paths?: readonly string[]): GitStatus {
  return parseStatus(captureStatusOutputs(projectRoot, paths));
}

/** The two outputs captureGitStatus parses (rev-parse's taken as `knownRevParse` when given). */
function captureStatusOutputs(projectRoot: string, paths?: readonly string[], knownRevParse?: string, trackedOthers?: readonly string[]): StatusOutputs {
  const { statusArgs, othersArgs } = commandsFor(paths, trackedOthers);
  return statusOutputs((args) => runGit(projectRoot, args), REV_PARSE_ARGS, statusArgs, knownRevParse, othersArgs);
}

/** The status command and, for a run of the tracked files (`trackedOthers` given), the untracked listing of those paths (none when there are none). */
function commandsFor(paths: readonly string[] | undefined, trackedOthers: readonly string[] | undefined): { statusArgs: string[]; othersArgs?: string[] } {
  if (trackedOthers === undefined) return { statusArgs: statusArgsFor(paths) };
  return trackedOthers.length === 0 ? { statusArgs: TRACKED_STATUS_ARGS } : { statusArgs: TRACKED_STATUS_ARGS, othersArgs: [...OTHERS_ARGS, ...trackedOthers] };
}

/** The status command, for the whole tree or (a long-running process's update) limited to `paths` (literal pathspecs, as GIT_BASE_ARGS says). */
function statusArgsFor(paths: readonly string[] | undefined): string[] {
  return paths === undefined ? STATUS_ARGS : [...STATUS_ARGS.slice(0, -1), ...paths];
}

/** The status from the outputs of the two commands (null: the command failed), as captureGitStatus reads them. */
export function parseStatus(outputs: StatusOutputs): GitStatus {
  const prefix = workTreePrefix(outputs.revParse);
  if (prefix === null) return { ...NOT_A_REPO, staged: [], unstaged: [], untracked: [] };
  const out = outputs.status;
  if (out === null) return { ...NOT_A_REPO, staged: [], unstaged: [], untracked: [] };
  const status: GitStatus = { branch: 'HEAD', commit: UNKNOWN, staged: [], unstaged: [], untracked: [] };
  const relative = (repoPath: string): string => (repoPath.startsWith(prefix) ? repoPath.slice(prefix.length) : repoPath);
  for (const record of splitNul(out)) {
    if (record.startsWith('# branch.oid ')) {
      const oid = record.slice('# branch.oid '.length);
      if (oid !== '(initial)') status.commit = oid;
    } else if (record.startsWith('# branch.head ')) {
      const head = record.slice('# branch.head '.length);
      // An unborn branch is named here too; a detached HEAD is '(detached)'.
      status.branch = head === '(detached)' ? 'HEAD' : head;
    } else if (record.startsWith('1 ') || record.startsWith('u ')) {
      const xy = record.slice(2, 4);
      const repoPath = afterFields(record, record.startsWith('1 ') ? 8 : 10);
      // Unmerged paths show in both `git diff --cached` and `git diff`, as they do here.
      if (xy[0] !== '.' || record.startsWith('u ')) status.staged.push(relative(repoPath));
      if (xy[1] !== '.' || record.startsWith('u ')) status.unstaged.push(relative(repoPath));
    } else if (record.startsWith('? ')) {
      status.untracked.push(relative(record.slice(2)));
    }
  }
  if (outputs.others !== undefined) {
    // ls-files names paths relative to the directory it ran in, as `relative` makes status's.
    if (outputs.others === null) return { ...NOT_A_REPO, staged: [], unstaged: [], untracked: [] };
    status.untracked.push(...splitNul(outputs.others));
  }
  return status;
}

/** A git index at least this big (~12k paths) means a `git status` worth running beside other work. */
const BACKGROUND_INDEX_BYTES = 1024 * 1024;
/** A worker thread boots in ~30 ms; one not running after this never will (thread limits, no memory): git runs here. */
const BACKGROUND_START_MS = 5000;
/** How long a caller waits for a running background status before running it itself. */
const BACKGROUND_WAIT_MS = 10 * 60 * 1000;

/**
 * The status thread's script: trivial, so it always runs. For each request it says it started
 * (done[1]), builds the shipped functions from their text and runs them inside try, and always
 * reports on the request's own port (done[0]): the outputs, or `failed` (then the caller runs git
 * itself, never taking a failure for "not a repository"). It stays for the next request.
 */
const STATUS_WORKER = `'use strict';
const { parentPort } = require('node:worker_threads');
const { execFileSync } = require('node:child_process');
// Source transformers that keep function names (esbuild keepNames, used by tsx) wrap inner
// functions in __name(fn, "name"): the shipped text gets the same no-op helper.
const build = (text) => new Function('__name', 'return (' + text + ');')((fn) => fn);
parentPort.on('message', (w) => {
  Atomics.store(w.done, 1, 1);
  Atomics.notify(w.done, 1);
  let message = { failed: true };
  try {
    const runGitWith = build(w.runGitWith);
    const statusOutputs = build(w.statusOutputs);
    message = { outputs: statusOutputs((args) => runGitWith(execFileSync, w.cwd, w.env, [...w.base, ...args]), w.revParseArgs, w.statusArgs, w.knownRevParse, w.othersArgs) };
  } catch {
    message = { failed: true };
  } finally {
    w.port.postMessage(message);
    w.port.close();
    Atomics.store(w.done, 0, 1);
    Atomics.notify(w.done, 0);
    if (w.once) parentPort.close(); // a thread for one request ends after it, read or not
  }
});
`;

/**
 * The status thread this process keeps between captures (unref'd, so it never keeps the process
 * alive): booting a thread costs ~20 ms of CPU on Node 20 (~10 on 26), taken from the core the
 * scan shares with git, on every capture a long-running process makes. `lastDone` is its latest
 * request's flags: while that is not reported, a request gets a thread of its own.
 */
let kept: { worker: Worker; lastDone: Int32Array } | null = null;

/** The thread id of the status thread this process keeps, or null when none is kept (for tests). */
export function keptStatusThreadId(): number | null {
  return kept?.worker.threadId ?? null;
}

/** A status thread for one request: the kept one when idle (booted on first use), else one stopped after it. */
function statusThread(): { worker: Worker; once: boolean } {
  const idle = kept !== null && Atomics.load(kept.lastDone, 0) === 1 ? kept : null;
  if (idle !== null) return { worker: idle.worker, once: false };
  const worker = new Worker(STATUS_WORKER, { eval: true });
  worker.unref();
  worker.on('error', () => undefined); // reported through `done` or not at all: the caller's wait decides
  if (kept !== null) return { worker, once: true };
  const own = { worker, lastDone: new Int32Array(1) };
  own.lastDone[0] = 1;
  worker.on('exit', () => {
    if (kept === own) kept = null;
  });
  kept = own;
  return { worker, once: false };
}

/**
 * When `git status` may run on a worker thread: CAIRN_GIT_STATUS_THREAD=always|never; else in a
 * process that stays (its thread booted once and kept, so only the overlap is left: at 5k files,
 * 1 % changed, a daemon's turn 242 → 178 ms on a quiet 2-core machine), else by index size.
 */
function statusThreadWanted(projectRoot: string, staying: boolean): boolean {
  const setting = process.env.CAIRN_GIT_STATUS_THREAD;
  if (setting === 'always') return true;
  if (setting === 'never') return false;
  return staying || gitIndexBytes(projectRoot) >= BACKGROUND_INDEX_BYTES;
}

/**
 * captureGitStatus started now on a worker thread, for a caller with other work to do meanwhile
 * (a `git status` of a 50k-file repository takes ~170 ms here, about what the inventory takes):
 * the returned function blocks until the status is there (a synchronous API stays synchronous).
 * A small repository (its index under 1 MiB, where booting a thread would cost more than it
 * saves) runs it right away unless `staying` says the caller is a long-running process, whose
 * kept thread boots once; CAIRN_GIT_STATUS_THREAD=always|never decides over both. The caller runs
 * git itself whenever the worker cannot start or fails: the status is always git's own.
 * `knownRevParse`: rev-parse's output, when the caller proved it unchanged (see statusOutputs).
 * `trackedOthers`: the status of the tracked files only (`--untracked-files=no`), its untracked
 * list being git's for those paths alone (`ls-files --others`): for a caller that holds the rest.
 * `indexFile`: an index copy for git to read on the thread (daemon/status-index.ts); a status read
 * in line or after a failure reads the real index, which answers the same.
 */
export function captureGitStatusInBackground(projectRoot: string, paths?: readonly string[], knownRevParse?: string, options: { staying?: boolean; trackedOthers?: readonly string[]; indexFile?: string } = {}): PendingGitStatus {
  const { trackedOthers, indexFile } = options;
  if (!statusThreadWanted(projectRoot, options.staying === true)) return settled(captureStatusOutputs(projectRoot, paths, knownRevParse, trackedOthers), 'inline');
  // [0] reported, [1] started.
  const done = new Int32Array(new SharedArrayBuffer(8));
  const { port1, port2 } = new MessageChannel();
  let thread: { worker: Worker; once: boolean };
  try {
    thread = statusThread();
    // An index copy with marked entries (daemon/status-index.ts): git's preload threads would
    // lstat every entry, marked or not, so they are turned off; git then looks at the unmarked alone.
    const env = indexFile === undefined ? gitEnv() : { ...gitEnv(), GIT_INDEX_FILE: indexFile };
    const base = indexFile === undefined ? GIT_BASE_ARGS : [...GIT_BASE_ARGS, '-c', 'core.preloadIndex=false'];
    const request = { cwd: projectRoot, env, base, revParseArgs: REV_PARSE_ARGS, ...commandsFor(paths, trackedOthers), knownRevParse, runGitWith: runGitWith.toString(), statusOutputs: statusOutputs.toString(), port: port2, done, once: thread.once };
    thread.worker.postMessage(request, [port2]);
    if (!thread.once && kept !== null && kept.worker === thread.worker) kept.lastDone = done;
  } catch {
    port1.close();
    return settled(captureStatusOutputs(projectRoot, paths, knownRevParse, trackedOthers), 'fallback');
  }
  let status: GitStatus | undefined;
  let revParse: string | null | undefined;
  let via: PendingGitStatus['via'] = 'pending';
  const read = (): GitStatus => {
    if (status !== undefined) return status;
    const started = Atomics.wait(done, 1, 0, BACKGROUND_START_MS) !== 'timed-out' || done[1] === 1;
    const reported = started && (Atomics.wait(done, 0, 0, BACKGROUND_WAIT_MS) !== 'timed-out' || done[0] === 1);
    const message = reported ? (receiveMessageOnPort(port1)?.message as { outputs?: StatusOutputs } | undefined) : undefined;
    // A thread that did not answer is never asked again; a one-request thread has done its job.
    if (thread.once || message === undefined) stopThread(thread.worker);
    port1.close();
    via = message?.outputs !== undefined ? 'thread' : 'fallback';
    const outputs = message?.outputs ?? captureStatusOutputs(projectRoot, paths, knownRevParse, trackedOthers);
    revParse = outputs.revParse;
    status = parseStatus(outputs);
    return status;
  };
  Object.defineProperty(read, 'revParse', { get: () => revParse });
  return Object.defineProperty(read, 'via', { get: () => via }) as PendingGitStatus;
}

function stopThread(worker: Worker): void {
  if (kept?.worker === worker) kept = null;
  void worker.terminate();
}

/**
 * A git status being read: call it for the status (blocking until it is there). `via` says how
 * it was read: in line (small repository), on the worker thread, or in line after the worker
 * could not start or failed (`fallback`); `pending` until called.
 */
export interface PendingGitStatus {
  (): GitStatus;
  readonly via: 'inline' | 'thread' | 'fallback' | 'pending';
  /** The `rev-parse` output the status was read with (null: git failed); undefined until read. */
  readonly revParse: string | null | undefined;
}

function settled(outputs: StatusOutputs, via: 'inline' | 'fallback'): PendingGitStatus {
  const status = parseStatus(outputs);
  return Object.defineProperties(() => status, { via: { value: via }, revParse: { value: outputs.revParse } }) as PendingGitStatus;
}

/** Size of the git index of the work tree holding `dir` (0 when there is none, or it lives elsewhere: a linked work tree or submodule). */
function gitIndexBytes(dir: string): number {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    try {
      const dotGit = fs.statSync(path.join(at, '.git'), { throwIfNoEntry: false });
      if (dotGit !== undefined) return dotGit.isDirectory() ? (fs.statSync(path.join(at, '.git', 'index'), { throwIfNoEntry: false })?.size ?? 0) : 0;
    } catch {
      return 0;
    }
    if (path.dirname(at) === at) return 0;
  }
}

/**
 * A modified file's diff is kept up to this many characters: a regenerated lock file or a minified
 * bundle must not turn every snapshot and store record into megabytes.
 */
export const MAX_DIFF_CHARS = 256 * 1024;

function capDiff(patch: string): string {
  if (patch.length <= MAX_DIFF_CHARS) return patch;
  return `${patch.slice(0, MAX_DIFF_CHARS)}\n[cairn: diff truncated, ${patch.length} characters in full; run git diff for the rest]\n`;
}

const STATUS_BY_LETTER: Record<string, FileDiff['status']> = { A: 'added', D: 'deleted' };

/** The flags of every patch this module asks for; the one-run and per-file paths must agree. */
const PATCH_ARGS = ['diff', '--relative', '--no-color', '--no-ext-diff', '--no-textconv'];

/** Every name-status letter except A and D: the pairs that get a patch (R and C cannot occur with --no-renames). */
const MODIFIED_FILTER = '--diff-filter=BCMRTUX';

/** Control characters, `"` and `\\`: what git C-quotes in a header even with core.quotePath=false. */
const C_ESCAPES: Record<string, string> = { '\x07': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\' };

/** How `path` ends a `diff --git` header line: as is, or inside git's C quotes. */
function headerTail(filePath: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[\x00-\x1f\x7f"\\]/.test(filePath)) return filePath;
  let quoted = '';
  for (const ch of filePath) {
    const code = ch.charCodeAt(0);
    const named = C_ESCAPES[ch];
    if (named !== undefined) quoted += `\\${named}`;
    else if (code < 0x20 || code === 0x7f) quoted += `\\${code.toString(8).padStart(3, '0')}`;
    else quoted += ch;
  }
  return `${quoted}"`;
}

/**
 * Splits one `git diff` into per-file patches, in output order. A patch starts at a `diff --git `
 * line (no body line can: they start with ' ', '+', '-', '\\', '@' or an extended-header word, and
 * git quotes any name holding a newline); a type change is two patches with the same header, so
 * consecutive pieces with one header are one file's. Null when the output does not start with one.
 */
function splitPatches(out: string): Array<{ header: string; patch: string }> | null {
  if (out.length === 0) return [];
  if (!out.startsWith('diff --git ')) return null;
  const starts = [0];
  for (let at = out.indexOf('\ndiff --git '); at !== -1; at = out.indexOf('\ndiff --git ', at + 1)) starts.push(at + 1);
  const files: Array<{ header: string; patch: string }> = [];
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i] as number;
    const end = i + 1 < starts.length ? (starts[i + 1] as number) : out.length;
    const lineEnd = out.indexOf('\n', start);
    const header = out.slice(start, lineEnd === -1 || lineEnd > end ? end : lineEnd);
    const piece = out.slice(start, end);
    const last = files[files.length - 1];
    if (last !== undefined && last.header === header) last.patch += piece;
    else files.push({ header, patch: piece });
  }
  return files;
}

/**
 * The patches of `paths` (the modified files, in `git diff --name-status` order) from ONE `git diff`
 * over the range, or null when its pieces cannot be matched to `paths` one for one, in order.
 * `--no-renames` and the filter only drop added and deleted pairs (rename detection never touches a
 * modified pair without -B), so each modified file's patch is the one a per-file run gives.
 */
function patchesInOneRun(projectRoot: string, fromCommit: string, toCommit: string, paths: string[]): string[] | null {
  const out = runGit(projectRoot, [...PATCH_ARGS, '--no-renames', MODIFIED_FILTER, fromCommit, toCommit, '--']);
  if (out === null) return null;
  const files = splitPatches(out);
  if (files === null || files.length !== paths.length) return null;
  for (let i = 0; i < paths.length; i++) {
    if (!(files[i] as { header: string }).header.endsWith(headerTail(paths[i] as string))) return null;
  }
  return files.map((file) => file.patch);
}

/**
 * Files changed between two commits. Renames are split into the old path `deleted` and the new
 * path `added` (`--no-renames`), so no path is lost; type changes and the rest are `modified`.
 * Modified files carry their own `git diff` (capped at MAX_DIFF_CHARS), cut from one `git diff`
 * over the whole range; when that output cannot be matched to the files exactly, one git process
 * per file, as upstream.
 */
export function calculateFileDiffs(projectRoot: string, fromCommit: string, toCommit: string): FileDiff[] {
  if (fromCommit === UNKNOWN || toCommit === UNKNOWN) return [];
  if (!isSafeRevision(fromCommit) || !isSafeRevision(toCommit)) return [];
  if (fromCommit === toCommit) return []; // no commit in the session: nothing to ask git
  const out = runGit(projectRoot, ['diff', '--name-status', '-z', '--no-renames', '--relative', '--no-ext-diff', fromCommit, toCommit, '--']);
  if (out === null) return [];
  const fields = splitNul(out);
  const diffs: FileDiff[] = [];
  const modified: FileDiff[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const letter = (fields[i] ?? '').charAt(0);
    const filePath = fields[i + 1] as string;
    const status = STATUS_BY_LETTER[letter] ?? 'modified';
    const entry: FileDiff = { path: filePath, status };
    if (status === 'modified') modified.push(entry);
    diffs.push(entry);
  }
  if (modified.length === 0) return diffs;
  const patches = patchesInOneRun(
    projectRoot,
    fromCommit,
    toCommit,
    modified.map((entry) => entry.path),
  );
  modified.forEach((entry, i) => {
    const patch = patches !== null ? (patches[i] as string) : runGit(projectRoot, [...PATCH_ARGS, fromCommit, toCommit, '--', entry.path]);
    if (patch !== null) entry.diff = capDiff(patch);
  });
  return diffs;
}

/** Commits reachable from HEAD but not from `sinceCommit`, as `"<sha> <subject>"`, newest first. */
export function getCommitsSince(projectRoot: string, sinceCommit: string): string[] {
  if (sinceCommit === UNKNOWN || !isSafeRevision(sinceCommit)) return [];
  return logLines(projectRoot, `${sinceCommit}..HEAD`);
}

/** Every commit reachable from HEAD (used when the session started on an unborn branch). */
export function getAllCommits(projectRoot: string): string[] {
  return logLines(projectRoot, 'HEAD');
}

function logLines(projectRoot: string, range: string): string[] {
  const out = runGit(projectRoot, ['log', '--no-color', '-z', '--format=%H %s', range, '--']);
  if (out === null) return [];
  return splitNul(out)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

/** The id of the empty tree in this repository's hash format (sha1 or sha256). */
export function emptyTree(projectRoot: string): string | null {
  const out = runGit(projectRoot, ['hash-object', '-t', 'tree', '--stdin']);
  const id = out?.trim();
  return id ? id : null;
}
