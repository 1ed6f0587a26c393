/**
 * The shape every test-result parser returns, and the small helpers they share to keep counts
 * honest (non-negative integers, never NaN) and snippets short.
 */

/**
 * A parsed test summary. `type` keeps the seed's documented values: `'jest'` for Jest-style JSON
 * (Vitest's JSON reporter included) and `'text'` (with `snippet`) for runner output read as
 * text. cairn adds `'junit'` (JUnit XML), `'json'` (other machine-readable reports: Mocha JSON,
 * `go test -json`) and `'coverage'` (coverage reports without test counts). TAP streams stay
 * `'text'` (the seed lists `# tests X` among its text patterns) with `runner: 'tap'` or
 * `'node:test'`; `'tap'` is accepted in the type for producers that want it.
 * `passed/failed/skipped/total` are present whenever the source states them.
 */
export interface TestSummary {
  // The literals document the known values for readers; `string` keeps other producers valid.
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents
  type: 'jest' | 'text' | 'junit' | 'tap' | string;
  total?: number;
  passed?: number;
  failed?: number;
  skipped?: number;
  snippet?: string;
  runner?: string;
  [k: string]: unknown;
}

/** The most characters a snippet keeps; a summary is a few lines, never a whole log. */
const SNIPPET_MAX = 1000;

/** A count as a non-negative safe integer, or undefined for anything else (negative, 1.5, "3"). */
export function toCount(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}

/** Sum of counts that stays a safe integer (absurd inputs saturate instead of losing precision). */
export function sumCounts(...values: (number | undefined)[]): number {
  let sum = 0;
  for (const v of values) if (v !== undefined) sum += v;
  return Math.min(sum, Number.MAX_SAFE_INTEGER);
}

/** Trimmed summary lines joined by newlines, capped so a pathological line cannot bloat a snapshot. */
export function makeSnippet(lines: readonly string[]): string {
  const text = lines.map((l) => l.trim()).filter((l) => l.length > 0).join('\n');
  return text.length > SNIPPET_MAX ? `${text.slice(0, SNIPPET_MAX - 1)}…` : text;
}

/** Copies only the defined entries, so summaries never carry `undefined`-valued keys. */
export function compact(summary: TestSummary): TestSummary {
  const out: TestSummary = { type: summary.type };
  for (const [key, value] of Object.entries(summary)) {
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** A failing test as a runner named it: its name, and where the runner said, its file and message. */
export interface FailedTest {
  name: string;
  file?: string;
  message?: string;
}

/** At most this many failing tests are kept per summary; a summary says how many failed in all. */
export const FAILURES_MAX = 50;
const FAILURE_TEXT_MAX = 300;

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML's five named entities and numeric references (the XML parser leaves them as written). */
function decodeEntities(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g, (m, e: string) => {
    if (e.startsWith('#')) {
      const code = e[1] === 'x' ? parseInt(e.slice(2), 16) : Number(e.slice(1));
      return code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e] ?? m;
  });
}

function clip(text: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = decodeEntities(text.replace(/\u001b\[[0-9;]*m/g, '')).trim();
  const first = plain.split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
  return first.length > FAILURE_TEXT_MAX ? `${first.slice(0, FAILURE_TEXT_MAX - 1)}…` : first;
}

/** A FailedTest with its texts cut to one short line each (ANSI colours removed); null without a name. */
export function failedTest(name: unknown, file?: unknown, message?: unknown): FailedTest | null {
  if (typeof name !== 'string' || clip(name) === '') return null;
  const out: FailedTest = { name: clip(name) };
  if (typeof file === 'string' && clip(file) !== '') out.file = clip(file);
  if (typeof message === 'string' && clip(message) !== '') out.message = clip(message);
  return out;
}
