/**
 * JSON from a tree or a store is parsed with bounds: at most MAX_JSON_DEPTH levels of arrays
 * and objects (a 10 KB file nested 5,000 deep otherwise exhausts the stack of every recursive
 * walk after JSON.parse) and at most a caller-given number of bytes. A file over a bound, or not
 * JSON at all, is a coded error naming the file, never a bare RangeError. Writers check the same
 * depth (jsonDepthExceeds), so nothing cairn writes can fail to be read back.
 */
import { CairnError } from './errors.js';

/** Deepest nesting cairn reads or writes. Its own records nest under 20; embedded state files under STATE_JSON_DEPTH. */
export const MAX_JSON_DEPTH = 512;
/** Deepest nesting of an agent's state file that cairn embeds in its records (room left for the record around it). */
export const STATE_JSON_DEPTH = 256;

/** Nesting depth of JSON text, counted without parsing (brackets outside strings); stops once over `limit`. */
export function jsonTextDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped unit
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** Whether a value nests deeper than `limit` (iterative: safe on any depth). */
export function jsonDepthExceeds(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}

export interface BoundedParseOptions {
  /** Names the file in errors. */
  file: string;
  /** What the file is, for messages ("stored snapshot", "state file"). */
  what?: string;
  maxDepth?: number;
  /** Longest text, in UTF-16 units (a proxy for bytes that needs no encoding). */
  maxChars?: number;
  /** What to do about it, appended to every message. */
  hint?: string;
}

/** JSON.parse within bounds; ERR_TOO_DEEP, ERR_TOO_LARGE or ERR_CORRUPT (exit 1) naming the file. */
export function parseJsonBounded(text: string, options: BoundedParseOptions): unknown {
  const what = options.what ?? 'JSON file';
  const hint = options.hint === undefined ? '' : `; ${options.hint}`;
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const at = { path: options.file, exitCode: 1 };
  if (options.maxChars !== undefined && text.length > options.maxChars) {
    throw new CairnError('ERR_TOO_LARGE', `${what} ${options.file} is larger than the ${options.maxChars} characters cairn reads${hint}`, at);
  }
  const depth = jsonTextDepth(text, maxDepth);
  if (depth > maxDepth) {
    throw new CairnError('ERR_TOO_DEEP', `${what} ${options.file} nests more than ${maxDepth} levels deep, more than cairn reads (nothing cairn writes nests so deep)${hint}`, at);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CairnError('ERR_CORRUPT', `${what} ${options.file} is not valid JSON (${(e as Error).message})${hint}`, { ...at, cause: e });
  }
}
