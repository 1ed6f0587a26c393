/**
 * Recognises the closing summary lines that real test runners print: Jest, Vitest, Mocha, TAP
 * (node:test's TAP reporter included), node:test's spec reporter, pytest, `go test` and
 * `cargo test`, plus a conservative generic `N passed, N failed` line.
 *
 * Choosing between runners: each recogniser reports the line where its summary ends, and the
 * summary that ends LAST in the output wins (a log's final summary describes the final run; a
 * stray "3 passing" printed by a test earlier does not outvote the runner's closing lines). On
 * the same line, the earlier recogniser in `RECOGNISERS` (the more specific one) wins. The
 * generic pattern is used only when no runner-specific summary is present.
 */
import { compact, makeSnippet, sumCounts, toCount, type TestSummary } from './test-results-summary.js';

interface Recognised {
  summary: TestSummary;
  /** Index of the last line of the summary; larger means later in the output. */
  endLine: number;
}

type Recogniser = (lines: readonly string[]) => Recognised | null;

/** Longer lines are never summary lines; skipping them keeps every regex cheap on any input. */
const MAX_LINE = 2000;

// CSI (colours, cursor moves) and OSC (hyperlinks, titles) escape sequences.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]/g;

/** Strips ANSI escapes and splits on every line break style (`\r` progress redraws included). */
export function toLines(content: string): string[] {
  return content.replace(ANSI, '').split(/\r\n|\r|\n/).map((l) => (l.length > MAX_LINE ? '' : l));
}

/** Runner-specific summaries first, the generic line last (see the module comment). */
export function recogniseText(content: string): TestSummary | null {
  const lines = toLines(content);
  let best: Recognised | null = null;
  for (const recognise of RECOGNISERS) {
    const found = recognise(lines);
    if (found && (best === null || found.endLine > best.endLine)) best = found;
  }
  if (best) return best.summary;
  return genericSummary(lines)?.summary ?? null;
}

/** Index of the last line matching `re`, searching backwards (summaries sit at the end). */
function lastMatch(lines: readonly string[], re: RegExp): { index: number; match: RegExpExecArray } | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = re.exec(lines[i] ?? '');
    if (match) return { index: i, match };
  }
  return null;
}

/** `N word` items of a summary line, keyed by lower-case word. */
function countItems(body: string, separator: RegExp): Map<string, number> | null {
  const counts = new Map<string, number>();
  for (const part of body.split(separator)) {
    const item = /^\s*(\d{1,15})\s+([a-z]+(?: [a-z]+)*)\s*$/i.exec(part);
    if (!item) return null;
    const word = (item[2] ?? '').toLowerCase();
    counts.set(word, sumCounts(counts.get(word), toCount(item[1])));
  }
  return counts;
}

/** Jest: `Tests:       1 failed, 1 skipped, 1 todo, 2 passed, 5 total`. */
const JEST_LINE = /(?:^|[^\w])Tests:\s+(\d{1,15}\s+[a-z]+(?:,\s*\d{1,15}\s+[a-z]+)*)/i;
function jest(lines: readonly string[]): Recognised | null {
  const hit = lastMatch(lines, JEST_LINE);
  if (!hit) return null;
  const counts = countItems(hit.match[1] ?? '', /,/);
  if (!counts || !counts.has('total')) return null;
  const passed = counts.get('passed') ?? 0;
  const failed = counts.get('failed') ?? 0;
  const skipped = counts.get('skipped') ?? 0;
  const todo = counts.get('todo');
  const line = lines[hit.index] ?? '';
  return {
    endLine: hit.index,
    summary: compact({
      type: 'text',
      runner: 'jest',
      snippet: makeSnippet([line.slice(line.indexOf('Tests:') >= 0 ? line.indexOf('Tests:') : 0)]),
      total: counts.get('total'),
      passed,
      failed,
      skipped,
      todo,
    }),
  };
}

/** Vitest: `      Tests  1 failed | 2 passed | 1 skipped | 1 todo (5)`. */
const VITEST_LINE = /^\s*Tests\s+(\d{1,15}\s+[a-z][^|()]*(?:\|\s*\d{1,15}\s+[a-z][^|()]*)*)\((\d{1,15})\)\s*$/i;
function vitest(lines: readonly string[]): Recognised | null {
  const hit = lastMatch(lines, VITEST_LINE);
  if (!hit) return null;
  const counts = countItems(hit.match[1] ?? '', /\|/);
  if (!counts) return null;
  return {
    endLine: hit.index,
    summary: compact({
      type: 'text',
      runner: 'vitest',
      snippet: makeSnippet([lines[hit.index] ?? '']),
      total: toCount(hit.match[2]),
      passed: counts.get('passed') ?? 0,
      failed: counts.get('failed') ?? 0,
      skipped: counts.get('skipped') ?? 0,
      todo: counts.get('todo'),
    }),
  };
}

/** Mocha: `  2 passing (3ms)`, then optional `  1 pending` and `  1 failing` lines. */
function mocha(lines: readonly string[]): Recognised | null {
  const hit = lastMatch(lines, /(?:^|\s)(\d{1,15})\s+passing\b/i);
  if (!hit) return null;
  const snippet = [lines[hit.index] ?? ''];
  let failed = 0;
  let pending = 0;
  let endLine = hit.index;
  for (let i = hit.index + 1; i < Math.min(lines.length, hit.index + 4); i++) {
    const line = lines[i] ?? '';
    const extra = /^\s*(\d{1,15})\s+(failing|pending)\s*$/i.exec(line);
    if (!extra) continue;
    if ((extra[2] ?? '').toLowerCase() === 'failing') failed = toCount(extra[1]) ?? 0;
    else pending = toCount(extra[1]) ?? 0;
    snippet.push(line);
    endLine = i;
  }
  const passed = toCount(hit.match[1]) ?? 0;
  return {
    endLine,
    summary: compact({
      type: 'text',
      runner: 'mocha',
      snippet: makeSnippet(snippet),
      total: sumCounts(passed, failed, pending),
      passed,
      failed,
      skipped: pending,
    }),
  };
}

/** Summary counters printed by TAP producers (`# pass 2`) and node:test's spec reporter (`ℹ pass 2`). */
interface Counters {
  values: Map<string, number>;
  lines: string[];
  endLine: number;
}

const COUNTER_WORDS = 'tests|suites|pass|fail|cancelled|skip|skipped|todo|duration_ms';

/** The last contiguous-ish block of counter lines (a later run's block replaces an earlier one). */
function lastCounters(lines: readonly string[], re: RegExp): Counters | null {
  let values = new Map<string, number>();
  let block: string[] = [];
  let endLine = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const m = re.exec(line);
    if (!m) continue;
    const word = (m[1] ?? '').toLowerCase();
    // A counter seen twice starts a new block: the output holds several runs, keep the last.
    if (values.has(word)) {
      values = new Map();
      block = [];
    }
    values.set(word, toCount(m[2]) ?? 0);
    block.push(line);
    endLine = i;
  }
  if (!values.has('tests') && !values.has('pass') && !values.has('fail')) return null;
  return { values, lines: block, endLine };
}

/** Counts from TAP/node:test counters; `total` never undercounts the parts (Mocha's `# tests` omits pending). */
function fromCounters(c: Counters, runner: string, directiveSkips: number, directiveTodos: number): TestSummary {
  const passed = c.values.get('pass');
  const cancelled = c.values.get('cancelled');
  const failed = c.values.has('fail') || cancelled !== undefined ? sumCounts(c.values.get('fail'), cancelled) : undefined;
  const skipped = c.values.get('skipped') ?? c.values.get('skip') ?? directiveSkips;
  const todo = c.values.get('todo') ?? (directiveTodos > 0 ? directiveTodos : undefined);
  const total = Math.max(c.values.get('tests') ?? 0, sumCounts(passed, failed, skipped, todo));
  return compact({
    type: 'text',
    runner,
    snippet: makeSnippet(c.lines.filter((l) => !/duration_ms/.test(l))),
    total,
    passed,
    failed,
    skipped,
    todo,
    cancelled: cancelled && cancelled > 0 ? cancelled : undefined,
  });
}

const TAP_COUNTER = new RegExp(`^#\\s+(${COUNTER_WORDS})\\s+(\\d{1,15})(?:\\.\\d+)?\\s*$`, 'i');
const TAP_TEST = /^(\s*)(not ok|ok)\b(.*)$/i;
const TAP_PLAN = /^(\s*)(\d{1,15})\.\.(\d{1,15})\b/;
// node:test-only counters tell its TAP reporter apart from other TAP producers.
const NODE_TEST_ONLY = /^#\s+(suites|cancelled|duration_ms)\b/i;

/** TAP: `# tests/pass/fail/skip` counters when present, else the top-level `ok`/`not ok` lines. */
function tap(lines: readonly string[]): Recognised | null {
  let skips = 0;
  let todos = 0;
  let topIndent = Infinity;
  let lastTapLine = -1;
  let sawPlan = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const plan = TAP_PLAN.exec(line);
    const test = plan ? null : TAP_TEST.exec(line);
    if (plan) {
      sawPlan = true;
      topIndent = Math.min(topIndent, plan[1]?.length ?? 0);
      lastTapLine = i;
    } else if (test) {
      topIndent = Math.min(topIndent, test[1]?.length ?? 0);
      if (/#\s*skip\b/i.test(test[3] ?? '')) skips++;
      else if (/#\s*todo\b/i.test(test[3] ?? '')) todos++;
      lastTapLine = i;
    }
  }
  const counters = lastCounters(lines, TAP_COUNTER);
  if (counters) {
    const runner = lines.some((l) => NODE_TEST_ONLY.test(l)) ? 'node:test' : 'tap';
    return { endLine: Math.max(counters.endLine, lastTapLine), summary: fromCounters(counters, runner, skips, todos) };
  }
  if (!sawPlan || lastTapLine < 0) return null;
  return countTapLines(lines, topIndent);
}

/** Counts top-level TAP test points (nested subtests are summarised by their parent). */
function countTapLines(lines: readonly string[], indent: number): Recognised | null {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let todo = 0;
  let planned: number | undefined;
  let endLine = -1;
  const snippet: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const plan = TAP_PLAN.exec(line);
    if (plan && (plan[1]?.length ?? 0) === indent) {
      planned = toCount(plan[3]);
      snippet.push(line);
      endLine = i;
      continue;
    }
    const test = TAP_TEST.exec(line);
    if (!test || (test[1]?.length ?? 0) !== indent) continue;
    const directive = test[3] ?? '';
    if (/#\s*skip\b/i.test(directive)) skipped++;
    else if (/#\s*todo\b/i.test(directive)) todo++;
    else if ((test[2] ?? '').toLowerCase() === 'ok') passed++;
    else {
      failed++;
      snippet.push(line);
    }
    endLine = i;
  }
  const total = sumCounts(passed, failed, skipped, todo);
  if (total === 0 && planned !== 0) return null;
  return {
    endLine,
    summary: compact({
      type: 'text',
      runner: 'tap',
      snippet: makeSnippet([`${passed} ok, ${failed} not ok, ${skipped} skipped`, ...snippet.slice(0, 5)]),
      total,
      passed,
      failed,
      skipped,
      todo: todo > 0 ? todo : undefined,
      planned,
    }),
  };
}

const SPEC_COUNTER = new RegExp(`^\\s*ℹ\\s+(${COUNTER_WORDS})\\s+(\\d{1,15})(?:\\.\\d+)?\\s*$`, 'i');

/** node:test spec reporter: `ℹ tests 5`, `ℹ pass 2`, `ℹ fail 1`, … */
function nodeSpec(lines: readonly string[]): Recognised | null {
  const counters = lastCounters(lines, SPEC_COUNTER);
  if (!counters) return null;
  return { endLine: counters.endLine, summary: fromCounters(counters, 'node:test', 0, 0) };
}

/** pytest: `=== 1 failed, 2 passed, 1 skipped, 1 xfailed, 1 error in 0.52s ===` (also `-q`, without rules). */
const PYTEST_LINE = /^\s*(?:=+\s+)?(\d{1,15}\s+[a-z]+(?:,\s+\d{1,15}\s+[a-z]+)*|no tests ran)\s+in\s+\d+(?:\.\d+)?s\b[^=]*(?:=+\s*)?$/i;
const PYTEST_WORDS = new Set(['passed', 'failed', 'skipped', 'deselected', 'xfailed', 'xpassed', 'warning', 'warnings', 'error', 'errors', 'rerun', 'reruns']);
function pytest(lines: readonly string[]): Recognised | null {
  const hit = lastMatch(lines, PYTEST_LINE);
  if (!hit) return null;
  const body = hit.match[1] ?? '';
  const counts = /^no tests ran$/i.test(body) ? new Map<string, number>() : countItems(body, /,/);
  if (!counts || [...counts.keys()].some((w) => !PYTEST_WORDS.has(w))) return null;
  const errors = sumCounts(counts.get('error'), counts.get('errors'));
  const xfailed = counts.get('xfailed');
  const xpassed = counts.get('xpassed');
  // An unexpected pass still passed; an expected failure is reported as skipped, as pytest's JUnit does.
  const passed = sumCounts(counts.get('passed'), xpassed);
  const failed = sumCounts(counts.get('failed'), errors);
  const skipped = sumCounts(counts.get('skipped'), xfailed);
  return {
    endLine: hit.index,
    summary: compact({
      type: 'text',
      runner: 'pytest',
      snippet: makeSnippet([(lines[hit.index] ?? '').replace(/^\s*=+\s*|\s*=+\s*$/g, '')]),
      total: sumCounts(passed, failed, skipped),
      passed,
      failed,
      skipped,
      errors: errors > 0 ? errors : undefined,
      xfailed,
      xpassed,
      deselected: counts.get('deselected'),
      warnings: counts.has('warning') || counts.has('warnings') ? sumCounts(counts.get('warning'), counts.get('warnings')) : undefined,
    }),
  };
}

const GO_PACKAGE = /^(ok|FAIL|\?)\s+(\S+)\s+(\d+(?:\.\d+)?s|\(cached\)|\[[a-z ]+\])(?:\s.*)?$/;
const GO_RESULT = /^\s*--- (PASS|FAIL|SKIP): (\S+)/;
const GO_RUN = /^=== RUN\s+(\S+)/;

/** `go test`: `--- PASS/FAIL/SKIP:` result lines (subtests count too) and `ok`/`FAIL` package lines. */
function goTest(lines: readonly string[]): Recognised | null {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let packagesPassed = 0;
  let packagesFailed = 0;
  let endLine = -1;
  const runs = new Set<string>();
  const snippet: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const run = GO_RUN.exec(line);
    if (run) {
      runs.add(run[1] ?? '');
      continue;
    }
    const result = GO_RESULT.exec(line);
    if (result) {
      if (result[1] === 'PASS') passed++;
      else if (result[1] === 'FAIL') failed++;
      else skipped++;
      endLine = i;
      continue;
    }
    const pkg = GO_PACKAGE.exec(line);
    if (pkg) {
      if (pkg[1] === 'ok') packagesPassed++;
      else if (pkg[1] === 'FAIL') packagesFailed++;
      snippet.push(line.replace(/\t/g, ' '));
      endLine = i;
    }
  }
  if (endLine < 0) return null;
  // Without -v, go prints only failures: passes and skips are not stated, so they stay absent.
  const verbose = runs.size > 0;
  return {
    endLine,
    summary: compact({
      type: 'text',
      runner: 'go',
      snippet: makeSnippet(snippet.length > 0 ? snippet.slice(-10) : [`${failed} failed`]),
      total: verbose ? Math.max(runs.size, sumCounts(passed, failed, skipped)) : undefined,
      passed: verbose ? passed : undefined,
      failed,
      skipped: verbose ? skipped : undefined,
      packagesPassed,
      packagesFailed,
    }),
  };
}

/** cargo: `test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; …`, summed over binaries. */
const CARGO_LINE = /^test result: (ok|FAILED)\.\s+(\d{1,15}) passed;\s+(\d{1,15}) failed;\s+(\d{1,15}) ignored;(?:\s+(\d{1,15}) measured;)?(?:\s+(\d{1,15}) filtered out)?/;
function cargo(lines: readonly string[]): Recognised | null {
  let passed = 0;
  let failed = 0;
  let ignored = 0;
  let filteredOut = 0;
  let endLine = -1;
  const snippet: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = CARGO_LINE.exec(lines[i] ?? '');
    if (!m) continue;
    passed = sumCounts(passed, toCount(m[2]));
    failed = sumCounts(failed, toCount(m[3]));
    ignored = sumCounts(ignored, toCount(m[4]));
    filteredOut = sumCounts(filteredOut, toCount(m[6]));
    snippet.push(lines[i] ?? '');
    endLine = i;
  }
  if (endLine < 0) return null;
  return {
    endLine,
    summary: compact({
      type: 'text',
      runner: 'cargo',
      snippet: makeSnippet(snippet.slice(-10)),
      total: sumCounts(passed, failed, ignored),
      passed,
      failed,
      skipped: ignored,
      filteredOut,
    }),
  };
}

const GENERIC_WORD = '(?:passed|passing|failed|failing|failures?|errors?|skipped|pending|ignored|todo|total)';
const GENERIC_LINE = new RegExp(`(?:^|[^\\w])(\\d{1,15}\\s+${GENERIC_WORD}(?:\\s*[,;|]\\s*\\d{1,15}\\s+${GENERIC_WORD})+)\\b`, 'i');

/** The plain `5 passed, 1 failed` line of runners we do not know by name. */
function genericSummary(lines: readonly string[]): Recognised | null {
  const hit = lastMatch(lines, GENERIC_LINE);
  if (!hit) return null;
  const counts = countItems(hit.match[1] ?? '', /[,;|]/);
  if (!counts) return null;
  const get = (...words: string[]): number | undefined =>
    words.some((w) => counts.has(w)) ? sumCounts(...words.map((w) => counts.get(w))) : undefined;
  const passed = get('passed', 'passing');
  const failed = get('failed', 'failing', 'failure', 'failures', 'error', 'errors');
  if (passed === undefined && failed === undefined) return null;
  const skipped = get('skipped', 'pending', 'ignored');
  return {
    endLine: hit.index,
    summary: compact({
      type: 'text',
      runner: 'unknown',
      snippet: makeSnippet([lines[hit.index] ?? '']),
      total: counts.get('total') ?? sumCounts(passed, failed, skipped, counts.get('todo')),
      passed,
      failed,
      skipped,
    }),
  };
}

/** Order matters only for summaries ending on the same line: the more specific recogniser wins. */
const RECOGNISERS: readonly Recogniser[] = [cargo, pytest, goTest, jest, vitest, nodeSpec, tap, mocha];
