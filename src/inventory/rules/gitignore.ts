/**
 * Git's ignore rules for one `.gitignore` file, matched the way git matches them
 * (dir.c + wildmatch.c): trailing-space trimming with `\ ` escapes, `!` negation, `dir/`
 * directory-only rules, anchoring by a leading or inner `/`, `**` forms, `?`, `*` and bracket
 * classes (`[a-z]`, `[!a]`, `[]]`, `[[:alpha:]]`), case-sensitive, byte-wise like git.
 *
 * Patterns are matched against the UTF-8 bytes of the path (held as a latin1 string), because
 * git compares bytes: `?` matches one byte, so it does not match `é` (two bytes). A pattern
 * becomes a token list; a literal one is a map lookup, a wildcard one a RegExp, and a star-heavy
 * one (which could make a backtracking RegExp run for minutes) a small automaton.
 *
 * Machine-local sources (`.git/info/exclude`, `core.excludesFile`) are deliberately not part
 * of this module: a snapshot must not depend on the machine that took it.
 */

import { NON_ASCII } from '../digest.js';

export interface GitignoreFile {
  /** POSIX dir of the .gitignore relative to the scan root ('' for the root). */
  readonly base: string;
  /**
   * Verdict of the LAST matching rule of this file for `relPath` (relative to the SCAN ROOT,
   * POSIX), or undefined when no rule matches. `isDir` is true for real directories only; a
   * symlink to a directory is not a directory here, as in git.
   */
  match(relPath: string, isDir: boolean): 'ignore' | 'include' | undefined;
}

interface Rule {
  readonly negated: boolean;
  readonly dirOnly: boolean;
  /** Matched against the basename (no `/` in the pattern) or else the path below `base`. */
  readonly onBasename: boolean;
  /** The exact subject (bytes) of a rule without wildcards: looked up, not matched. */
  readonly literal: string | null;
  /** Anchored RegExp text, or null for a literal or a pattern too star-heavy for a RegExp. */
  readonly source: string | null;
  readonly test: (subject: string) => boolean;
}

function makeRule(negated: boolean, dirOnly: boolean, onBasename: boolean, tokens: Token[]): Rule {
  if (tokens.every((t) => t.kind === 'byte')) {
    const literal = String.fromCharCode(...tokens.map((t) => (t as { byte: number }).byte));
    return { negated, dirOnly, onBasename, literal, source: null, test: (subject) => subject === literal };
  }
  const unbounded = tokens.filter((t) => t.kind === 'star' || t.kind === 'any' || t.kind === 'dirs').length;
  if (unbounded > MAX_REGEX_UNBOUNDED) {
    return { negated, dirOnly, onBasename, literal: null, source: null, test: automaton(tokens) };
  }
  const source = tokensSource(tokens);
  const re = new RegExp(`^${source}$`, 's');
  return { negated, dirOnly, onBasename, literal: null, source, test: (subject) => re.test(subject) };
}

/** Byte-string (latin1 of UTF-8) form of `s`; identity for ASCII, which is the common case. */
function toBytes(s: string): string {
  return NON_ASCII.test(s) ? Buffer.from(s, 'utf8').toString('latin1') : s;
}

/** Regex text for one byte, always safe inside or outside a class. */
function byteLiteral(code: number): string {
  if ((code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) {
    return String.fromCharCode(code);
  }
  return `\\x${code.toString(16).padStart(2, '0')}`;
}

const SLASH = 0x2f;

// git's ctype classes (ASCII only: bytes >= 0x80 are in none of them).
const POSIX_CLASSES: Record<string, (c: number) => boolean> = {
  alnum: (c) => isDigit(c) || isAlpha(c),
  alpha: (c) => isAlpha(c),
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: (c) => isDigit(c),
  graph: (c) => c > 0x20 && c < 0x7f,
  lower: (c) => c >= 0x61 && c <= 0x7a,
  print: (c) => c >= 0x20 && c < 0x7f,
  punct: (c) => c > 0x20 && c < 0x7f && !isDigit(c) && !isAlpha(c),
  space: (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d,
  upper: (c) => c >= 0x41 && c <= 0x5a,
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};
function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
function isAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/**
 * A bracket expression starting at `p[start] === '['`, parsed exactly as wildmatch does:
 * the first member may be `]`, `!`/`^` negate, `-` between two members is a range, `\` escapes,
 * `[:name:]` is a POSIX class and `[:` without `:]` is literal. Returns null when git would abort
 * (unterminated class, unknown class name): such a pattern never matches anything.
 */
function parseClass(p: string, start: number): { set: Uint8Array; end: number } | null {
  const n = p.length;
  const members = new Uint8Array(256);
  let k = start + 1;
  let negated = false;
  if (p[k] === '!' || p[k] === '^') {
    negated = true;
    k++;
  }
  let prev = 0; // git's prev_ch: 0 after a range or a class, so a following '-' is literal
  for (;;) {
    if (k >= n) return null;
    let cur = p.charCodeAt(k);
    if (cur === 0x5c /* \ */) {
      k++;
      if (k >= n) return null;
      cur = p.charCodeAt(k);
      members[cur] = 1;
    } else if (cur === 0x2d /* - */ && prev !== 0 && k + 1 < n && p[k + 1] !== ']') {
      k++;
      let hi = p.charCodeAt(k);
      if (hi === 0x5c) {
        k++;
        if (k >= n) return null;
        hi = p.charCodeAt(k);
      }
      for (let b = prev; b <= hi; b++) members[b] = 1;
      cur = 0;
    } else if (cur === 0x5b /* [ */ && p[k + 1] === ':') {
      const nameStart = k + 2;
      let q = nameStart;
      while (q < n && p[q] !== ']') q++;
      if (q >= n) return null;
      if (q - nameStart - 1 < 0 || p[q - 1] !== ':') {
        // No ":]": the '[' is an ordinary member and parsing resumes at the ':'.
        members[0x5b] = 1;
      } else {
        const test = POSIX_CLASSES[p.slice(nameStart, q - 1)];
        if (!test) return null;
        for (let b = 0; b < 256; b++) if (test(b)) members[b] = 1;
        k = q;
        cur = 0;
      }
    } else {
      members[cur] = 1;
    }
    prev = cur;
    k++;
    if (k >= n) return null;
    if (p[k] === ']') break;
  }
  // A class never matches '/' when matching paths (WM_PATHNAME); basenames hold none anyway.
  const set = new Uint8Array(256);
  for (let b = 0; b < 256; b++) set[b] = (members[b] === 1) !== negated && b !== SLASH ? 1 : 0;
  return { set, end: k + 1 };
}

/**
 * One step of a compiled pattern. `star` is `*` (bytes other than `/`), `any` is a `**` that
 * crosses directories, `dirs` is a `**` + `/` that matches zero or more whole directories.
 */
type Token =
  | { readonly kind: 'byte'; readonly byte: number }
  | { readonly kind: 'one' }
  | { readonly kind: 'set'; readonly set: Uint8Array }
  | { readonly kind: 'star' }
  | { readonly kind: 'any' }
  | { readonly kind: 'dirs' };

const ONE: Token = { kind: 'one' };
const STAR: Token = { kind: 'star' };
const ANY: Token = { kind: 'any' };
const DIRS: Token = { kind: 'dirs' };

/**
 * Tokens of a wildmatch pattern (bytes), or null when git could never match it.
 * `pathname`: WM_PATHNAME semantics (`*` stops at `/`, `**` between slashes crosses them);
 * otherwise the subject is a basename, which holds no `/`, so every star run is a `star`.
 */
function wildmatchTokens(p: string, pathname: boolean): Token[] | null {
  const n = p.length;
  const out: Token[] = [];
  let i = 0;
  while (i < n) {
    const c = p[i]!;
    if (c === '\\') {
      if (i + 1 >= n) return null; // a trailing lone backslash matches nothing in git
      out.push({ kind: 'byte', byte: p.charCodeAt(i + 1) });
      i += 2;
    } else if (c === '?') {
      out.push(ONE);
      i++;
    } else if (c === '[') {
      const cls = parseClass(p, i);
      if (!cls) return null;
      out.push({ kind: 'set', set: cls.set });
      i = cls.end;
    } else if (c === '*') {
      let j = i;
      while (p[j] === '*') j++;
      const doubled = j - i >= 2;
      const atSegmentStart = i === 0 || p[i - 1] === '/';
      if (pathname && doubled && atSegmentStart && (j === n || p[j] === '/' || (p[j] === '\\' && p[j + 1] === '/'))) {
        if (p[j] === '/') {
          out.push(DIRS);
          i = j + 1;
        } else {
          // trailing `**` matches everything; `**\/` crosses directories but needs one.
          out.push(ANY);
          i = j;
        }
      } else {
        out.push(STAR);
        i = j;
      }
    } else {
      out.push({ kind: 'byte', byte: p.charCodeAt(i) });
      i++;
    }
  }
  return out;
}

function setSource(set: Uint8Array): string {
  const parts: string[] = [];
  let b = 0;
  while (b < 256) {
    if (set[b] !== 1) {
      b++;
      continue;
    }
    let e = b;
    while (e + 1 < 256 && set[e + 1] === 1) e++;
    parts.push(e === b ? byteLiteral(b) : `${byteLiteral(b)}-${byteLiteral(e)}`);
    b = e + 1;
  }
  return parts.length === 0 ? '(?!)' : `[${parts.join('')}]`;
}

/** Regex text (unanchored) for tokens. */
function tokensSource(tokens: readonly Token[]): string {
  let out = '';
  for (const t of tokens) {
    switch (t.kind) {
      case 'byte':
        out += byteLiteral(t.byte);
        break;
      case 'one':
        out += '[^/]';
        break;
      case 'set':
        out += setSource(t.set);
        break;
      case 'star':
        out += '[^/]*';
        break;
      case 'any':
        out += '.*';
        break;
      case 'dirs':
        out += '(?:.*/)?';
        break;
    }
  }
  return out;
}

/** A state of the automaton: a token, where `**` + `/` is split into an entry and a loop. */
type State = Exclude<Token, { kind: 'dirs' }> | { readonly kind: 'dirs-entry' } | { readonly kind: 'dirs-loop' };

/**
 * A matcher that simulates the tokens as an automaton: time grows with pattern length × subject
 * length whatever the pattern. A backtracking RegExp can take minutes on `*a*a*a*a*a*a*b`
 * against a long name (so does git 2.39's wildmatch); this cannot.
 */
function automaton(tokens: readonly Token[]): (subject: string) => boolean {
  // `**/` may match nothing (entry skips ahead), or anything that ends with `/` (the loop,
  // which can only be left through a `/`).
  const states: State[] = tokens.flatMap((t): State[] => (t.kind === 'dirs' ? [{ kind: 'dirs-entry' }, { kind: 'dirs-loop' }] : [t]));
  const n = states.length;
  const add = (set: Uint8Array, i: number): void => {
    if (set[i] === 1) return;
    set[i] = 1;
    const kind = states[i]?.kind;
    // States that may match nothing make the following state reachable at once.
    if (kind === 'star' || kind === 'any') add(set, i + 1);
    else if (kind === 'dirs-entry') {
      add(set, i + 1);
      add(set, i + 2);
    }
  };
  return (subject) => {
    let current = new Uint8Array(n + 1);
    let next = new Uint8Array(n + 1);
    add(current, 0);
    for (let pos = 0; pos < subject.length; pos++) {
      const c = subject.charCodeAt(pos);
      next.fill(0);
      for (let i = 0; i < n; i++) {
        if (current[i] !== 1) continue;
        const st = states[i]!;
        switch (st.kind) {
          case 'byte':
            if (c === st.byte) add(next, i + 1);
            break;
          case 'one':
            if (c !== SLASH) add(next, i + 1);
            break;
          case 'set':
            if (st.set[c] === 1) add(next, i + 1);
            break;
          case 'star':
            if (c !== SLASH) add(next, i);
            break;
          case 'any':
            add(next, i);
            break;
          case 'dirs-loop':
            add(next, i);
            if (c === SLASH) add(next, i + 1);
            break;
          case 'dirs-entry':
            break;
        }
      }
      if (!next.includes(1)) return false;
      [current, next] = [next, current];
    }
    return current[n] === 1;
  };
}

/** Patterns with this many unbounded tokens could make a backtracking RegExp explode. */
const MAX_REGEX_UNBOUNDED = 2;

const GLOB_SPECIAL = /[*?[\\]/;

/** git's trim_trailing_spaces: drop trailing ' ' unless the first of them is backslash-escaped. */
function trimTrailingSpaces(line: string): string {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === ' ') {
      if (lastSpace < 0) lastSpace = i;
    } else if (c === '\\') {
      i++;
      if (i >= line.length) return line;
      lastSpace = -1;
    } else {
      lastSpace = -1;
    }
  }
  return lastSpace < 0 ? line : line.slice(0, lastSpace);
}

function parseRule(line: string): Rule | null {
  let p = line;
  let negated = false;
  if (p.startsWith('!')) {
    negated = true;
    p = p.slice(1);
  }
  let dirOnly = false;
  if (p.endsWith('/')) {
    dirOnly = true;
    p = p.slice(0, -1);
  }
  const bytes = toBytes(p);
  if (!bytes.includes('/')) {
    const tokens = wildmatchTokens(bytes, false);
    return tokens && makeRule(negated, dirOnly, true, tokens);
  }
  // Anchored to the .gitignore's directory. git compares the literal prefix (up to the first
  // special character) byte for byte and wildmatches only the rest, so a `**` right after that
  // prefix counts as being at the start of the pattern (`x/ab**` crosses directories).
  const body = bytes.startsWith('/') ? bytes.slice(1) : bytes;
  const special = body.search(GLOB_SPECIAL);
  const prefixLength = special < 0 ? body.length : special;
  const rest = wildmatchTokens(body.slice(prefixLength), true);
  if (rest === null) return null;
  const prefix: Token[] = [];
  for (let i = 0; i < prefixLength; i++) prefix.push({ kind: 'byte', byte: body.charCodeAt(i) });
  return makeRule(negated, dirOnly, false, [...prefix, ...rest]);
}

/** Split, strip comments, CRs and trailing spaces, as git's add_patterns_from_buffer does. */
function ruleLines(text: string): string[] {
  const body = text.startsWith('\ufeff') ? text.slice(1) : text;
  const lines: string[] = [];
  for (const raw of body.split('\n')) {
    if (raw === '' || raw.startsWith('#')) continue;
    const line = trimTrailingSpaces(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
    if (line !== '' && line !== '!') lines.push(line);
  }
  return lines;
}

/**
 * A combined "could any of these rules match?" test: null when none can, `true` when some rule
 * has no RegExp form (then every entry must go through those rules one by one).
 */
function anyOf(rules: readonly Rule[]): RegExp | null | true {
  if (rules.length === 0) return null;
  if (rules.some((r) => r.source === null)) return true;
  return new RegExp(`^(?:${rules.map((r) => r.source!).join('|')})$`, 's');
}

function mayMatch(prefilter: RegExp | null | true, subject: string): boolean {
  return prefilter === true || (prefilter !== null && prefilter.test(subject));
}

/** exact subject -> index of the last literal rule for it. */
function literalIndex(rules: readonly Rule[], keep: (r: Rule) => boolean): Map<string, number> {
  const index = new Map<string, number>();
  rules.forEach((r, i) => {
    if (r.literal !== null && keep(r)) index.set(r.literal, i);
  });
  return index;
}

/** The rules that apply to one kind of entry (files, or directories), organised for speed. */
class RuleSet {
  // Literal rules (most lines of a long generated .gitignore) are map lookups; the others are
  // screened by one combined RegExp per subject, so an entry that matches nothing costs two
  // lookups and at most two RegExp tests, however long the file.
  private readonly basenameLiterals: Map<string, number>;
  private readonly pathLiterals: Map<string, number>;
  private readonly patterns: readonly number[]; // indices of non-literal rules, last first
  private readonly basenamePrefilter: RegExp | null | true;
  private readonly pathPrefilter: RegExp | null | true;

  constructor(
    private readonly rules: readonly Rule[],
    applies: (r: Rule) => boolean,
  ) {
    this.basenameLiterals = literalIndex(rules, (r) => applies(r) && r.onBasename);
    this.pathLiterals = literalIndex(rules, (r) => applies(r) && !r.onBasename);
    const patternRules = rules.filter((r) => applies(r) && r.literal === null);
    this.patterns = rules.flatMap((r, i) => (applies(r) && r.literal === null ? [i] : [])).reverse();
    this.basenamePrefilter = anyOf(patternRules.filter((r) => r.onBasename));
    this.pathPrefilter = anyOf(patternRules.filter((r) => !r.onBasename));
  }

  /** Index of the last rule matching, or -1. */
  lastMatch(below: string, basename: string): number {
    const best = Math.max(this.basenameLiterals.get(basename) ?? -1, this.pathLiterals.get(below) ?? -1);
    if (this.patterns.length === 0) return best;
    if (!mayMatch(this.basenamePrefilter, basename) && !mayMatch(this.pathPrefilter, below)) return best;
    for (const i of this.patterns) {
      if (i < best) break;
      const rule = this.rules[i]!;
      if (rule.test(rule.onBasename ? basename : below)) return i;
    }
    return best;
  }
}

class ParsedGitignore implements GitignoreFile {
  readonly base: string;
  private readonly rules: readonly Rule[];
  private readonly prefix: string;
  private readonly forFiles: RuleSet;
  private readonly forDirs: RuleSet;

  constructor(base: string, rules: readonly Rule[]) {
    this.base = base;
    this.rules = rules;
    this.prefix = base === '' ? '' : `${base}/`;
    this.forFiles = new RuleSet(rules, (r) => !r.dirOnly);
    this.forDirs = new RuleSet(rules, () => true);
  }

  match(relPath: string, isDir: boolean): 'ignore' | 'include' | undefined {
    if (this.rules.length === 0) return undefined;
    if (!relPath.startsWith(this.prefix) || relPath.length === this.prefix.length) return undefined;
    const below = toBytes(this.prefix === '' ? relPath : relPath.slice(this.prefix.length));
    const basename = below.slice(below.lastIndexOf('/') + 1);
    const i = (isDir ? this.forDirs : this.forFiles).lastMatch(below, basename);
    if (i < 0) return undefined;
    return this.rules[i]!.negated ? 'include' : 'ignore';
  }
}

/** Rules of one `.gitignore` whose directory is `base` (POSIX, relative to the scan root). */
export function parseGitignore(text: string, base: string): GitignoreFile {
  const rules: Rule[] = [];
  for (const line of ruleLines(text)) {
    const rule = parseRule(line);
    if (rule) rules.push(rule);
  }
  return new ParsedGitignore(base === '.' ? '' : base.replace(/\/+$/, ''), rules);
}

/**
 * Decision for an entry whose parent directories are NOT ignored (the walker prunes ignored
 * directories, which is how git makes "a file inside an ignored directory cannot be re-included"
 * hold): files are consulted deepest first; the first file with a verdict decides.
 */
export function isIgnored(stack: readonly GitignoreFile[], relPath: string, isDir: boolean): boolean {
  for (let i = stack.length - 1; i >= 0; i--) {
    const verdict = stack[i]!.match(relPath, isDir);
    if (verdict !== undefined) return verdict === 'ignore';
  }
  return false;
}
