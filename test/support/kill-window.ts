/**
 * Finds the moment to SIGKILL a process so that the kill lands inside some window of its work (a
 * restore half done, a temp file half written), bounded by tries, not by time. The moment is
 * searched for, not guessed, so a busy machine (a slower start, slower work) moves the window
 * without closing it: a kill that came too early (nothing begun) raises the lower bound, one that
 * came too late (all done; the caller puts things back) lowers the upper bound; until one was too
 * late the delay doubles, then each try goes between the bounds, jittered by the seed so that two
 * searches do not try the very same moments. Bounds the machine's pace crossed are searched again
 * from below.
 */
import { spawn, type SpawnOptions } from 'node:child_process';

/** What a kill after some delay found: inside the window, too early, too late, or neither for sure. */
export type KillOutcome = 'inside' | 'early' | 'late' | 'unclear';

/** Starts `command` and SIGKILLs it after `ms`; resolves when it is gone. */
export function killAfter(command: string, args: readonly string[], options: SpawnOptions, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore', ...options });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Calls `killAt(delay)` (start, kill after `delay` ms, say what the kill found) until it says
 * 'inside', at most `tries` times; true when it did.
 */
export async function killInsideWindow(killAt: (delayMs: number) => Promise<KillOutcome>, options: { tries: number; seed: number; firstMs?: number }): Promise<boolean> {
  let state = options.seed;
  const rnd = (): number => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  let early = 0;
  let late: number | null = null;
  for (let k = 0; k < options.tries; k++) {
    const delay = Math.round(late === null ? Math.max(options.firstMs ?? 60, early * 2) : early + (late - early) * (0.35 + 0.3 * rnd()));
    const found = await killAt(delay);
    if (found === 'inside') return true;
    if (found === 'early') early = Math.max(early, delay);
    else if (found === 'late') late = late === null ? delay : Math.min(late, delay);
    // A too-late kill at or below a too-early one: the machine's pace changed; search again from below.
    if (late !== null && late <= early) early = late / 2;
  }
  return false;
}
