/**
 * The hook lane's run (see fast-lane.ts): `cairn hook <agent>`, the command an agent's hooks run
 * on every turn, through the function the full CLI's action calls. A bundle of its own
 * (scripts/bundle-cli.mjs), so the snapshot lane does not load the session library's builtins.
 */
import { agentById } from '../hooks/agents.js';
import { runHook } from './commands/hook-run.js';
import { reportError } from './io.js';
import { runAsCairnProcess } from './process.js';

/**
 * Runs the hook for a known agent id and returns true; false (nothing done) leaves it to the full
 * CLI. `stdin`: what the daemon lane read already (it asked the project's daemon, which did not serve).
 */
export function runHookLane(agentId: string, stdin?: string): boolean {
  const agent = agentById(agentId);
  if (agent === undefined) return false;
  runAsCairnProcess(async (io) => {
    if (stdin !== undefined) io.daemonTried = true;
    try {
      await runHook(io, agent, stdin);
      return 0;
    } catch (e) {
      return reportError(io, e, { json: false, command: `hook ${agentId}` });
    }
  });
  return true;
}
