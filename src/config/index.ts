/**
 * The project config file, `<root>/.cairn/config.json`: what would otherwise be repeated on every
 * call (the store, the state dir, excludes, the content cap, retention, hook behaviour). Its JSON
 * Schema ships as `schemas/config.schema.json`; this module checks the same rules by hand so the
 * CLI loads no validator. An unknown key is an error naming it, so a typo never silently does
 * nothing.
 *
 * Precedence, everywhere: command-line flags > environment (`CAIRN_STORE`, `CAIRN_STATE_DIR`) >
 * this file > built-in defaults.
 */
import * as path from 'node:path';
import { parseJsonBounded } from '../core/bounded-json.js';
import { readFileWithin } from '../core/contained-dir.js';
import { CairnError, errnoCode } from '../core/errors.js';
import { decodeUtf8Strict } from '../core/utf8.js';

export const CONFIG_FILE = path.join('.cairn', 'config.json');
/** A config is a few hundred bytes; anything past this is not one. */
const MAX_CONFIG_BYTES = 256 * 1024;

export interface RetentionConfig {
  /** Keep the newest N iterations (session prune) / history snapshots per location (store prune). */
  keepLast?: number;
  /** Keep what is younger than this: `30m`, `12h`, `7d`, `2w`. */
  keepWithin?: string;
}

export interface HooksConfig {
  /** At agent session start, give the agent the latest stage note and the last iteration's summary (default true). */
  sessionStartContext?: boolean;
  /** Where stage notes live, below the root (default `datarim/snapshots`). */
  stageDir?: string;
  /** The timeout written into the agent's hook settings, in seconds (default 30). */
  timeoutSeconds?: number;
}

export interface CairnConfig {
  $schema?: string;
  /** Snapshot store: a directory (relative to the root), `file:DIR`, `s3://…`, `postgres://…`. */
  store?: string;
  /** Agent state directory, relative to the root (default `.aiwg`). */
  stateDir?: string;
  /** Globs left out of the session inventories (as `cairn snapshot --exclude`). */
  exclude?: string[];
  /** Files larger than this many bytes are recorded by hash only, not kept for restore (default 50 MiB). */
  contentCap?: number;
  retention?: RetentionConfig;
  hooks?: HooksConfig;
}

export interface LoadedConfig {
  config: CairnConfig;
  /** The file it came from, or null when the project has none. */
  file: string | null;
}

type Check = (value: unknown, key: string) => string | null;

const isString: Check = (v) => (typeof v === 'string' && v !== '' && !v.includes('\0') ? null : 'a non-empty string');
const isBoolean: Check = (v) => (typeof v === 'boolean' ? null : 'true or false');
const wholeNumber =
  (min: number, max = Number.MAX_SAFE_INTEGER): Check =>
  (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? null : `a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}`;
const duration: Check = (v) => (typeof v === 'string' && /^[1-9]\d{0,5}[mhdw]$/.test(v) ? null : "a duration such as '30m', '12h', '7d' or '2w'");
const globList: Check = (v) => (Array.isArray(v) && v.length <= 1000 && v.every((g) => isString(g, '') === null) ? null : 'a list of glob strings');

const RETENTION: Record<string, Check> = { keepLast: wholeNumber(0), keepWithin: duration };
const HOOKS: Record<string, Check> = { sessionStartContext: isBoolean, stageDir: isString, timeoutSeconds: wholeNumber(1, 600) };

const objectOf =
  (fields: Record<string, Check>): Check =>
  (v, key) =>
    checkObject(v, fields, `${key}.`);

const TOP: Record<string, Check> = {
  $schema: isString,
  store: isString,
  stateDir: isString,
  exclude: globList,
  contentCap: wholeNumber(0),
  retention: objectOf(RETENTION),
  hooks: objectOf(HOOKS),
};

/** Null when `value` is an object whose keys are all known and valid; else what is wrong. */
function checkObject(value: unknown, fields: Record<string, Check>, prefix: string): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${prefix === '' ? 'the file' : prefix.slice(0, -1)} must be a JSON object`;
  for (const [key, v] of Object.entries(value)) {
    const check = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (check === undefined) return `unknown key "${prefix}${key}"; known keys${prefix === '' ? '' : ` of ${prefix.slice(0, -1)}`}: ${Object.keys(fields).join(', ')}`;
    const problem = check(v, `${prefix}${key}`);
    if (problem !== null) return problem.startsWith('unknown key') || problem.includes(' must be ') ? problem : `"${prefix}${key}" must be ${problem}`;
  }
  return null;
}

/** Checks a parsed config document; throws ERR_CONFIG (exit 2) naming the file and the key. */
export function validateConfig(value: unknown, file = CONFIG_FILE): CairnConfig {
  const problem = checkObject(value, TOP, '');
  if (problem !== null) throw new CairnError('ERR_CONFIG', `${file}: ${problem}; fix the file (its schema is schemas/config.schema.json)`, { exitCode: 2, path: file });
  return value as CairnConfig;
}

/**
 * Reads `<root>/.cairn/config.json`; a project without one gets `{}`. It is reached from the root
 * with no link followed in any component (a planted `.cairn` or config link is refused),
 * non-blocking, size-bounded, strict UTF-8 and depth-bounded: the shared readers of every file
 * cairn reads from a tree (src/core/contained-dir.ts, bounded-json.ts, utf8.ts). Every refusal is
 * ERR_CONFIG (exit 2) naming the file.
 */
export function loadConfig(root: string): LoadedConfig {
  const file = path.join(root, CONFIG_FILE);
  let bytes: Buffer | null;
  let text: string;
  let parsed: unknown;
  try {
    bytes = readFileWithin(file, path.resolve(root), { maxBytes: MAX_CONFIG_BYTES });
    if (bytes === null) return { config: {}, file: null };
    text = decodeUtf8Strict(bytes, file);
    parsed = parseJsonBounded(text, { file, what: 'config file' });
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { config: {}, file: null };
    const why = !(e instanceof CairnError)
      ? `cannot be read (${code ?? String(e)}); it must be a regular file`
      : e.code === 'ERR_TOO_LARGE'
        ? `too large for a config (at most ${MAX_CONFIG_BYTES} bytes)`
        : e.code === 'ERR_CORRUPT' && e.cause instanceof Error
          ? `not valid JSON (${e.cause.message}); fix the file or remove it`
          : e.message;
    throw new CairnError('ERR_CONFIG', `${file}: ${why}`, { exitCode: 2, path: file, cause: e });
  }
  return { config: validateConfig(parsed, file), file };
}

/**
 * The store a command uses: the flag, else `$CAIRN_STORE` (both as typed, relative to the current
 * directory), else the config's `store` (a path in it is relative to the root), else `undefined`
 * (the caller's default, `.cairn/store` under the root).
 */
export function configuredStore(config: CairnConfig, root: string, env: NodeJS.ProcessEnv, flag: string | undefined): string | undefined {
  if (flag !== undefined) return flag;
  if (env.CAIRN_STORE) return env.CAIRN_STORE;
  const store = config.store;
  if (store === undefined) return undefined;
  if (/^[a-z][a-z0-9+.-]+:\/\//i.test(store) && !store.startsWith('file:')) return store;
  if (store.startsWith('file://')) return store;
  const dir = store.startsWith('file:') ? store.slice('file:'.length) : store;
  return path.resolve(root, dir);
}

/** The state dir: flag > `$CAIRN_STATE_DIR` > config > undefined (the default `.aiwg`). */
export function configuredStateDir(config: CairnConfig, env: NodeJS.ProcessEnv, flag: string | undefined): string | undefined {
  return flag ?? (env.CAIRN_STATE_DIR || undefined) ?? config.stateDir;
}
