/**
 * Lands a SIGKILL inside some window of a process's work (a restore half done, a temp file half
 * written), bounded by tries, not by time. Where the window opens with a name appearing in a
 * directory (a temp file created), killWhenNameAppears kills at that directory's inotify event for
 * the name: the kill follows the writer's own step, so however fast the file system does the work
 * (a tmpfs writes a 48 MB pack in ~25 ms, a window few delays hit) it lands inside. Either way the
 * caller still looks at what each kill left and says whether it was inside: likely, never assumed.
 *
 * For a window with no such name, killInsideWindow searches for the delay (no test needs it
 * today; session 16's tmpfs run showed how a delay misses a fast file system's windows). A busy
 * machine (a slower start, slower work) moves the window without closing it: a kill that came
 * too early (nothing begun) or too late (all done; the caller puts things back) moves the next
 * try between the latest too-early and the latest too-late delay (doubling until one was too
 * late), jittered by the seed so that two searches do not try the very same moments. The bounds
 * never come closer than MIN_SPREAD of the delay: on a noisy machine the window's place varies
 * from run to run by more than its width, so the tries keep sampling around where both outcomes
 * happen, and a bound the machine's pace left behind moves with the next outcome.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';

/** How far apart, as a share of the delay, the bounds stay at least. */
const MIN_SPREAD = 0.2;

/** What a kill after some delay found: inside the window, too early, too late, or neither for sure. */
export type KillOutcome = 'inside' | 'early' | 'late' | 'unclear';

/**
 * Starts `command` and SIGKILLs it `ms` after it started or, with `afterFirstOutput`, after it
 * first wrote to stdout (a child that says where its own start-up ends takes that part's noise out
 * of the delay); resolves when it is gone.
 */
export function killAfter(command: string, args: readonly string[], options: SpawnOptions, ms: number, afterFirstOutput = false): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', afterFirstOutput ? 'pipe' : 'ignore', 'ignore'] });
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      timer ??= setTimeout(() => child.kill('SIGKILL'), ms);
    };
    if (afterFirstOutput) child.stdout!.once('data', arm);
    else arm();
    child.on('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Starts `command` and SIGKILLs it at the first entry of `dir` (which must exist) whose name
 * `matches` says is the window's start; resolves when it is gone, with whether that kill was sent
 * (false: it exited before any such name appeared, or the name never matched).
 */
export function killWhenNameAppears(command: string, args: readonly string[], options: SpawnOptions, dir: string, matches: (name: string) => boolean): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let sent = false;
    // Watching before the start, so no entry the child makes can come before the watch.
    const watcher = fs.watch(dir, (_event, name) => {
      if (sent || name === null || !matches(name)) return;
      sent = child.kill('SIGKILL');
    });
    const child = spawn(command, args, { ...options, stdio: 'ignore' });
    child.on('error', (e) => {
      watcher.close();
      reject(e);
    });
    child.on('exit', () => {
      watcher.close();
      resolve(sent);
    });
  });
}

/**
 * Calls `killOnce()` (start, kill on its trigger, say what the kill found) until it says
 * 'inside', at most `tries` times; true when it did.
 */
export async function killUntilInside(killOnce: () => Promise<KillOutcome>, tries: number): Promise<boolean> {
  for (let k = 0; k < tries; k++) if ((await killOnce()) === 'inside') return true;
  return false;
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
    if (found === 'early') {
      early = delay;
      if (late !== null) late = Math.max(late, delay * (1 + MIN_SPREAD));
    } else if (found === 'late') {
      late = delay;
      early = Math.min(early, delay * (1 - MIN_SPREAD));
    }
  }
  return false;
}
