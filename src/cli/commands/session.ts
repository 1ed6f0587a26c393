import type { Command } from 'commander';
import type { CliIO } from '../io.js';

/** Registers `cairn session …` on the program. */
export function registerSessionCommands(_program: Command, _io: CliIO): void {
  // filled in by the session work
}
