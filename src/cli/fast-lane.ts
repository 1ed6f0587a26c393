/**
 * The fast lanes of `cairn`: what the executable can do for the commonest short invocations
 * without loading the CLI framework and every command's registration (~15 ms of a Node 20 start).
 *
 * - `--help` / `-h` after a command path, and `--version`, print text the build captured from the
 *   full CLI (dist/bin/help.json, written by scripts/bundle-cli.mjs). Only when stdout is not a
 *   terminal: there the full CLI wraps help to the terminal's width, which the captured text
 *   (the 80 columns of a pipe) cannot know.
 * - `snapshot` with flags in their plain spellings runs the same command function the full CLI
 *   runs, with the flags the full CLI's parser would have given it.
 * - `hook <agent>` (what an agent's hooks run on every turn) runs the same function as the full
 *   CLI's `hook` action.
 *
 * A lane takes only argument lists it recognises completely; anything else (an unknown, repeated
 * or abbreviated flag, a missing or dash-led value, a bad number, an extra word) returns
 * undefined and goes to the full CLI, so usage errors and their messages keep one source.
 * test/cli/fast-lane.test.ts proves both lanes give what the full CLI gives.
 */

/** The lane `argv` takes: help text for a command path, the version, snapshot, or none (undefined). */
export type Lane = { kind: 'help'; path: string } | { kind: 'version' } | { kind: 'snapshot'; flags: SnapshotFlags } | { kind: 'hook'; agent: string };

/** The flags `cairn snapshot`'s action receives (commander's option names and defaults). */
export interface SnapshotFlags {
  root: string;
  out?: string;
  include: string[];
  exclude: string[];
  maxFiles?: number;
  maxBytes?: number;
  gitignore: boolean;
  digest: boolean;
  cache: boolean;
  cacheDir?: string;
  jobs?: number;
  verbose?: boolean;
  json?: boolean;
}

/** Picks the lane for `argv` (the words after `cairn`); `stdoutIsTTY` rules out the help lanes. */
export function pickLane(argv: readonly string[], stdoutIsTTY: boolean): Lane | undefined {
  const last = argv[argv.length - 1];
  if (!stdoutIsTTY && argv.length === 1 && (last === '--version' || last === '-V')) return { kind: 'version' };
  if (!stdoutIsTTY && (last === '--help' || last === '-h')) {
    const words = argv.slice(0, -1);
    // Command names only: the captured table decides whether the path exists.
    if (words.every((w) => /^[a-z][a-z0-9-]*$/.test(w))) return { kind: 'help', path: words.join(' ') };
    return undefined;
  }
  // The hook lane checks the agent id itself (an unknown one goes to the full CLI's error).
  if (argv[0] === 'hook' && argv.length === 2 && /^[a-z][a-z0-9-]*$/.test(argv[1]!)) return { kind: 'hook', agent: argv[1]! };
  if (argv[0] === 'snapshot') {
    const flags = parseSnapshotFlags(argv.slice(1));
    return flags === undefined ? undefined : { kind: 'snapshot', flags };
  }
  return undefined;
}

type Valued = 'root' | 'out' | 'cacheDir' | 'maxFiles' | 'maxBytes' | 'jobs';
type Repeated = 'include' | 'exclude';
type Switch = 'verbose' | 'json';
type Negated = 'gitignore' | 'digest' | 'cache';

const VALUED: Record<string, Valued> = { '--root': 'root', '-o': 'out', '--out': 'out', '--cache-dir': 'cacheDir', '--max-files': 'maxFiles', '--max-bytes': 'maxBytes', '--jobs': 'jobs' };
const NUMERIC = new Set<Valued>(['maxFiles', 'maxBytes', 'jobs']);
const REPEATED: Record<string, Repeated> = { '--include': 'include', '--exclude': 'exclude' };
const SWITCHES: Record<string, Switch> = { '--verbose': 'verbose', '--json': 'json' };
const NEGATED: Record<string, Negated> = { '--no-gitignore': 'gitignore', '--no-digest': 'digest', '--no-cache': 'cache' };

/** `cairn snapshot`'s flags from the words after `snapshot`, or undefined when the full CLI must parse them. */
export function parseSnapshotFlags(args: readonly string[]): SnapshotFlags | undefined {
  const valued: Partial<Record<Valued, string | number>> = {};
  const repeated: Record<Repeated, string[]> = { include: [], exclude: [] };
  const switches: Partial<Record<Switch, true>> = {};
  const negated: Record<Negated, boolean> = { gitignore: true, digest: true, cache: true };
  const seen = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    const eq = word.startsWith('--') ? word.indexOf('=') : -1;
    const flag = eq > 0 ? word.slice(0, eq) : word;
    const repeatable = REPEATED[flag] !== undefined;
    if (!repeatable && seen.has(flag)) return undefined; // the full CLI decides which one counts
    seen.add(flag);
    if (VALUED[flag] !== undefined || repeatable) {
      const value = eq > 0 ? word.slice(eq + 1) : args[++i];
      if (value === undefined || value.startsWith('-')) return undefined;
      if (repeatable) {
        repeated[REPEATED[flag]!].push(value);
        continue;
      }
      const key = VALUED[flag]!;
      if (NUMERIC.has(key)) {
        if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) return undefined;
        valued[key] = Number(value);
      } else valued[key] = value;
      continue;
    }
    if (eq > 0) return undefined; // `--verbose=x` and the like: the full CLI's error
    if (SWITCHES[flag] !== undefined) switches[SWITCHES[flag]] = true;
    else if (NEGATED[flag] !== undefined) negated[NEGATED[flag]] = false;
    else return undefined;
  }
  if (typeof valued.root !== 'string') return undefined; // required: the full CLI says so
  return { ...valued, root: valued.root, ...repeated, ...negated, ...switches } as SnapshotFlags;
}
