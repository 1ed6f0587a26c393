/**
 * `cairn session restore [ITERATION] [--to pre|post] [--dry-run] [--force] [--undo] [--json]`:
 * a thin shell over restoreIteration / undoLastRestore (src/rewind/). Exit 3 on a conflict
 * (nothing changed); exit 1 when a restore left a path it had to change (`unrestored`).
 */
import type { Command } from 'commander';
import type { RestoreResult } from '../../rewind/index.js';
import { ExitCode, UsageError, writeJson, writeLine, type CliIO } from '../io.js';
import { ROOT_HELP, projectContext } from '../root.js';

const RESTORE_HELP = `
Puts the working tree back as it was at an iteration's pre-snapshot (default) or post-snapshot.
Only paths cairn inventoried change; ignored files, .git/, .cairn/ and files no inventory
recorded are never touched, and commits stay where they are (the output prints the git command
that would move the branch too). The disk is compared with what cairn last recorded (the latest
post, or what the last restore wrote): a path changed since is a conflict.

An iteration without a post-snapshot (the agent is still at work, or died) has recorded nothing
since its pre, so every path changed since pre is a conflict: --dry-run lists them, --force puts
them back (kept for --undo). Run \`cairn session post\` first to restore without --force.

  cairn session restore --dry-run      # what restoring the latest iteration would change (+/- lines)
  cairn session restore                # undo what the latest iteration did to the files
  cairn session restore 3 --to post    # the tree as iteration 3 left it (undoes 4, 5, ... too)
  cairn session restore --undo         # put back what the last restore replaced

Exit codes: 0 done (or nothing to do), 1 failure (also: a path was left unrestored, named),
2 usage (unknown iteration, bad flag), 3 conflict: a path was changed since cairn recorded it,
or stands in the way; nothing was changed. --force restores anyway and keeps the replaced
content, so --undo brings it back; what it still cannot restore it names, and exits 1.`;

interface RestoreFlags {
  root?: string;
  to?: string;
  dryRun?: boolean;
  force?: boolean;
  undo?: boolean;
  json?: boolean;
}

function counts(c: { additions?: number; deletions?: number }): string {
  return c.additions === undefined ? '' : ` (+${c.additions} -${c.deletions ?? 0})`;
}

function printHuman(io: CliIO, r: RestoreResult, forced: boolean): void {
  const out = io.stdout;
  if (r.recovered !== undefined) {
    writeLine(io.stderr, `cairn: restore ${r.recovered.restoreId} had been interrupted; it is now finished${r.recovered.conflicts.length > 0 ? ` (left alone, changed since: ${r.recovered.conflicts.join(', ')})` : ''}`);
  }
  if (r.interrupted !== undefined) {
    writeLine(io.stderr, `cairn: restore ${r.interrupted.join(', ')} was interrupted; a real run finishes it first, and may then plan differently from this dry run`);
  }
  const what = r.undo === true ? `undo of ${r.undidForcedUndo === true ? 'forced undo' : 'restore'} ${r.undid ?? ''}` : `restore of iteration ${r.iteration} to ${r.to}`;
  const refused = r.conflicts.length > 0 && !forced;
  if (refused) {
    writeLine(out, `${what}: ${r.conflicts.length} path(s) changed since cairn recorded them, or in the way; ${r.dryRun ? 'a restore would change nothing' : 'nothing was changed'}:`);
    for (const c of r.conflicts) writeLine(out, `  ${c.path}${c.reason === undefined ? '' : ` (${c.reason})`}`);
    writeLine(out, 'Keep those edits elsewhere first, or pass --force (the replaced content is kept; --undo brings it back).');
    if (!r.dryRun) return;
  }
  const verb = r.dryRun ? 'would change' : 'changed';
  writeLine(out, `${what}: ${verb} ${r.changes.length} path(s)`);
  for (const c of r.changes) writeLine(out, `  ${c.action.padEnd(7)} ${c.path}${counts(c)}`);
  const overridden = forced ? r.conflicts.filter((c) => !r.unrestored.some((u) => u.path === c.path)) : [];
  if (overridden.length > 0) writeLine(out, `Forced over ${overridden.length} path(s) changed since cairn recorded them (kept; --undo brings them back): ${overridden.map((c) => c.path).join(', ')}`);
  if (r.unrestored.length > 0) {
    writeLine(out, `${r.dryRun ? 'Would leave' : 'Left'} ${r.unrestored.length} path(s) unrestored:`);
    for (const u of r.unrestored) writeLine(out, `  ${u.path} (${u.reason})`);
  }
  if (r.leftAlone !== undefined) {
    const more = r.leftAlone.total - r.leftAlone.paths.length;
    writeLine(out, `Left alone, in no inventory cairn recorded: ${r.leftAlone.paths.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  if (r.alsoUndoes.length > 0) writeLine(out, `This also undoes the later iteration(s) ${r.alsoUndoes.join(', ')}.`);
  for (const n of r.notRestorable) writeLine(out, `  not restorable: ${n.path} (${n.reason})`);
  if (r.commits.length > 0) {
    writeLine(out, `Commits made in that span stay in place (${r.commits.length}):`);
    for (const c of r.commits) writeLine(out, `  ${c.id.slice(0, 12)} ${c.subject}`);
    if (r.gitCommand !== undefined) writeLine(out, `To move the branch back too (your files stay as restored): ${r.gitCommand}`);
  }
  if (!r.dryRun && r.restoreId !== undefined && r.undo !== true) writeLine(io.stderr, 'cairn: `cairn session restore --undo` puts back what this restore replaced');
  else if (!r.dryRun && r.restoreId !== undefined && overridden.length > 0) writeLine(io.stderr, 'cairn: `cairn session restore --undo` puts back the edits this undo was forced over');
}

export function registerRestoreCommand(session: Command, io: CliIO): void {
  session
    .command('restore')
    .description('Put the working tree back to an iteration\'s pre (default) or post state; --undo reverts the last restore')
    .argument('[iteration]', 'iteration number (3 or 003) or directory (default: the latest)')
    .option('--to <side>', 'pre (default) or post')
    .option('--dry-run', 'show what would change, with +/- line counts; change nothing')
    .option('--force', 'restore paths changed since cairn recorded them too (their content is kept for --undo)')
    .option('--undo', 'revert the most recent restore (or a forced undo: that brings back the edits it replaced)')
    .option('--root <dir>', ROOT_HELP)
    .option('--json', 'print the result as one JSON document')
    .addHelpText('after', RESTORE_HELP)
    .action(async (iteration: string | undefined, flags: RestoreFlags) => {
      if (flags.to !== undefined && flags.to !== 'pre' && flags.to !== 'post') throw new UsageError(`--to must be pre or post, got ${JSON.stringify(flags.to)}`);
      if (flags.undo === true && (iteration !== undefined || flags.to !== undefined)) throw new UsageError('--undo takes no ITERATION and no --to: it reverts the most recent restore');
      const { root, config } = projectContext(io, flags.root);
      const lib = await import('../../rewind/index.js');
      const common = { root, cwd: io.cwd, dryRun: flags.dryRun ?? false, force: flags.force ?? false };
      const exclude = config.exclude;
      const result = flags.undo === true
        ? await lib.undoLastRestore(common)
        : await lib.restoreIteration({ ...common, ...(exclude === undefined ? {} : { exclude }), ...(iteration === undefined ? {} : { iteration }), ...(flags.to === undefined ? {} : { to: flags.to }) });
      if (flags.json === true) {
        const { iteration: it, to, dryRun, changes, conflicts, notRestorable, commits, ...rest } = result;
        writeJson(io, { iteration: it, to, dryRun, changes, conflicts, notRestorable, commits, ...rest });
      } else printHuman(io, result, flags.force ?? false);
      if (result.conflicts.length > 0 && !(flags.force ?? false)) throw new ExitCode(3);
      if (result.unrestored.length > 0 && !result.dryRun) throw new ExitCode(1);
    });
}
