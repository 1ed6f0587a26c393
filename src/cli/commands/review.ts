/**
 * `cairn session diff|list|report`: how iterations changed the project, in git's formats, as a
 * list, as a text report or as one self-contained HTML page. A thin shell over `src/review/`.
 */
import * as path from 'node:path';
import type { Command } from 'commander';
import { UsageError, writeJson, writeLine, type CliIO } from '../io.js';
import { ROOT_HELP, projectRoot } from '../root.js';

type ReviewLib = typeof import('../../review/index.js');

async function load(): Promise<ReviewLib> {
  return import('../../review/index.js');
}

/** `--root` or the discovered root; an iteration directory under `<root>/.cairn/iterations/` names its own project. */
function rootFor(io: CliIO, flag: string | undefined, iterationArg?: string): string {
  if (flag === undefined && iterationArg !== undefined && !/^\d+$/.test(iterationArg)) {
    const parent = path.dirname(path.resolve(io.cwd, iterationArg));
    if (path.basename(parent) === 'iterations' && path.basename(path.dirname(parent)) === '.cairn') return path.dirname(path.dirname(parent));
  }
  return projectRoot(io, flag);
}

interface DiffOptions {
  root?: string;
  nameStatus?: boolean;
  stat?: boolean;
  patch?: boolean;
  json?: boolean;
}

export function registerReviewCommands(session: Command, io: CliIO): void {
  session
    .command('diff')
    .description('Show how an iteration changed the project, pre → post, committed or not, as git shows a diff')
    .argument('[iteration]', 'iteration number (3 or 003) or directory (default: the latest finished one)')
    .option('--root <dir>', ROOT_HELP)
    .option('--name-status', 'one line per file: A, M, D, T or R<score>, then the path(s)')
    .option('--stat', "git's diffstat")
    .option('--patch', 'unified diff that `git apply` takes (the default)')
    .option('--json', 'print {iteration, files: [{path, status, oldPath?, additions, deletions, binary}]}')
    .addHelpText(
      'after',
      `
Examples:
  cairn session diff                 # patch of the latest iteration
  cairn session diff 3 --stat        # diffstat of iteration 003
  cairn session diff --patch | git apply -R   # undo the latest iteration's file changes by hand

Files whose bytes cairn did not capture are named on stderr and left out of the patch.
Exit codes: 0 ok, 1 failure, 2 usage (unknown iteration, bad flag).`,
    )
    .action(async (iterationArg: string | undefined, opts: DiffOptions) => {
      const formats = [opts.nameStatus, opts.stat, opts.patch].filter(Boolean).length;
      if (formats > 1) throw new UsageError('pick one of --name-status, --stat and --patch');
      const lib = await load();
      const root = rootFor(io, opts.root, iterationArg);
      const it = lib.loadIteration(root, lib.resolveIteration(root, iterationArg, { cwd: io.cwd }));
      const changes = lib.iterationFileChanges(root, it);
      const missing = changes.filter((c) => c.notCaptured !== undefined);
      if (opts.json) {
        writeJson(io, { iteration: it.iteration, files: changes.map(lib.reviewFile) });
      } else if (opts.nameStatus) io.stdout.write(lib.renderNameStatus(changes));
      else if (opts.stat) io.stdout.write(lib.renderStat(changes));
      else io.stdout.write(lib.renderPatch(changes).text);
      if (missing.length > 0) {
        writeLine(io.stderr, `cairn: the content of ${missing.length} file${missing.length === 1 ? ' was' : 's were'} not captured, so ${missing.length === 1 ? 'it is' : 'they are'} not in the patch and ${missing.length === 1 ? 'its' : 'their'} counts are 0:`);
        for (const c of missing.slice(0, 20)) writeLine(io.stderr, `  ${c.path} (${(c.notCaptured ?? []).join(' and ')})`);
        if (missing.length > 20) writeLine(io.stderr, `  … and ${missing.length - 20} more`);
      }
    });

  session
    .command('list')
    .description('One line per iteration: number, start, duration, files changed (+/−), commits, tests')
    .option('--root <dir>', ROOT_HELP)
    .option('--json', 'print {iterations: [{iteration, startedAt, durationMs, filesChanged, additions, deletions, commits, tests?}]}')
    .action(async (opts: { root?: string; json?: boolean }) => {
      const lib = await load();
      const rows = lib.listIterations(projectRoot(io, opts.root));
      if (opts.json) {
        writeJson(io, { iterations: rows.map(({ finished: _finished, ...row }) => row) });
        return;
      }
      io.stdout.write(lib.renderIterationList(rows));
    });
}
