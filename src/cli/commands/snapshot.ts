import type { Command } from 'commander';
import type { CliIO } from '../io.js';

/** Registers `cairn snapshot …` on the program. */
export function registerSnapshotCommands(_program: Command, _io: CliIO): void {
  // filled in by the snapshot work
}
