import type { Command } from 'commander';
import type { CliIO } from '../io.js';

/** Registers `cairn store …` on the program. */
export function registerStoreCommands(_program: Command, _io: CliIO): void {
  // filled in by the store work
}
