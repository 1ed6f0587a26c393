/**
 * The daemon lane (see fast-lane.ts): before the session, hook or snapshot lane loads (each a
 * bundle of 0.2–0.6 MB: the session library, the scanner), ask the project's `cairn daemon`, when one runs, to do the
 * command (src/cli/daemon/client.ts). A bundle of its own holding only the client, so a served
 * command costs Node's start and this, and an unserved one one lstat more than before.
 */
import { loadConfig } from '../config/index.js';
import { findProjectRoot } from '../core/root.js';
import { agentById } from '../hooks/agents.js';
import { timeoutSeconds } from '../hooks/budget.js';
import { hookRoot, runThroughDaemon, runSessionThroughDaemon, snapshotFlags } from './daemon/client.js';
import type { SnapshotFlags } from './fast-lane.js';
import { defaultIO, type CliIO } from './io.js';
import { writesInPlace } from './output-target.js';
import { readStdin } from './stdin.js';

/** What the lane did: served (the exit code is set), or not, with the hook's stdin when it read it. */
export type DaemonLaneOutcome = { served: true } | { served: false; stdin?: string };

function laneIO(): CliIO | null {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'; // as runAsCairnProcess: the command sees the env it would see
  const io: CliIO = { ...defaultIO(), ownsProcess: true };
  if (io.env.CAIRN_DAEMON === '0') return null;
  // A reader that stops early closes the pipe: end quietly, as the other lanes do.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(process.exitCode ?? 0);
  });
  return io;
}

/** `session pre|post` with the fast lane's flags, through the daemon when it serves. */
export async function sessionThroughDaemon(phase: 'pre' | 'post', flags: Record<string, unknown>): Promise<DaemonLaneOutcome> {
  const io = laneIO();
  if (io === null) return { served: false };
  const code = await runSessionThroughDaemon(io, phase, flags);
  if (code === null) return { served: false };
  process.exitCode = code;
  return { served: true };
}

/** `cairn snapshot` with the fast lane's flags, through the daemon when it serves (a failure's exit code too). */
export async function snapshotThroughDaemon(flags: SnapshotFlags): Promise<DaemonLaneOutcome> {
  const io = laneIO();
  if (io === null) return { served: false };
  const sent = snapshotFlags(io, flags);
  if (sent.out !== undefined && writesInPlace(sent.out)) return { served: false };
  const code = await runThroughDaemon(io, 'snapshot', sent.root, { flags: { ...sent } });
  if (code === null) return { served: false };
  process.exitCode = code;
  return { served: true };
}

/** `hook <agent>` through the daemon when it serves; an unknown agent is left to the full CLI (stdin unread). */
export async function hookThroughDaemon(agentId: string): Promise<DaemonLaneOutcome> {
  const agent = agentById(agentId);
  const io = agent === undefined ? null : laneIO();
  if (agent === undefined || io === null) return { served: false };
  const stdin = await readStdin();
  const root = hookRoot(agent, stdin, io);
  if (root === null) return { served: false, stdin };
  let budgetMs = 30_000;
  try {
    budgetMs = timeoutSeconds(loadConfig(findProjectRoot(io.cwd).root).config) * 1000;
  } catch {
    // a bad config is reported by the hook in-process
  }
  // As runHook: the agent is never kept waiting past its budget.
  const watchdog = setTimeout(() => process.exit(0), Math.max(1000, budgetMs - 1000));
  watchdog.unref();
  const code = await runThroughDaemon(io, 'hook', root, { agent: agent.id, stdin }, budgetMs);
  clearTimeout(watchdog);
  if (code === null) return { served: false, stdin };
  process.exitCode = code;
  return { served: true };
}
