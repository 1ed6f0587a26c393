import type { Command } from 'commander';
import type { CliIO } from '../io.js';

/** Registers `cairn mcp …` on the program. */
export function registerMcpCommands(_program: Command, _io: CliIO): void {
  // filled in by the mcp work
}
