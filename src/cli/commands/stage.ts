import * as path from 'node:path';
import type { Command } from 'commander';
import { isCairnError } from '../../core/errors.js';
import { findProjectRoot } from '../../core/root.js';
import { STAGE_CHECK_EXIT_HELP, STAGE_SHOW_EXIT_HELP } from '../exit-codes.js';
import { ExitCode, UsageError, writeJson, type CliIO } from '../io.js';
// The library is loaded when a command runs, so other commands do not pay for it.
import type { WriteStageSnapshotOptions } from '../../stage/index.js';

const WRITE_SYNOPSIS = `Usage: cairn stage write --root <dir> --task <TASK-ID> --stage <stage> --command </dr-name>
                         --captured-by <agent|operator> --recommended-next </dr-name>
                         --body-file <path> [--options-file <path>] [--captured-at <ISO8601 UTC>]
                         [--dir <snapshot dir>] [--json]
Usage: write_stage_snapshot <the same flags>   (the Datarim writer this command replaces)
`;

const WRITE_USAGE = `${WRITE_SYNOPSIS}
Writes <root>/datarim/snapshots/<TASK-ID>.snapshot.md whole (overwrite): YAML frontmatter,
a blank line, then the body, at most 8192 bytes in all. A body that does not fit is cut at
a UTF-8 character boundary and ends with
  <!-- snapshot-truncated, full response in session jsonl -->

Required: --root --task --stage --command --captured-by --recommended-next --body-file
  --root <dir>              an existing directory (the repository root)
  --task <TASK-ID>          ^[A-Z]{2,10}-[0-9]{4}(-[A-Za-z0-9]+)*$, e.g. TUNE-0254
  --stage <stage>           init prd plan design do qa verify compliance archive edit publish
                            write dream doctor optimize auto, or any ^[a-z][a-z0-9-]{0,31}$
  --command </dr-name>      the command that produced the note, e.g. /dr-plan
  --captured-by <who>       agent or operator
  --recommended-next <cmd>  the primary next step, e.g. /dr-do
  --body-file <path>        the rendered summary + CTA (copied byte for byte when it fits)
Optional:
  --options-file <path>     one "</dr-x> | <purpose>" per line; missing file = no options
  --captured-at <time>      ISO 8601 UTC, e.g. 2026-05-21T13:45:00Z (default: now)
  --dir <dir>               snapshot directory below the root (default datarim/snapshots)
  --json                    print {path, sizeBytes, truncated} as JSON
  -h, --help                this text (exit 0)

Environment:
  DATARIM_DISABLE_SNAPSHOT=1   do nothing and exit 0 (exactly "1")
  DR_SNAPSHOT_LOCK_TIMEOUT=<s> wait this long for the per-task lock (default 60; 0 = do not wait)

Exit codes (the seed writer's, kept): 0 written (or disabled), 1 validation or I/O failure
(a bad task id, stage, --captured-by or --captured-at; a body or options file that is not
UTF-8), 2 usage, 3 lock timeout. With --json a
failure prints {code, message, path?, details?} as one JSON line on stderr, as every command does.

Example:
  printf '%s\\n' '/dr-do TUNE-0254 | execute the plan' > /tmp/options.txt
  cairn stage write --root "$PWD" --task TUNE-0254 --stage plan --command /dr-plan \\
    --captured-by agent --recommended-next /dr-do --body-file /tmp/body.md --options-file /tmp/options.txt
  cairn stage check --task TUNE-0254 --validate-frontmatter   # then: cairn stage show TUNE-0254
`;

/** Flag → option key; the seed's flags plus cairn's --dir. */
const VALUE_FLAGS: Record<string, keyof WriteStageSnapshotOptions> = {
  '--root': 'root',
  '--task': 'task',
  '--stage': 'stage',
  '--command': 'command',
  '--captured-by': 'capturedBy',
  '--recommended-next': 'recommendedNext',
  '--options-file': 'optionsFile',
  '--body-file': 'bodyFile',
  '--captured-at': 'capturedAt',
  '--dir': 'dir',
};

type ParsedWriteArgs = { kind: 'help' } | { kind: 'usage'; message: string } | { kind: 'write'; values: Partial<Record<keyof WriteStageSnapshotOptions, string>>; json: boolean };

/**
 * The seed's argument grammar, parsed by hand so messages and exit codes are exactly its own:
 * `--flag value` (the next word is the value, whatever it looks like), last one wins;
 * `--flag=value` is accepted too.
 */
export function parseWriteArgs(args: readonly string[]): ParsedWriteArgs {
  const values: Partial<Record<keyof WriteStageSnapshotOptions, string>> = {};
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '-h' || arg === '--help') return { kind: 'help' };
    if (arg === '--json') {
      json = true;
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const key = VALUE_FLAGS[flag];
    if (key === undefined) return { kind: 'usage', message: `unknown arg: ${arg}` };
    if (eq > 0) {
      values[key] = arg.slice(eq + 1);
      continue;
    }
    const value = args[i + 1];
    if (value === undefined) return { kind: 'usage', message: `missing value for ${flag}` };
    values[key] = value;
    i++;
  }
  return { kind: 'write', values, json };
}

function resolveFrom(cwd: string, p: string | undefined): string | undefined {
  return p === undefined || p === '' ? p : path.resolve(cwd, p);
}

/**
 * `-h/--help` prints the full usage on stdout and exits 0 (upstream exits 2): help is a request,
 * not a mistake, and every other cairn command exits 0 for it. Usage errors still exit 2.
 */
async function runWrite(args: readonly string[], io: CliIO): Promise<void> {
  // The kill switch wins over everything, even garbage arguments (as upstream).
  // With --json the caller still gets its one JSON document, saying nothing was written.
  if (io.env.DATARIM_DISABLE_SNAPSHOT === '1') {
    if (args.includes('--json')) writeJson(io, { ok: true, disabled: true, path: '', sizeBytes: 0, truncated: false });
    return;
  }
  const parsed = parseWriteArgs(args);
  if (parsed.kind === 'help') {
    io.stdout.write(WRITE_USAGE);
    return;
  }
  // The seed's human line (and synopsis for usage errors); with --json the one error shape every
  // command prints, {code, message, path?, details?}, as a JSON line on stderr.
  const fail = (message: string, code: number, json: boolean, error?: { toJSON(): unknown }): never => {
    if (json) io.stderr.write(`${JSON.stringify(error?.toJSON() ?? { code: 'ERR_USAGE', message })}\n`);
    else {
      io.stderr.write(`cairn stage write: ${message}\n`);
      if (code === 2) io.stderr.write(`${WRITE_SYNOPSIS}(run \`cairn stage write --help\` for every flag)\n`);
    }
    throw new ExitCode(code);
  };
  if (parsed.kind === 'usage') return fail(parsed.message, 2, false);
  const { missingRequiredFlags, writeStageSnapshot } = await import('../../stage/write.js');
  const v = parsed.values;
  const missing = missingRequiredFlags(v);
  if (missing.length > 0) return fail(`missing required flag(s): ${missing.join(' ')}`, 2, parsed.json);

  const options: WriteStageSnapshotOptions = {
    root: resolveFrom(io.cwd, v.root) ?? '',
    task: v.task ?? '',
    stage: v.stage ?? '',
    command: v.command ?? '',
    capturedBy: v.capturedBy ?? '',
    recommendedNext: v.recommendedNext ?? '',
    env: io.env,
    onStaleLock: (info) => {
      const who = info.previousOwner ? `pid ${info.previousOwner.pid} on ${info.previousOwner.host}, since ${info.previousOwner.startedAt}` : 'no owner record';
      io.stderr.write(`cairn stage write: took over a stale lock ${info.lockPath} (${who}): ${info.reason}\n`);
    },
  };
  const bodyFile = resolveFrom(io.cwd, v.bodyFile);
  if (bodyFile !== undefined) options.bodyFile = bodyFile;
  const optionsFile = resolveFrom(io.cwd, v.optionsFile);
  if (optionsFile !== undefined) options.optionsFile = optionsFile;
  if (v.capturedAt !== undefined) options.capturedAt = v.capturedAt;
  if (v.dir !== undefined) options.dir = v.dir;

  try {
    const result = await writeStageSnapshot(options);
    if (parsed.json) writeJson(io, { ok: true, path: result.path, sizeBytes: result.sizeBytes, truncated: result.truncated });
    else io.stdout.write(`${result.path}\n`);
  } catch (e) {
    if (!isCairnError(e)) throw e;
    return fail(e.message, e.exitCode, parsed.json, e);
  }
}

/** Registers `cairn stage write|check|show` on the program. */
export function registerStageCommands(program: Command, io: CliIO): void {
  // `stage write` owns every word after it: a value such as `--captured-by -V` must reach the
  // writer, not print cairn's version. Program options therefore go before the subcommand.
  program.enablePositionalOptions();
  const stage = program
    .command('stage')
    .enablePositionalOptions()
    .description('Stage notes: a per-task markdown note (YAML frontmatter, 8 KiB cap) for the next session to resume from');

  stage
    .command('write')
    .description('Write <root>/datarim/snapshots/<TASK-ID>.snapshot.md (the seed writer\'s flags and exit codes; see `cairn stage write --help`)')
    .helpOption(false)
    .addHelpText('after', `\n${WRITE_USAGE}`)
    .passThroughOptions()
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[flags...]')
    .action(async (_flags: string[], _opts: unknown, cmd: Command) => {
      await runWrite(cmd.args, io);
    });

  stage
    .command('check')
    .description('Check a stage note: exit 0 valid, 1 missing, 2 invalid or a symlink')
    .option('--task <TASK-ID>', 'the task whose note to check (required unless --self-test)')
    .option('--root <dir>', 'repository root (default: the nearest directory holding .git, else .cairn/, else the current directory)')
    .option('--dir <dir>', 'snapshot directory below the root', 'datarim/snapshots')
    .option('--validate-frontmatter', 'also check every frontmatter field, size_bytes against the real size and truncated against the marker')
    .option('--self-test', 'write notes in a temp dir and prove the checker\'s verdicts on them (exit 0 when all hold, 1 otherwise)')
    .option('--json', 'print {task_id, path, status, exitCode, problems} as JSON ({ok, problems} with --self-test)')
    .addHelpText('after', STAGE_CHECK_EXIT_HELP)
    .action(async (opts: { task?: string; root?: string; dir: string; validateFrontmatter?: boolean; selfTest?: boolean; json?: boolean }) => {
      if (opts.selfTest) {
        const { selfTestStageSnapshot } = await import('../../stage/self-test.js');
        const result = await selfTestStageSnapshot();
        if (opts.json) writeJson(io, result);
        else io.stdout.write(result.ok ? 'self-test: ok\n' : 'self-test: FAILED\n');
        for (const problem of opts.json ? [] : result.problems) io.stderr.write(`cairn stage check --self-test: ${problem}\n`);
        if (!result.ok) throw new ExitCode(1);
        return;
      }
      if (opts.task === undefined) throw new UsageError("required option '--task <TASK-ID>' not specified (or use --self-test)");
      const { validateStageSnapshot } = await import('../../stage/validate.js');
      const root = opts.root !== undefined ? path.resolve(io.cwd, opts.root) : findProjectRoot(io.cwd).root;
      const check = validateStageSnapshot(root, opts.task, { dir: opts.dir, validateFrontmatter: opts.validateFrontmatter === true });
      if (opts.json) {
        writeJson(io, check);
      } else {
        io.stdout.write(`${check.status}${check.path ? `: ${check.path}` : ''}\n`);
        for (const problem of check.problems) io.stderr.write(`cairn stage check: ${problem}\n`);
      }
      if (check.exitCode !== 0) throw new ExitCode(check.exitCode);
    });

  stage
    .command('show')
    .description('Print the body of a stage note (or, with --json, {task_id, path, frontmatter, body})')
    .argument('<TASK-ID>', 'the task whose note to show')
    .option('--root <dir>', 'repository root (default: the nearest directory holding .git, else .cairn/, else the current directory)')
    .option('--dir <dir>', 'snapshot directory below the root', 'datarim/snapshots')
    .option('--json', 'print {task_id, path, frontmatter, body} as JSON')
    .addHelpText('after', STAGE_SHOW_EXIT_HELP)
    .action(async (task: string, opts: { root?: string; dir: string; json?: boolean }) => {
      const { readStageSnapshotBytes } = await import('../../stage/read.js');
      const root = opts.root !== undefined ? path.resolve(io.cwd, opts.root) : findProjectRoot(io.cwd).root;
      const { bodyBytes, ...note } = readStageSnapshotBytes(root, task, { dir: opts.dir });
      if (opts.json) writeJson(io, { ...note, body: bodyBytes.toString('utf8') });
      else io.stdout.write(bodyBytes); // verbatim, even if the body is not valid UTF-8
    });
}
