/**
 * What `cairn hook <agent>` does once the agent is known, apart from its registration: the full
 * CLI (hooks.ts) and the executable's hook lane (../fast-lane.ts) both call runHook, and this
 * module loads no CLI framework.
 */
import { findProjectRoot } from '../../core/root.js';
import type { AgentSpec } from '../../hooks/agents.js';
import { timeoutSeconds } from '../../hooks/budget.js';
import { ExitCode, type CliIO } from '../io.js';
import { readStdin } from '../stdin.js';

/** Runs one hook event for `agent`: its JSON on stdin, the agent's one document on stdout. */
export async function runHook(io: CliIO, agent: AgentSpec, read?: string): Promise<void> {
  const stdin = read ?? (await readStdin());
  // Whatever happens below, the agent is never kept waiting past its budget.
  let budgetMs = 30_000;
  try {
    const { loadConfig } = await import('../../config/index.js');
    budgetMs = timeoutSeconds(loadConfig(findProjectRoot(io.cwd).root).config) * 1000;
  } catch {
    // a bad config is reported by handleHook
  }
  const watchdog = setTimeout(() => {
    if (io.ownsProcess === true) process.exit(0);
  }, Math.max(1000, budgetMs - 1000));
  watchdog.unref();
  const code = await hookThroughDaemon(io, agent, stdin, budgetMs);
  if (code === null) await answerHook(io, agent, stdin);
  clearTimeout(watchdog);
  if (code !== null && code !== 0) throw new ExitCode(code);
}

/** What the hook prints for `stdin` (run here, or by `cairn daemon` for a client). */
export async function answerHook(io: CliIO, agent: AgentSpec, stdin: string): Promise<void> {
  const { handleHook } = await import('../../hooks/handle.js');
  const outcome = await handleHook(agent, stdin, io.cwd, io.env);
  if (outcome.output !== null && outcome.output !== undefined) io.stdout.write(`${JSON.stringify(outcome.output)}\n`);
}

/**
 * The turn through a running `cairn daemon` of the project the payload names (src/cli/daemon/client.ts):
 * its exit code, or null to run it here (no daemon, one that may not serve, a stdin that is not
 * a payload: handleHook reports that; or the daemon lane asked already).
 */
async function hookThroughDaemon(io: CliIO, agent: AgentSpec, stdin: string, waitMs: number): Promise<number | null> {
  if (io.ownsProcess !== true || io.daemonTried === true || io.env.CAIRN_DAEMON === '0') return null;
  const { hookRoot, runThroughDaemon } = await import('../daemon/client.js');
  const root = hookRoot(agent, stdin, io);
  return root === null ? null : runThroughDaemon(io, 'hook', root, { agent: agent.id, stdin }, waitMs);
}
