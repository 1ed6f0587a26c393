import * as path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { CairnError } from '../../core/errors.js';
import { ExitCode, writeJson, type CliIO } from '../io.js';
import { runSnapshot, type SnapshotFlags } from './snapshot-run.js';

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
