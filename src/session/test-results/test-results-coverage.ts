/**
 * Coverage reports that the seed's search list names: Istanbul's `coverage-summary.json`
 * (`json-summary` reporter) and the lcov HTML report's `index.html`. They state no test
 * counts, only that tests ran and how much they covered, so they yield
 * `{ type: 'coverage', runner: 'istanbul', lines, statements, functions, branches, snippet }`
 * with percentages (0–100) for the metrics the report states; upstream parsed them as test
 * output and never recognised them.
 */
import { compact, makeSnippet, type TestSummary } from './test-results-summary.js';

const METRICS = ['lines', 'statements', 'functions', 'branches'] as const;
type Metric = (typeof METRICS)[number];

function toPercent(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 100 ? value : undefined;
}

function coverageSummary(percents: Partial<Record<Metric, number>>): TestSummary | null {
  const stated = METRICS.filter((m) => percents[m] !== undefined);
  if (stated.length === 0) return null;
  return compact({
    type: 'coverage',
    runner: 'istanbul',
    snippet: makeSnippet([`Coverage: ${stated.map((m) => `${m} ${percents[m]}%`).join(', ')}`]),
    ...percents,
  });
}

/** Istanbul `coverage-summary.json`: `{ total: { lines: { pct }, … }, <file>: … }`. */
export function parseCoverageSummaryJson(content: string): TestSummary | null {
  let doc: unknown;
  try {
    doc = JSON.parse(content);
  } catch {
    return null;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return null;
  const total = (doc as Record<string, unknown>).total;
  if (typeof total !== 'object' || total === null) return null;
  const percents: Partial<Record<Metric, number>> = {};
  for (const metric of METRICS) {
    const entry = (total as Record<string, unknown>)[metric];
    if (typeof entry === 'object' && entry !== null) {
      const pct = toPercent((entry as Record<string, unknown>).pct);
      if (pct !== undefined) percents[metric] = pct;
    }
  }
  return coverageSummary(percents);
}

/** lcov-report `index.html`: `<span class="strong">40% </span> <span class="quiet">Statements</span>`. */
export function parseLcovHtmlReport(content: string): TestSummary | null {
  const percents: Partial<Record<Metric, number>> = {};
  const re = /<span class=["']strong["']>\s*(\d{1,3}(?:\.\d{1,4})?)\s*%\s*<\/span>\s*<span class=["']quiet["']>\s*(Statements|Branches|Functions|Lines)\s*<\/span>/gi;
  for (const m of content.matchAll(re)) {
    const metric = (m[2] ?? '').toLowerCase() as Metric;
    const pct = toPercent(Number(m[1]));
    // The first occurrence is the report's total; later ones belong to individual files.
    if (pct !== undefined && percents[metric] === undefined) percents[metric] = pct;
  }
  return coverageSummary(percents);
}
