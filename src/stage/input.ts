import * as fs from 'node:fs';
import { CairnError } from '../core/errors.js';
import { decodeUtf8Strict } from '../core/utf8.js';
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
  const text = strictInputText(bytes, 'options file', file);
  return text
    .split('\n')
    .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
    .filter((line) => line.length > 0);
}

/**
 * The one UTF-8 rule for stage input: the note is a YAML-fronted UTF-8 file, so an options file
 * or a body that is not valid UTF-8 is refused (exit 1, the seed's validation failure), never
 * repaired with U+FFFD nor copied through. Decoded with core's strict decoder.
 */
export function strictInputText(bytes: Uint8Array, what: 'options file' | 'body', file: string): string {
  try {
    return decodeUtf8Strict(bytes, file);
  } catch (e) {
    throw new CairnError('ERR_VALIDATION', `${what} is not valid UTF-8: ${file}; the stage note is UTF-8, so re-save it as UTF-8 and run again`, {
      exitCode: 1,
      path: file,
      cause: e,
    });
  }
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
