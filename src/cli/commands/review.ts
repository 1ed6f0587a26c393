/**
 * `cairn session diff|list|report`: how iterations changed the project, in git's formats, as a
 * list, as a text report or as one self-contained HTML page. A thin shell over `src/review/`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { CairnError } from '../../core/errors.js';
import { UsageError, writeJson, writeLine, type CliIO } from '../io.js';
import { checkOutputFile, outputWriteError, writesInPlace } from '../output-target.js';
import { ROOT_HELP, projectRoot } from '../root.js';

type ReviewLib = typeof import('../../review/index.js');
type SessionLib = typeof import('../../session/index.js');

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

/** The review of an iteration finished before reviews were kept; null when it cannot be diffed. */
function tryBuildReview(lib: ReviewLib, root: string, it: ReturnType<ReviewLib['loadIteration']>): ReturnType<ReviewLib['buildReview']> | null {
  try {
    return lib.buildReview(root, it);
  } catch (e) {
    if (e instanceof CairnError && e.code === 'ERR_NO_INVENTORY') return null;
    throw e;
  }
}

/**
 * The iteration a user names: a number (`3`, `003`), a directory (relative to the current
 * directory), or a bare name under <root>/.cairn/iterations/. Not found → ERR_USAGE (exit 2, as
 * every command says of an unknown iteration), naming the iterations that do exist.
 */
function findIterationDir(lib: SessionLib, io: CliIO, name: string, root: string): string {
  if (/^\d+$/.test(name)) {
    // `3` names 003 too (the spec's ITERATION); an unknown number falls through to the message below
    const numbered = lib.listIterationDirs(root).find((d) => Number(path.basename(d)) === Number(name));
    if (numbered !== undefined) name = path.relative(io.cwd, numbered) || '.';
  }
  const hasPre = (dir: string): boolean => fs.existsSync(path.join(dir, lib.PRE_SNAPSHOT_FILE));
  const asGiven = path.resolve(io.cwd, name);
  const underRoot = path.join(lib.iterationsRoot(root), name);
  const bare = !name.includes('/') && !name.includes(path.sep);
  const found = hasPre(asGiven) ? asGiven : bare && hasPre(underRoot) ? underRoot : null;
  if (found === null) {
    const known = lib.listIterationDirs(root).filter(hasPre);
    const listed = known.length === 0 ? `there are no iterations under ${lib.iterationsRoot(root)} (run \`cairn session pre\` first)` : `iterations under ${lib.iterationsRoot(root)}: ${known.map((d) => `${path.basename(d)}${fs.existsSync(path.join(d, lib.POST_SNAPSHOT_FILE)) ? '' : ' (open)'}`).join(', ')}`;
    throw new CairnError('ERR_USAGE', `no iteration ${JSON.stringify(name)} (looked for ${lib.PRE_SNAPSHOT_FILE} in ${asGiven}${bare ? ` and ${underRoot}` : ''}); ${listed}`, { path: asGiven, exitCode: 2 });
  }
  return found;
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
    .argument('[iteration]', 'iteration number (3 or 003) or directory (default: the latest, the one with the highest number)')
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
Exit codes: 0 ok, 1 failure, 2 usage (unknown iteration, one still open, bad flag).`,
    )
    .action(async (iterationArg: string | undefined, opts: DiffOptions) => {
      const formats = [opts.nameStatus, opts.stat, opts.patch].filter(Boolean).length;
      if (formats > 1) throw new UsageError('pick one of --name-status, --stat and --patch');
      const lib = await load();
      const root = rootFor(io, opts.root, iterationArg);
      const it = lib.loadIteration(root, lib.resolveIteration(root, iterationArg, { cwd: io.cwd }));
      if (it.post === null) throw lib.notFinishedError(root, it);
      const patch = !(opts.json || opts.nameStatus || opts.stat);
      // The review `session post` kept answers without reading inventories or content again;
      // else the diff is computed, hunks only for the patch (the other formats print counts).
      const saved = patch ? null : lib.savedFileChanges(it, { within: root });
      const savedText = patch ? lib.savedPatch(it, root) : null;
      if (savedText !== null) {
        io.stdout.write(savedText);
        return;
      }
      const changes = saved ?? lib.iterationFileChanges(root, it, { hunks: patch });
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
    .command('report')
    .description('Print the report of a finished iteration again, or write it as one HTML page (--html)')
    .argument('[iteration]', 'iteration number (3 or 003) or directory (default: the latest, the one with the highest number)')
    .option('--root <dir>', ROOT_HELP)
    .option('--html <file>', 'write one self-contained HTML page (no network, no external files) to FILE')
    .option('--all', 'every iteration of the project: a timeline (with --html), or each report in turn')
    .option('--json', 'print the SnapshotDiff as one JSON document')
    .addHelpText(
      'after',
      `
Examples:
  cairn session report                        # text report of the latest iteration
  cairn session report 3 --html review.html   # iteration 003 as a page to open in a browser
  cairn session report --all --html all.html  # every iteration on one timeline

Exit codes: 0 ok, 1 failure, 2 usage (unknown iteration, one still open, bad flag,
a directory given as --html FILE).`,
    )
    .action(async (iterationArg: string | undefined, opts: { root?: string; html?: string; all?: boolean; json?: boolean }) => {
      if (opts.all && iterationArg !== undefined) throw new UsageError('--all covers every iteration; leave out the iteration argument');
      if (opts.json && (opts.html !== undefined || opts.all)) throw new UsageError('--json prints one iteration\'s SnapshotDiff; it does not combine with --html or --all');
      // The page's file is checked before any iteration is read (output-target.ts).
      const target = opts.html === undefined ? undefined : path.resolve(io.cwd, opts.html);
      if (target !== undefined) checkOutputFile(target, '--html', 'report.html');
      const lib = await load();
      const session = await import('../../session/index.js');
      const root = rootFor(io, opts.root, iterationArg);
      const finished = (dir: string) => fs.existsSync(path.join(dir, session.POST_SNAPSHOT_FILE));
      let dirs: string[];
      if (opts.all) dirs = session.listIterationDirs(root).filter((d) => fs.existsSync(path.join(d, session.PRE_SNAPSHOT_FILE)) && finished(d));
      else if (iterationArg !== undefined) dirs = [findIterationDir(session, io, iterationArg, root)];
      else dirs = [lib.resolveIteration(root, undefined, { cwd: io.cwd })]; // the latest, as diff and restore take it
      const iterations = dirs.map((d) => lib.loadIteration(root, d));
      for (const it of iterations) if (it.post === null) throw lib.notFinishedError(root, it);
      if (opts.json) {
        writeJson(io, (iterations[0] as (typeof iterations)[number]).diff);
        return;
      }
      const { standingRestores } = await import('../../rewind/journal.js');
      const restores = standingRestores(root);
      const restored = (it: { iteration: string }) => restores.get(it.iteration) ?? null;
      if (target !== undefined) {
        // From the review kept at post when its patch is whole, else computed.
        const rows = iterations.map((it) => ({ it, changes: lib.savedFileChanges(it, { hunks: true, within: root }) ?? lib.iterationFileChanges(root, it), restored: restored(it) }));
        const options = { project: path.basename(root) };
        const html = opts.all ? lib.renderTimelineHtml(rows, options) : lib.renderIterationHtml(rows[0] as (typeof rows)[number], options);
        const { writeFileAtomicSync } = await import('../../core/atomic-write.js');
        try {
          if (writesInPlace(target)) fs.writeFileSync(target, html); // a device or FIFO: written into, never renamed over
          else writeFileAtomicSync(target, html);
        } catch (e) {
          throw outputWriteError(target, e);
        }
        writeLine(io.stderr, `cairn: report written to ${opts.html} (${rows.length} iteration${rows.length === 1 ? '' : 's'}, ${Buffer.byteLength(html)} bytes); open it in a browser`);
        return;
      }
      if (iterations.length === 0) {
        io.stdout.write(lib.renderIterationList([]));
        return;
      }
      const texts = iterations.map((it) => {
        const review = lib.readSavedReview(it.dir, root) ?? tryBuildReview(lib, root, it);
        const rel = path.relative(io.cwd, it.dir);
        const files = review === null ? {} : { files: review.files, notCaptured: review.notCaptured };
        return session.renderIterationReport({ iterationDir: rel === '' || rel.startsWith('..') ? it.dir : rel, cwd: io.cwd, pre: it.pre, post: it.post as NonNullable<typeof it.post>, diff: it.diff as NonNullable<typeof it.diff>, ...files, restored: restored(it) });
      });
      io.stdout.write(texts.join('\n'));
    });

  session
    .command('list')
    .description('One line per iteration: number, start, duration, files changed (+/−), commits, tests, restored or not')
    .option('--root <dir>', ROOT_HELP)
    .option('--json', 'print {iterations: [{iteration, startedAt, durationMs, filesChanged, additions, deletions, commits, tests?, restored}]} (restored: null, or {to, restore, at} of the restore that put the project back to it)')
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
