import * as fs from 'node:fs';
import { CairnError } from '../core/errors.js';
import { CAPTURED_BY_VALUES, STAGE_PATTERN, TASK_ID_PATTERN, UPSTREAM_STAGES } from './constants.js';

/** Rejects anything but a seed TASK-ID; the id becomes a file name, so this is the traversal guard. */
export function assertTaskId(task: string, exitCode = 1): void {
  if (!TASK_ID_PATTERN.test(task)) {
    throw new CairnError(
      'ERR_INVALID_TASK_ID',
      `invalid TASK-ID ${JSON.stringify(task)}: it must match ${TASK_ID_PATTERN.source} (for example TUNE-0254 or DEV-1438-FU-perf)`,
      { exitCode, details: { task } },
    );
  }
}

export function assertStage(stage: string): void {
  if (!STAGE_PATTERN.test(stage)) {
    throw new CairnError(
      'ERR_INVALID_STAGE',
      `invalid stage ${JSON.stringify(stage)}: use one of ${UPSTREAM_STAGES.join(', ')}, or another lowercase token matching ${STAGE_PATTERN.source}`,
      { exitCode: 1, details: { stage } },
    );
  }
}

export function isCapturedBy(value: unknown): boolean {
  return typeof value === 'string' && (CAPTURED_BY_VALUES as readonly string[]).includes(value);
}

/** `--captured-by` is `agent` or `operator`, as the seed's usage says and the MCP tool's enum enforces. */
export function assertCapturedBy(value: string): void {
  if (!isCapturedBy(value)) {
    throw new CairnError('ERR_INVALID_CAPTURED_BY', `invalid --captured-by ${JSON.stringify(value)}: use ${CAPTURED_BY_VALUES.join(' or ')}`, {
      exitCode: 1,
      details: { capturedBy: value },
    });
  }
}

// ISO 8601 in UTC, to the second, optional fraction; `Z` or the explicit `+00:00` offset.
const CAPTURED_AT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|\+00:00)$/;

/** Accepts `YYYY-MM-DDTHH:MM:SS[.fff](Z|+00:00)` naming a real instant; the text is kept as given. */
export function assertCapturedAt(value: string): void {
  const m = CAPTURED_AT.exec(value);
  const ok =
    m !== null &&
    (() => {
      const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
      const t = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
      return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && t.getUTCHours() === h && t.getUTCMinutes() === mi && t.getUTCSeconds() === s;
    })();
  if (!ok) {
    throw new CairnError(
      'ERR_INVALID_CAPTURED_AT',
      `invalid --captured-at ${JSON.stringify(value)}: use ISO 8601 UTC such as 2026-05-21T13:45:00Z (what \`date -u +%FT%TZ\` prints)`,
      { exitCode: 1, details: { capturedAt: value } },
    );
  }
}

/** Now, as `date -u +%Y-%m-%dT%H:%M:%SZ` prints it. */
export function nowCapturedAt(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Option lines from a file: one per non-empty line, a trailing CR dropped (CRLF files).
 * A missing path or a non-file gives no options, as upstream does.
 */
export function readOptionsFile(file: string): string[] {
  let bytes: Buffer;
  try {
    if (!fs.statSync(file).isFile()) return [];
    bytes = fs.readFileSync(file);
  } catch {
    return [];
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CairnError('ERR_VALIDATION', `options file is not valid UTF-8: ${file}; the frontmatter is YAML and must be UTF-8`, {
      exitCode: 1,
      path: file,
    });
  }
  return text
    .split('\n')
    .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
    .filter((line) => line.length > 0);
}

/** The body file's bytes; it must exist and be a regular file (a link to one is fine, like `test -f`). */
export function readBodyFile(file: string): Buffer {
  let isFile = false;
  try {
    isFile = fs.statSync(file).isFile();
  } catch {
    // reported below
  }
  if (!isFile) {
    throw new CairnError('ERR_BODY_FILE', `body file not found or not a regular file: ${file}`, { exitCode: 1, path: file });
  }
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new CairnError('ERR_IO', `cannot read body file ${file}: ${(e as Error).message}`, { exitCode: 1, path: file, cause: e });
  }
}
