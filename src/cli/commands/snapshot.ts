import * as path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { CairnError } from '../../core/errors.js';
import type { RepoSnapshot } from '../../inventory/types.js';
import { ExitCode, progressAllowed, writeJson, type CliIO } from '../io.js';

const SNAPSHOT_HELP = `
Takes a deterministic, content-addressed inventory of a directory: every file's path, size,
sha256, mode (0644/0755) and kind (file/symlink), sorted, with a snapshotDigest over the body.
.gitignore files at every level are honoured; .git/, .cairn/ and .axiom/ are always skipped. Names that
cannot be recorded (not NFC, trailing space or dot, reserved, not UTF-8), FIFOs and files that
vanish mid-scan are left out and counted on stderr (--verbose lists them).

A stat cache outside the tree (under $XDG_CACHE_HOME/cairn or ~/.cache/cairn) makes repeated
snapshots re-read only changed files and re-list only changed directories; an unchanged tree's
output is copied from the last run's. --no-cache turns it off; --cache-dir moves it.

Examples:
  cairn snapshot --root . -o before.json --include "src/**"
  cairn snapshot --root . --exclude "vendor/**" --max-files 50000 > snap.json
  cairn snapshot-diff before.json after.json --exit-code

A snapshot cut by --max-files or --max-bytes keeps the seed's document (truncated: true) and
exit 0, and says on stderr which limit cut it, how many files and bytes are left out, and the flag
that lifts it.

Exit codes: 0 ok, 1 failure, 2 usage error or invalid option (JSON error on stderr).`;

const DIFF_HELP = `
Compares two RepoSnapshot files by path: added, removed, and changed entries (sha256 when both
sides have one, else size and kind; a mode or kind change counts). Both files are validated
against the RepoSnapshot schema and their snapshotDigest is checked (exit 2 when either fails).
A truncated snapshot (truncated: true) is the prefix of the full inventory up to its last path:
paths after that cut are not reported as added/removed/changed but listed under "beyondCut"
({truncated, after, paths}), with a notice on stderr; they do not count for --exit-code.

Exit codes: 0 ok (or differences without --exit-code), 1 differences with --exit-code, 2 invalid input.`;

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function nonNegativeInt(flag: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError(`${flag} must be a non-negative integer.`);
    return Number(value);
  };
}

interface SnapshotFlags {
  root: string;
  out?: string;
  include: string[];
  exclude: string[];
  maxFiles?: number;
  maxBytes?: number;
  gitignore: boolean;
  digest: boolean;
  cache: boolean;
  cacheDir?: string;
  jobs?: number;
  verbose?: boolean;
  json?: boolean;
}

/** Registers `cairn snapshot` and `cairn snapshot-diff`. */
export function registerSnapshotCommands(program: Command, io: CliIO): void {
  program
    .command('snapshot')
    .summary('inventory a directory tree (paths, sizes, sha256) as a RepoSnapshot')
    .description('Inventory a directory tree as a RepoSnapshot document (axiom.dev/v2).')
    .requiredOption('--root <dir>', 'directory to snapshot (required; a relative path is resolved from the current directory)')
    .option('-o, --out <file>', 'write the snapshot to <file> and print a one-line summary instead')
    .option('--include <glob>', 'keep only files matching (repeatable; ** any depth, * one segment, ?)', collect, [])
    .option('--exclude <glob>', 'drop files and prune directories matching (repeatable)', collect, [])
    .option('--max-files <n>', 'stop after n files (default 20000, at most 50000); truncated: true', nonNegativeInt('--max-files'))
    .option('--max-bytes <n>', 'stop before the total size exceeds n bytes (default 64 MiB)', nonNegativeInt('--max-bytes'))
    .option('--no-gitignore', 'do not apply .gitignore files')
    .option('--no-digest', 'record sizes only, no sha256 (fast on huge trees)')
    .option('--no-cache', 'do not read or write the stat cache')
    .option('--cache-dir <dir>', 'keep the stat cache in <dir> (must be outside the root)')
    .option('--jobs <n>', 'hash worker threads (default 2; 0 = hash on the main thread)', nonNegativeInt('--jobs'))
    .option('--verbose', 'list every skipped path on stderr')
    .option('--json', 'accepted for uniformity: the output is always JSON')
    .addHelpText('after', SNAPSHOT_HELP)
    .action(async (flags: SnapshotFlags) => runSnapshot(io, flags));

  program
    .command('snapshot-diff')
    .summary('compare two RepoSnapshot files')
    .description('Compare two RepoSnapshot files: added, removed and changed paths.')
    .argument('<a.json>', 'the earlier snapshot')
    .argument('<b.json>', 'the later snapshot')
    .option('--exit-code', 'exit 1 when there are differences (like git diff --exit-code)')
    .option('--json', 'accepted for uniformity: the output is always JSON')
    .addHelpText('after', DIFF_HELP)
    .action(async (a: string, b: string, flags: { exitCode?: boolean }) => runDiff(io, a, b, flags));
}

async function runSnapshot(io: CliIO, flags: SnapshotFlags): Promise<void> {
  // Lazy: `cairn <anything else>` does not pay for loading the scanner.
  const [{ snapshotForOutput }, { writeRepoSnapshot }] = await Promise.all([import('../../inventory/snapshot.js'), import('../../inventory/memo/render.js')]);
  const root = path.resolve(io.cwd, flags.root);
  // Inside the root the scan looks files up by their short relative paths, which the kernel
  // resolves faster than the root's whole path each time. Process-wide and not undone: every
  // path this command uses after this line must be resolved against io.cwd, never the process's.
  if (io.ownsProcess === true) moveInto(root);
  const progress = progressAllowed(io, false) ? new ProgressLine(io.stderr) : undefined;
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.once('SIGINT', onSigint);
  let result: Awaited<ReturnType<typeof snapshotForOutput>>;
  try {
    result = await snapshotForOutput(root, {
      include: flags.include,
      exclude: flags.exclude,
      ...(flags.maxFiles !== undefined ? { maxFiles: flags.maxFiles } : {}),
      ...(flags.maxBytes !== undefined ? { maxBytes: flags.maxBytes } : {}),
      ...(flags.jobs !== undefined ? { jobs: flags.jobs } : {}),
      ...(flags.cacheDir !== undefined ? { cacheDir: path.resolve(io.cwd, flags.cacheDir) } : {}),
      respectGitignore: flags.gitignore,
      withContentDigest: flags.digest,
      cache: flags.cache,
      signal: controller.signal,
      ...(progress !== undefined ? { onProgress: progress.update } : {}),
    });
  } finally {
    process.removeListener('SIGINT', onSigint);
    progress?.clear();
  }
  const { snapshot, skipped, warnings, scanned } = result;
  if (snapshot.body.truncated) await sayTruncated(io, root, snapshot, flags);
  for (const w of warnings) io.stderr.write(`cairn: notice: ${w.message}${w.path !== undefined ? ` (${w.path})` : ''}\n`);
  if (skipped.length > 0) {
    if (flags.verbose) for (const s of skipped) io.stderr.write(`cairn: skipped ${JSON.stringify(s.path)}: ${s.reason}${s.detail !== undefined ? ` (${s.detail})` : ''}\n`);
    const byReason = new Map<string, number>();
    for (const s of skipped) byReason.set(s.reason, (byReason.get(s.reason) ?? 0) + 1);
    const parts = [...byReason].map(([r, n]) => `${n} ${r}`).join(', ');
    io.stderr.write(`cairn: ${skipped.length} path${skipped.length === 1 ? '' : 's'} skipped (${parts})${flags.verbose ? '' : '; --verbose lists them'}\n`);
  }
  if (flags.out === undefined) {
    await writeRepoSnapshot(snapshot, { out: io.stdout }, scanned);
    return;
  }
  const out = path.resolve(io.cwd, flags.out);
  try {
    await writeRepoSnapshot(snapshot, { file: out }, scanned);
  } catch (e) {
    throw new CairnError('ERR_IO', `cannot write ${out}: ${e instanceof Error ? e.message : String(e)}`, { path: out, cause: e, exitCode: 1 });
  }
  writeJson(io, { snapshotDigest: snapshot.snapshotDigest, files: snapshot.body.counts.files, bytes: snapshot.body.counts.bytes, truncated: snapshot.body.truncated, out });
}

/** The seed's document and exit code stay; stderr says what was cut, how much, and how to lift it. */
async function sayTruncated(io: CliIO, root: string, snapshot: RepoSnapshot, flags: SnapshotFlags): Promise<void> {
  const [{ measureTruncation }, { SNAPSHOT_MAX_FILES_CAP }] = await Promise.all([import('../../inventory/truncation.js'), import('../../inventory/snapshot.js')]);
  const r = await measureTruncation(root, snapshot, {
    include: flags.include,
    exclude: flags.exclude,
    respectGitignore: flags.gitignore,
    ...(flags.maxFiles !== undefined ? { maxFiles: flags.maxFiles } : {}),
    ...(flags.maxBytes !== undefined ? { maxBytes: flags.maxBytes } : {}),
  });
  const files = `${r.filesLeftOut} file${r.filesLeftOut === 1 ? '' : 's'}`;
  const lift = r.cutBy === '--max-files' ? `raise --max-files (at most ${SNAPSHOT_MAX_FILES_CAP}) or` : 'raise --max-bytes or';
  io.stderr.write(
    `cairn: snapshot truncated at ${r.cutBy} ${r.limit}: ${files} (${r.bytesLeftOut} bytes) left out; ${lift} narrow it with --include/--exclude. ` +
      'snapshot-diff compares a truncated snapshot only up to its last path\n',
  );
}

function moveInto(dir: string): void {
  try {
    process.chdir(dir);
  } catch {
    // not a directory we can enter: the scan reports the root's problem itself
  }
}

async function readSnapshotFile(io: CliIO, file: string): Promise<unknown> {
  const [fsp, { constants }, { jsonTextDepth, MAX_JSON_DEPTH }, { decodeUtf8Strict }] = await Promise.all([
    import('node:fs/promises'),
    import('node:fs'),
    import('../../core/bounded-json.js'),
    import('../../core/utf8.js'),
  ]);
  const abs = path.resolve(io.cwd, file);
  let text: string;
  try {
    // Non-blocking, and only a regular file: a FIFO or a device named here must not hang the diff.
    const fh = await fsp.open(abs, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    try {
      if (!(await fh.stat()).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'not a regular file' });
      text = decodeUtf8Strict(await fh.readFile(), file);
    } finally {
      await fh.close();
    }
  } catch (e) {
    const code = (e as { code?: string }).code ?? 'error';
    throw new CairnError('ERR_INVALID_SNAPSHOT', `cannot read ${file} (${code === 'ERR_CORRUPT' ? 'not UTF-8' : code}): pass a snapshot file written by cairn snapshot -o`, { path: file });
  }
  if (jsonTextDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new CairnError('ERR_INVALID_SNAPSHOT', `${file} nests more than ${MAX_JSON_DEPTH} levels deep: it is not a snapshot written by cairn snapshot -o`, { path: file });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CairnError('ERR_INVALID_SNAPSHOT', `${file} is not JSON (${e instanceof Error ? e.message : String(e)})`, { path: file });
  }
}

async function runDiff(io: CliIO, a: string, b: string, flags: { exitCode?: boolean }): Promise<void> {
  const [{ validateRepoSnapshot }, { isEmptySnapshotDiff }, { diffWithinCut }] = await Promise.all([
    import('../../inventory/schema.js'),
    import('../../inventory/diff.js'),
    import('../../inventory/truncation.js'),
  ]);
  const left = validateRepoSnapshot(await readSnapshotFile(io, a), a);
  const right = validateRepoSnapshot(await readSnapshotFile(io, b), b);
  const diff = diffWithinCut(left, right);
  writeJson(io, diff);
  if (diff.beyondCut !== undefined) {
    const sides = diff.beyondCut.truncated.map((s) => (s === 'a' ? a : b)).join(' and ');
    const where = diff.beyondCut.after === null ? 'any path' : JSON.stringify(diff.beyondCut.after);
    io.stderr.write(`cairn: ${sides} ${diff.beyondCut.truncated.length === 1 ? 'is' : 'are'} truncated: compared up to ${where} only; ${diff.beyondCut.paths.length} path(s) after it are listed under beyondCut, not as changes\n`);
  }
  if (flags.exitCode && !isEmptySnapshotDiff(diff)) throw new ExitCode(1);
}

/** One self-overwriting status line on a TTY stderr, shown only for runs longer than ~0.5 s. */
class ProgressLine {
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;

  constructor(private readonly stream: NodeJS.WritableStream) {}

  readonly update = (p: { phase: string; filesSeen: number; filesDone: number; filesHashed: number; bytesHashed: number; filesCached: number }): void => {
    const now = Date.now();
    if (p.phase === 'done' || now - this.started < 500 || now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.drawn = true;
    const mb = (p.bytesHashed / (1024 * 1024)).toFixed(1);
    this.stream.write(`\r\x1b[Kcairn: ${p.filesDone}/${p.filesSeen} files, ${p.filesHashed} hashed (${mb} MiB), ${p.filesCached} from cache`);
  };

  clear(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
  }
}
