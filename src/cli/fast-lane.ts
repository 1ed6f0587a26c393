/**
 * The fast lanes of `cairn`: what the executable can do for the commonest short invocations
 * without loading the CLI framework and every command's registration (~15 ms of a Node 20 start).
 *
 * - `--help` / `-h` after a command path, and `--version`, print text the build captured from the
 *   full CLI (dist/bin/help.json, written by scripts/bundle-cli.mjs). Only when stdout is not a
 *   terminal: there the full CLI wraps help to the terminal's width, which the captured text
 *   (the 80 columns of a pipe) cannot know.
 * - `snapshot` with flags in their plain spellings runs the same command function the full CLI
 *   runs, with the flags the full CLI's parser would have given it; first, the daemon lane asks
 *   the project's `cairn daemon` (a warm snapshot it serves never loads the scanner's bundle).
 * - `hook <agent>` (what an agent's hooks run on every turn) and `session pre|post` run the same
 *   functions as the full CLI's actions; first, the daemon lane (daemon-lane.ts, the client alone)
 *   hands them to the project's `cairn daemon` when one runs and may serve them.
 *
 * A lane takes only argument lists it recognises completely; anything else (an unknown, repeated
 * or abbreviated flag, a missing or dash-led value, a bad number, an extra word) returns
 * undefined and goes to the full CLI, so usage errors and their messages keep one source.
 * test/cli/fast-lane.test.ts proves each lane gives what the full CLI gives.
 */

/** The lane `argv` takes: help text for a command path, the version, snapshot, or none (undefined). */
export type Lane =
  | { kind: 'help'; path: string }
  | { kind: 'version' }
  | { kind: 'snapshot'; flags: SnapshotFlags }
  | { kind: 'hook'; agent: string }
  | { kind: 'session pre' | 'session post'; flags: Record<string, unknown> };

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
  if (argv[0] === 'session' && (argv[1] === 'pre' || argv[1] === 'post')) {
    const flags = parseSessionFlags(argv[1], argv.slice(2));
    return flags === undefined ? undefined : { kind: `session ${argv[1]}`, flags };
  }
  if (argv[0] === 'snapshot') {
    const flags = parseSnapshotFlags(argv.slice(1));
    return flags === undefined ? undefined : { kind: 'snapshot', flags };
  }
  return undefined;
}

/**
 * One command's flags as commander declares them: `<value>` flags (some numbers, some
 * repeatable), switches, and `--no-x` flags; each maps to the key the action receives.
 */
interface FlagSpec {
  valued: Record<string, string>;
  numeric?: readonly string[];
  /** A value for this key must match, or the full CLI gives its error. */
  pattern?: Record<string, RegExp>;
  repeated?: Record<string, string>;
  switches: Record<string, string>;
  negated: Record<string, string>;
  /** What commander starts with: [] for repeatable flags, true for a lone `--no-x`. */
  defaults: Record<string, unknown>;
  required?: string;
}

const SNAPSHOT: FlagSpec = {
  valued: { '--root': 'root', '-o': 'out', '--out': 'out', '--cache-dir': 'cacheDir', '--max-files': 'maxFiles', '--max-bytes': 'maxBytes', '--jobs': 'jobs' },
  numeric: ['maxFiles', 'maxBytes', 'jobs'],
  repeated: { '--include': 'include', '--exclude': 'exclude' },
  switches: { '--verbose': 'verbose', '--json': 'json' },
  negated: { '--no-gitignore': 'gitignore', '--no-digest': 'digest', '--no-cache': 'cache' },
  defaults: { include: [], exclude: [], gitignore: true, digest: true, cache: true },
  required: 'root',
};

const SESSION_PRE: FlagSpec = {
  valued: { '--root': 'root', '--iteration-dir': 'iterationDir', '--state-dir': 'stateDir' },
  switches: { '--amend': 'amend', '--json': 'json' },
  negated: { '--no-inventory': 'inventory' },
  defaults: { inventory: true },
};

const SESSION_POST: FlagSpec = {
  valued: { '--root': 'root', '--iteration-dir': 'iterationDir', '--state-dir': 'stateDir', '--store': 'store', '--session': 'session' },
  pattern: { session: /^[a-z0-9_-]+$/ },
  switches: { '--json': 'json' },
  // `--store <url>` beside `--no-store`: commander gives `store` no default.
  negated: { '--no-store': 'store', '--no-inventory': 'inventory' },
  defaults: { inventory: true },
};

/** The flags of `session pre` (`post`) from the words after it, or undefined when the full CLI must parse them. */
export function parseSessionFlags(phase: 'pre' | 'post', args: readonly string[]): Record<string, unknown> | undefined {
  return parseFlags(phase === 'pre' ? SESSION_PRE : SESSION_POST, args);
}

/** `cairn snapshot`'s flags from the words after `snapshot`, or undefined when the full CLI must parse them. */
export function parseSnapshotFlags(args: readonly string[]): SnapshotFlags | undefined {
  return parseFlags(SNAPSHOT, args) as SnapshotFlags | undefined;
}

/** The flags `spec` gives for `args`, or undefined for anything it does not take whole. */
function parseFlags(spec: FlagSpec, args: readonly string[]): Record<string, unknown> | undefined {
  const flags: Record<string, unknown> = structuredClone(spec.defaults);
  const set = new Set<string>(); // keys given once already: the full CLI decides which one counts
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    const eq = word.startsWith('--') ? word.indexOf('=') : -1;
    const flag = eq > 0 ? word.slice(0, eq) : word;
    const repeated = spec.repeated?.[flag];
    const key = repeated ?? spec.valued[flag] ?? spec.switches[flag] ?? spec.negated[flag];
    if (key === undefined || (repeated === undefined && set.has(key))) return undefined;
    set.add(key);
    if (repeated !== undefined || spec.valued[flag] !== undefined) {
      const value = eq > 0 ? word.slice(eq + 1) : args[++i];
      if (value === undefined || value.startsWith('-')) return undefined;
      if (spec.pattern?.[key] !== undefined && !spec.pattern[key].test(value)) return undefined;
      if (repeated !== undefined) (flags[key] as string[]).push(value);
      else if (spec.numeric?.includes(key) === true) {
        if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) return undefined;
        flags[key] = Number(value);
      } else flags[key] = value;
      continue;
    }
    if (eq > 0) return undefined; // `--verbose=x` and the like: the full CLI's error
    flags[key] = spec.switches[flag] !== undefined;
  }
  if (spec.required !== undefined && typeof flags[spec.required] !== 'string') return undefined; // the full CLI says so
  return flags;
}
