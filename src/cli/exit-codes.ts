/**
 * The CLI's one exit-code table. Every command uses it, except where a seed fixes a command's
 * codes or error format (named in the table, so `cairn --help` shows both in one place).
 */
export const EXIT = { OK: 0, FAILURE: 1, USAGE: 2, CONFLICT: 3 } as const;

export const EXIT_CODES_HELP = `
Exit codes (every command):
  0  ok
  1  the operation failed (I/O, not found, a failed check, differences with --exit-code)
  2  usage or validation error (bad flag, bad argument or id, invalid input document)
  3  lock busy or conflict (e.g. an iteration that is already finished)
Kept from the seeds, where they differ:
  stage write   the seed writer's codes: 1 validation or I/O (a bad task id, stage or
                --captured-by), 2 usage (missing or unknown flag), 3 lock timeout
  stage check   the seed validator's codes: 1 missing, 2 invalid (a bad task id too) or a symlink
  snapshot, snapshot-diff   the seed's: errors always as JSON on stderr, exit 2 for bad input
  stage show    follows the table (a bad task id is 2)

Results go to stdout, diagnostics to stderr; --json prints one JSON document on stdout.
Errors: on a terminal, one line plus a hint; otherwise, or with --json, one JSON line on
stderr: {"code", "message", "path"?, "details"?} (the same shape for every command).`;

/** What `stage show|check --help` say about their codes. */
export const STAGE_SHOW_EXIT_HELP = `
Exit codes: 0 ok, 1 failure (I/O), 2 invalid task id or note (see \`cairn --help\` for the table).`;
export const STAGE_CHECK_EXIT_HELP = `
Exit codes (the seed validator's): 0 valid, 1 missing, 2 invalid (a bad task id too) or a symlink.`;
