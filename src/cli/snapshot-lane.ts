/**
 * The snapshot lane's run (see fast-lane.ts): the command function the full CLI's `snapshot`
 * action calls, and errors reported as main() reports them (JSON, as the seed asks of snapshot).
 */
import { runSnapshot } from './commands/snapshot-run.js';
import type { SnapshotFlags } from './fast-lane.js';
import { reportError } from './io.js';
import { runAsCairnProcess } from './process.js';

/** `daemonTried`: the daemon lane asked the project's daemon already (it did not serve). */
export function runSnapshotLane(flags: SnapshotFlags, daemonTried = false): void {
  runAsCairnProcess(async (io) => {
    io.daemonTried = daemonTried;
    try {
      await runSnapshot(io, flags);
      return 0;
    } catch (e) {
      return reportError(io, e, { json: true, command: 'snapshot' });
    }
  });
}

