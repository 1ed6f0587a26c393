import type { Command } from 'commander';
import type { CliIO } from '../io.js';

/** Registers `cairn stage …` on the program. */
export function registerStageCommands(_program: Command, _io: CliIO): void {
  // filled in by the stage work
}
