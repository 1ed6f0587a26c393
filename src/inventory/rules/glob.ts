import { CairnError } from '../../core/errors.js';
import { relPathProblem } from './relpath.js';

/**
 * The seed's deliberately tiny glob language for `include` / `exclude`:
 *   `**` followed by a slash: any number of leading directories; `**` otherwise: anything
 *   (crosses `/`);
 *   `*` anything within one segment, `?` one character other than `/`.
 * Everything else is literal — no braces, classes or negation (`[` is a literal bracket).
 * Globs are anchored at both ends against the relative POSIX path and are case-sensitive.
 */
export type PathMatcher = (relPath: string) => boolean;

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;

/** Regex source (unanchored) for one glob. */
function globSource(pattern: string): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === '*' && pattern[i + 1] === '*') {
      if (pattern[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 3;
      } else {
        out += '.*';
        i += 2;
      }
    } else if (ch === '*') {
      out += '[^/]*';
      i += 1;
    } else if (ch === '?') {
      out += '[^/]';
      i += 1;
    } else {
      out += ch.replace(REGEX_SPECIAL, '\\$&');
      i += 1;
    }
  }
  return out;
}

export function compileGlob(pattern: string): PathMatcher {
  // `s`: a path may (in principle) hold a newline; `.` must still cross it.
  const re = new RegExp(`^(?:${globSource(pattern)})$`, 's');
  return (relPath) => re.test(relPath);
}

/** One matcher for "any of these globs", as a single RegExp; `null` for an empty list. */
export function compileGlobs(patterns: readonly string[]): PathMatcher | null {
  if (patterns.length === 0) return null;
  const re = new RegExp(`^(?:${patterns.map(globSource).join('|')})$`, 's');
  return (relPath) => re.test(relPath);
}

/**
 * Matcher for directories an `exclude` list drops whole, so the walk need not open them: a
 * directory matched by a glob itself (the seed applies `exclude` to directories), or one that
 * is `P` for a glob `P/**` — every path below it matches that glob, so pruning changes nothing
 * but the time spent (`vendor/**` prunes `vendor`, as the seed's text promises).
 */
export function compileDirectoryExcludes(patterns: readonly string[]): PathMatcher | null {
  if (patterns.length === 0) return null;
  const sources = patterns.map(globSource);
  for (const pattern of patterns) {
    if (pattern.endsWith('/**') && pattern.length > 3) sources.push(globSource(pattern.slice(0, -3)));
  }
  const re = new RegExp(`^(?:${sources.join('|')})$`, 's');
  return (relDir) => re.test(relDir);
}

/**
 * Rejects a glob that could reach outside the root (`../**`, `/etc/*`) or that no RelPath could
 * match, by the seed's rule: each run of `*` and each `?` becomes `x`, trailing `/` are dropped,
 * and what remains must be a non-empty valid RelPath.
 */
export function validateGlob(pattern: string): void {
  const probe = pattern.replace(/\*+/g, 'x').replace(/\?/g, 'x').replace(/\/+$/, '');
  const problem = probe === '' ? 'empty glob' : relPathProblem(probe);
  if (problem !== null) {
    throw new CairnError(
      'ERR_CONTAINMENT',
      `glob ${JSON.stringify(pattern)} is not a contained relative path (${problem}); write globs relative to the root, e.g. "src/**"`,
      { details: { glob: pattern, reason: problem } },
    );
  }
}
