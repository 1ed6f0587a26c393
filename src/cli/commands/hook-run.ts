/**
 * What `cairn hook <agent>` does once the agent is known, apart from its registration: the full
 * CLI (hooks.ts) and the executable's hook lane (../fast-lane.ts) both call runHook, and this
 * module loads no CLI framework.
 */
import { findProjectRoot } from '../../core/root.js';
import type { AgentSpec } from '../../hooks/agents.js';
import type { CliIO } from '../io.js';

const MAX_STDIN_BYTES = 1024 * 1024;
const STDIN_WAIT_MS = 5000;

/** Runs one hook event for `agent`: its JSON on stdin, the agent's one document on stdout. */
export async function runHook(io: CliIO, agent: AgentSpec): Promise<void> {
  const stdin = await readStdin();
  // Whatever happens below, the agent is never kept waiting past its budget.
  const { handleHook, timeoutSeconds } = await import('../../hooks/handle.js');
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
  const outcome = await handleHook(agent, stdin, io.cwd, io.env);
  clearTimeout(watchdog);
  if (outcome.output !== null && outcome.output !== undefined) io.stdout.write(`${JSON.stringify(outcome.output)}\n`);
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
