/**
 * What `cairn hook <agent>` does once the agent is known, apart from its registration: the full
 * CLI (hooks.ts) and the executable's hook lane (../fast-lane.ts) both call runHook, and this
 * module loads no CLI framework.
 */
import * as fs from 'node:fs';
import { findProjectRoot } from '../../core/root.js';
import type { AgentSpec } from '../../hooks/agents.js';
import { ExitCode, type CliIO } from '../io.js';

const MAX_STDIN_BYTES = 1024 * 1024;
const STDIN_WAIT_MS = 5000;

/** Runs one hook event for `agent`: its JSON on stdin, the agent's one document on stdout. */
export async function runHook(io: CliIO, agent: AgentSpec): Promise<void> {
  const stdin = await readStdin();
  // Whatever happens below, the agent is never kept waiting past its budget.
  const { timeoutSeconds } = await import('../../hooks/handle.js');
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
 * The turn through a running `cairn daemon` of the project the payload names (src/daemon/client.ts):
 * its exit code, or null to run it here (no daemon, one that may not serve, a stdin that is not
 * a payload: handleHook reports that).
 */
async function hookThroughDaemon(io: CliIO, agent: AgentSpec, stdin: string, waitMs: number): Promise<number | null> {
  if (io.ownsProcess !== true || io.env.CAIRN_DAEMON === '0') return null;
  let root: string;
  try {
    const doc = JSON.parse(stdin) as unknown;
    const payload = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? agent.payload(doc as Record<string, unknown>) : null;
    if (payload === null) return null;
    // As handleHook finds it; the daemon serves only its own root.
    root = findProjectRoot(payload.cwd !== undefined && fs.existsSync(payload.cwd) ? payload.cwd : io.env.CLAUDE_PROJECT_DIR || io.cwd).root;
  } catch {
    return null;
  }
  const { runThroughDaemon } = await import('../../daemon/client.js');
  return runThroughDaemon(io, 'hook', root, { agent: agent.id, stdin }, waitMs);
}

/** The hook's stdin, bounded in size and in waiting (an agent that never closes it still gets its exit). */
function readStdin(): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      process.stdin.pause();
      process.stdin.removeAllListeners('data');
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(finish, STDIN_WAIT_MS);
    timer.unref();
    if (process.stdin.isTTY) {
      finish();
      return;
    }
    process.stdin.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_STDIN_BYTES) {
        chunks.length = 0;
        chunks.push(Buffer.from('{"oversized":true}'));
        finish();
        return;
      }
      chunks.push(c);
    });
    process.stdin.on('end', finish);
    process.stdin.on('error', finish);
  });
}
