import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  STAGE_SNAPSHOT_MAX_BYTES,
  TASK_ID_PATTERN,
  TRUNCATION_MARKER,
  parseStageSnapshot,
  renderStageSnapshot,
  validateStageSnapshot,
  writeStageSnapshot,
  type StageSnapshotFields,
} from '../../src/stage/index.js';
import { cleanup, tempDir } from './support.js';
import { isValidUtf8 } from '../../src/stage/utf8-cut.js';

const MARKER_BLOCK = Buffer.from(`\n${TRUNCATION_MARKER}\n`);

function validUtf8(b: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
}

// Any text a caller could pass, including newlines, quotes, YAML indicators and astral characters.
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom('true', 'null', '~', '1', '0o17', 'yes', '- x', ': x', '#c', '"q"', "'s'", '[a]', '{b: 1}', '|', '>', '*a', '&a', '!t', '%x', '@x', '`x`', '---', '...', ' lead', 'trail ', 'a\nb: c', '\u2028', '\u0085', '\ufeff', '1:20', 'a:', 'a:b', 'Null', 'On', 'y', 'N', 'TRUE', '0x1F', '1e3', '.inf', '.NaN', '=', '<<', '_x', '/x:', 'http://h/p', 'a#b', 'a #b'),
);
const nonEmptyText = anyText.filter((s) => s.length > 0);

const fieldsArb: fc.Arbitrary<StageSnapshotFields> = fc.record({
  task: fc.stringMatching(TASK_ID_PATTERN).filter((s) => s.length <= 60),
  stage: fc.stringMatching(/^[a-z][a-z0-9-]{0,31}$/),
  command: nonEmptyText,
  capturedAt: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z')),
  capturedBy: nonEmptyText,
  recommendedNext: nonEmptyText,
  options: fc.array(anyText.filter((s) => s.length > 0), { maxLength: 8 }),
});

// Bodies around the cap: valid UTF-8 text of every width, or raw bytes.
const textBody = fc.string({ unit: 'binary', maxLength: 4000 }).chain((s) => fc.integer({ min: 1, max: 5 }).map((times) => Buffer.from(s.repeat(times), 'utf8')));
const byteBody = fc.uint8Array({ maxLength: 12_000 }).map((a) => Buffer.from(a));

function expectNoteProperties(fields: StageSnapshotFields, body: Buffer, bytes: Buffer, sizeBytes: number, truncated: boolean): void {
  expect(bytes.length).toBeLessThanOrEqual(STAGE_SNAPSHOT_MAX_BYTES);
  expect(sizeBytes).toBe(bytes.length);
  const parsed = parseStageSnapshot(bytes);
  if (!parsed.ok) throw new Error(parsed.problem);
  const fm = parse(parsed.note.frontmatterText, { uniqueKeys: true }) as Record<string, unknown>;
  expect(fm).toEqual({
    task_id: fields.task,
    artifact: 'stage-snapshot',
    schema_version: 1,
    stage: fields.stage,
    command: fields.command,
    captured_at: fields.capturedAt,
    captured_by: fields.capturedBy,
    recommended_next: fields.recommendedNext,
    options: fields.options,
    size_bytes: bytes.length,
    truncated,
  });
  if (truncated) {
    const kept = parsed.note.body.subarray(0, parsed.note.body.length - MARKER_BLOCK.length);
    expect(parsed.note.body.subarray(kept.length).equals(MARKER_BLOCK)).toBe(true);
    expect(body.subarray(0, kept.length).equals(kept)).toBe(true); // a prefix of the input
    expect(kept.length).toBeLessThan(body.length);
    // As close to the cap as a character boundary allows (a character is at most 4 bytes).
    expect(bytes.length).toBeGreaterThan(STAGE_SNAPSHOT_MAX_BYTES - 4);
  } else {
    expect(parsed.note.body.equals(body)).toBe(true);
  }
  if (validUtf8(body)) expect(validUtf8(bytes)).toBe(true);
}

describe('rendered notes (property)', () => {
  it('for random values and bodies: ≤ 8192 bytes, exact size_bytes, YAML parses back to the values, body whole or a prefix', () => {
    fc.assert(
      fc.property(fieldsArb, fc.oneof(textBody, byteBody), (fields, body) => {
        let rendered;
        try {
          rendered = renderStageSnapshot(fields, body);
        } catch (e) {
          // Only a frontmatter too big for the cap may fail, and it says so.
          expect((e as { code?: string }).code).toBe('ERR_CAP_EXCEEDED');
          return;
        }
        expectNoteProperties(fields, body, rendered.bytes, rendered.sizeBytes, rendered.truncated);
      }),
      { numRuns: 400 },
    );
  });

  it('a body is truncated exactly when the whole note would exceed 8192 bytes', () => {
    fc.assert(
      fc.property(fieldsArb, fc.integer({ min: 7000, max: 9000 }), (fields, len) => {
        const body = Buffer.alloc(len, 0x61);
        const whole = renderStageSnapshot(fields, Buffer.alloc(0));
        const wouldBe = whole.sizeBytes + len + (String(whole.sizeBytes + len).length - String(whole.sizeBytes).length);
        try {
          expect(renderStageSnapshot(fields, body).truncated).toBe(wouldBe > STAGE_SNAPSHOT_MAX_BYTES);
        } catch (e) {
          expect((e as { code?: string }).code).toBe('ERR_CAP_EXCEEDED');
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('written notes (property, real files)', () => {
  let root: string;
  beforeAll(() => {
    root = tempDir();
  });
  afterAll(() => cleanup(root));

  it('what writeStageSnapshot publishes passes the validator and has the properties above', async () => {
    await fc.assert(
      fc.asyncProperty(fieldsArb, fc.oneof(textBody, byteBody), async (fields, body) => {
        const { task, ...rest } = fields;
        let r;
        try {
          // The writer takes only agent|operator for captured-by (the render property tests cover any text).
          r = await writeStageSnapshot({ root, task, ...rest, capturedBy: rest.command.length % 2 === 0 ? 'agent' : 'operator', options: rest.options, body });
        } catch (e) {
          // A body that is not UTF-8 is refused before anything else; otherwise only the cap can fail.
          expect((e as { code?: string }).code).toBe(isValidUtf8(body) ? 'ERR_CAP_EXCEEDED' : 'ERR_VALIDATION');
          return;
        }
        expect(isValidUtf8(body)).toBe(true);
        const bytes = fs.readFileSync(r.path);
        expectNoteProperties({ ...fields, capturedBy: rest.command.length % 2 === 0 ? 'agent' : 'operator' }, body, bytes, r.sizeBytes, r.truncated);
        const check = validateStageSnapshot(root, task, { validateFrontmatter: true });
        expect(check.problems).toEqual([]);
        expect(check.exitCode).toBe(0);
        expect(fs.statSync(r.path).mode & 0o777).toBe(0o600);
        const dir = path.dirname(r.path);
        expect(fs.readdirSync(dir).filter((n) => !n.endsWith('.snapshot.md'))).toEqual([]);
      }),
      { numRuns: 120 },
    );
  });
});
