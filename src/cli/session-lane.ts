/**
 * The session lane's run (see fast-lane.ts): `cairn session pre|post` through the functions the
 * full CLI's actions call, errors reported as main() reports them. A bundle of its own
 * (scripts/bundle-cli.mjs), one module instead of the split graph's ~40.
 */
import { runSessionPost, runSessionPre } from './commands/session.js';
import { reportError } from './io.js';
import { runAsCairnProcess } from './process.js';

/** `daemonTried`: the daemon lane asked the project's daemon already (it did not serve). */
export function runSessionLane(phase: 'pre' | 'post', flags: Record<string, unknown>, daemonTried = false): void {
  runAsCairnProcess(async (io) => {
    io.daemonTried = daemonTried;
    try {
      if (phase === 'pre') await runSessionPre(io, flags);
      else await runSessionPost(io, flags);
      return 0;
    } catch (e) {
      return reportError(io, e, { json: flags.json === true, command: `session ${phase}` });
    }
  });
}
