#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { EXIT_CODES_HELP } from './exit-codes.js';
import { defaultIO, reportError, UsageError, type CliIO } from './io.js';
import { runAsCairnProcess } from './process.js';
import { registerMcpCommands } from './commands/mcp.js';
import { registerSessionCommands } from './commands/session.js';
import { registerSnapshotCommands } from './commands/snapshot.js';
import { registerStageCommands } from './commands/stage.js';
import { registerStoreCommands } from './commands/store.js';
import { registerRunCommand } from './commands/run.js';
import { registerHooksCommands } from './commands/hooks.js';
import { registerCompletionCommand } from './commands/completion.js';
import { registerDaemonCommands } from './commands/daemon.js';


export function buildProgram(io: CliIO): Command {
  const program = new Command('cairn');
  program
    .description('Record what an AI coding agent did to a project: repo snapshots, iteration records, a snapshot store and stage notes.')
    .version('0.1.0', '-V, --version')
    .addHelpText('after', EXIT_CODES_HELP)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // A usage error is printed by main() as every other error is (a coded JSON line, or a
      // line and a hint on a terminal), not in commander's own words here.
      outputError: () => undefined,
    });
  registerSnapshotCommands(program, io);
  registerSessionCommands(program, io);
  registerStoreCommands(program, io);
  registerStageCommands(program, io);
  registerMcpCommands(program, io);
  registerRunCommand(program, io);
  registerHooksCommands(program, io);
  registerCompletionCommand(program, io);
  registerDaemonCommands(program, io);
  // Subcommands inherit exitOverride and the output streams (commander copies them to every
  // command created with .command()), so usage errors reach main() as CommanderError.
  return program;
}

/** Runs the CLI and resolves to the exit code; never calls process.exit itself. */
export async function main(argv: string[], io: CliIO = defaultIO()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0; // a command that fails throws (ExitCode for a plain non-zero exit)
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return 0;
      // An unknown flag, a missing argument, a bad value: ERR_USAGE, exit 2 (commander's own would be 1).
      return reportError(io, new UsageError(e.message.replace(/^error: /, '')), errorStyle(argv));
    }
    return reportError(io, e, errorStyle(argv));
  }
}

/**
 * JSON where --json is given or a seed requires it (snapshot, snapshot-diff); otherwise the
 * terminal gets a human line (reportError decides by whether stderr is a TTY).
 */
function errorStyle(argv: readonly string[]): { json: boolean; command: string } {
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith('-') || words.length === 2) break;
    words.push(a);
  }
  const seedJson = words[0] === 'snapshot' || words[0] === 'snapshot-diff';
  return { json: seedJson || argv.includes('--json'), command: words.join(' ') };
}

function isEntryPoint(): boolean {
  const argv1 = process.argv[1];
  if (argv1 === undefined) return false;
  try {
    return realpathSync(argv1) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/** Runs the CLI as this process: argv, the exit code, EPIPE on stdout. What `cairn` (bin.ts) calls. */
export function runAsProcess(): void {
  runAsCairnProcess((io) => main(process.argv.slice(2), io));
}

if (isEntryPoint()) runAsProcess();
