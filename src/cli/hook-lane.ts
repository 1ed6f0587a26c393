/**
 * The hook lane's run (see fast-lane.ts): `cairn hook <agent>`, the command an agent's hooks run
 * on every turn, through the function the full CLI's action calls. A bundle of its own
 * (scripts/bundle-cli.mjs), so the snapshot lane does not load the session library's builtins.
 */
import { agentById } from '../hooks/agents.js';
import { runHook } from './commands/hook-run.js';
import { reportError } from './io.js';
import { runAsCairnProcess } from './process.js';

/** Runs the hook for a known agent id and returns true; false (nothing done) leaves it to the full CLI. */
export function runHookLane(agentId: string): boolean {
  const agent = agentById(agentId);
  if (agent === undefined) return false;
  runAsCairnProcess(async (io) => {
    try {
      await runHook(io, agent);
      return 0;
    } catch (e) {
      return reportError(io, e, { json: false, command: `hook ${agentId}` });
    }
  });
  return true;
}
