import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  STAGE_SNAPSHOT_MAX_BYTES,
  TRUNCATION_MARKER,
  renderStageSnapshot,
  writeStageSnapshot,
  type StageSnapshotFields,
  type WriteStageSnapshotOptions,
} from '../../src/stage/index.js';
import { utf8CutPoint } from '../../src/stage/utf8-cut.js';
import { cleanup, tempDir } from './support.js';

const fields: StageSnapshotFields = {
  task: 'TUNE-0254',
  stage: 'plan',
  command: '/dr-plan',
  capturedAt: '2026-05-21T13:45:00Z',
  capturedBy: 'agent',
  recommendedNext: '/dr-do',
  options: ['/dr-do TUNE-0254 | execute the plan'],
};

/** Body length that makes the untruncated note exactly `size` bytes (size with four digits). */
function bodyLengthFor(size: number): number {
  const empty = renderStageSnapshot(fields, Buffer.alloc(0)).sizeBytes;
  // The empty note's size_bytes has three digits; a note of `size` bytes has four.
  return size - empty - (String(size).length - String(empty).length);
}

describe('the cap is exact', () => {
  it('a body that makes the file exactly 8192 bytes is kept whole, byte for byte', () => {
    const body = Buffer.from('z'.repeat(bodyLengthFor(STAGE_SNAPSHOT_MAX_BYTES)));
    const r = renderStageSnapshot(fields, body);
    expect(r.truncated).toBe(false);
    expect(r.sizeBytes).toBe(8192);
    expect(r.bytes.length).toBe(8192);
    expect(r.bytes.subarray(r.bytes.length - body.length).equals(body)).toBe(true);
  });

  it('one byte more (8193) is truncated to a valid file of exactly 8192 bytes', () => {
    const body = Buffer.from('z'.repeat(bodyLengthFor(STAGE_SNAPSHOT_MAX_BYTES) + 1));
    const r = renderStageSnapshot(fields, body);
    expect(r.truncated).toBe(true);
    expect(r.sizeBytes).toBe(8192);
    expect(r.bytes.length).toBe(8192);
    const text = r.bytes.toString('utf8');
    expect(text.endsWith(`\n${TRUNCATION_MARKER}\n`)).toBe(true);
    const fm = parse(text.slice(4, text.indexOf('\n---\n') + 1)) as Record<string, unknown>;
    expect(fm).toMatchObject({ size_bytes: 8192, truncated: true });
  });

  it('the upstream defect is gone: a body that fits is never truncated early', () => {
    // Upstream budgeted with a worst-case probe and truncated bodies ~65 bytes short of the cap.
    for (const delta of [0, -1, -10, -64, -65, -100]) {
      const body = Buffer.from('q'.repeat(bodyLengthFor(STAGE_SNAPSHOT_MAX_BYTES) + delta));
      expect(renderStageSnapshot(fields, body).truncated).toBe(false);
    }
  });

  it('the body is copied byte for byte when it fits, invalid UTF-8 and all, with no newline added', () => {
    const body = Buffer.from([0x66, 0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82, 0x00, 0x0d]);
    const r = renderStageSnapshot(fields, body);
    expect(r.truncated).toBe(false);
    expect(r.bytes.subarray(r.bytes.length - body.length).equals(body)).toBe(true);
  });

  it('an emoji straddling the cut is dropped whole; the file is as close to 8192 as that allows', () => {
    const budget = bodyLengthFor(STAGE_SNAPSHOT_MAX_BYTES) - TRUNCATION_MARKER.length - 2 - 1; // -1: "true" is longer than "false"
    for (let shift = 0; shift < 4; shift++) {
      const body = Buffer.concat([Buffer.from('a'.repeat(budget - shift)), Buffer.from('\u{1F30D}'.repeat(40))]);
      const r = renderStageSnapshot(fields, body);
      expect(r.truncated).toBe(true);
      expect(r.bytes.length).toBe(r.sizeBytes);
      expect(r.bytes.length).toBeLessThanOrEqual(8192);
      expect(r.bytes.length).toBeGreaterThan(8192 - 4);
      expect(() => new TextDecoder('utf-8', { fatal: true }).decode(r.bytes)).not.toThrow();
    }
  });

  it('frontmatter alone over the cap is an error with the rendered size, code ERR_CAP_EXCEEDED, exit 1', () => {
    const big = { ...fields, options: ['x'.repeat(9000)] };
    expect(() => renderStageSnapshot(big, Buffer.from('body'))).toThrow(/rendered snapshot is \d+ bytes; exceeds 8192-byte cap/);
    try {
      renderStageSnapshot(big, Buffer.from('body'));
    } catch (e) {
      expect(e).toMatchObject({ code: 'ERR_CAP_EXCEEDED', exitCode: 1 });
    }
  });

  it('the reported size is exact across the 9999 → 10000 byte boundary', () => {
    // Oracle: the smallest note the writer could make, built by hand from the seed's layout.
    const smallest = (option: string, n: number): string =>
      `---\ntask_id: TUNE-0254\nartifact: stage-snapshot\nschema_version: 1\nstage: plan\ncommand: /dr-plan\n` +
      `captured_at: 2026-05-21T13:45:00Z\ncaptured_by: agent\nrecommended_next: /dr-do\noptions:\n  - "${option}"\n` +
      `size_bytes: ${n}\ntruncated: true\n---\n\n\n${TRUNCATION_MARKER}\n`;
    const seen = new Set<number>();
    const base = Buffer.byteLength(smallest('', 0)) - 1;
    for (let k = 9990 - base; k <= 10_004 - base; k++) {
      const option = 'p'.repeat(k);
      let reported = -1;
      try {
        renderStageSnapshot({ ...fields, options: [option] }, Buffer.from('b'.repeat(100)));
      } catch (e) {
        reported = Number(/is (\d+) bytes/.exec((e as Error).message)?.[1]);
      }
      expect(reported).toBe(Buffer.byteLength(smallest(option, reported)));
      seen.add(reported);
    }
    expect([...seen].some((n) => n <= 9999)).toBe(true);
    expect([...seen].some((n) => n >= 10_000)).toBe(true);
  });
});

describe('utf8CutPoint', () => {
  it('keeps every valid character before the cut and never splits one', () => {
    const s = Buffer.from('aé一\u{1F30D}b');
    const boundaries = [0, 1, 3, 6, 10, 11];
    for (let limit = 0; limit <= s.length; limit++) {
      const cut = utf8CutPoint(s, limit);
      expect(boundaries).toContain(cut);
      expect(cut).toBe(Math.max(...boundaries.filter((b) => b <= limit)));
    }
  });

  it('does not "repair" invalid bytes before the cut (unlike iconv -c)', () => {
    const s = Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x28, 0x63, 0x64]);
    for (let limit = 0; limit <= s.length; limit++) expect(utf8CutPoint(s, limit)).toBe(limit);
  });
});

describe('writeStageSnapshot (library)', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir();
  });
  afterEach(() => cleanup(root));

  it('writes from an in-memory body and options and resolves to {path, sizeBytes, truncated}', async () => {
    const r = await writeStageSnapshot({ root, task: 'TUNE-0001', stage: 'qa', command: '/dr-qa', capturedBy: 'operator', recommendedNext: '/dr-archive', body: 'é'.repeat(5000), options: ['/dr-archive | done'] });
    const real = fs.realpathSync(root);
    expect(r).toEqual({ path: path.join(real, 'datarim', 'snapshots', 'TUNE-0001.snapshot.md'), sizeBytes: fs.statSync(r.path).size, truncated: true, disabled: false });
    expect(r.sizeBytes).toBeGreaterThan(8190); // 2-byte characters: within one character of the cap
  });

  it('rejects with exit codes: 2 for a missing flag, 1 for validation, and writes nothing', async () => {
    await expect(writeStageSnapshot({ root, task: 'TUNE-0001' } as never)).rejects.toMatchObject({ code: 'ERR_USAGE', exitCode: 2, message: 'missing required flag(s): --stage --command --captured-by --recommended-next --body-file' });
    await expect(writeStageSnapshot({ root, task: 'bad', stage: 'qa', command: '/dr-qa', capturedBy: 'a', recommendedNext: '/x', body: 'b' })).rejects.toMatchObject({ code: 'ERR_INVALID_TASK_ID', exitCode: 1 });
    await expect(writeStageSnapshot({ root, task: 'TUNE-0001', stage: 'Q', command: '/dr-qa', capturedBy: 'a', recommendedNext: '/x', body: 'b' })).rejects.toMatchObject({ code: 'ERR_INVALID_STAGE', exitCode: 1 });
    await expect(writeStageSnapshot({ root, task: 'TUNE-0001', stage: 'qa', command: '/dr-qa', capturedBy: 'a', recommendedNext: '/x', body: 'b', lockTimeoutSeconds: -1 })).rejects.toMatchObject({ exitCode: 2 });
    await expect(writeStageSnapshot({ root, task: 'TUNE-0001', stage: 'qa', command: '/dr-qa', capturedBy: 'a', recommendedNext: '/x', body: 'b', env: { DR_SNAPSHOT_LOCK_TIMEOUT: 'soon' } })).rejects.toMatchObject({ exitCode: 2 });
    await expect(writeStageSnapshot({ root, task: 'TUNE-0001', stage: 'qa', command: '\ud800', capturedBy: 'a', recommendedNext: '/x', body: 'b' })).rejects.toMatchObject({ exitCode: 1 });
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('the kill switch in the given env makes it a no-op before any check', async () => {
    const r = await writeStageSnapshot({ env: { DATARIM_DISABLE_SNAPSHOT: '1' } } as unknown as WriteStageSnapshotOptions);
    expect(r).toEqual({ path: '', sizeBytes: 0, truncated: false, disabled: true });
    expect(fs.readdirSync(root)).toEqual([]);
  });
});
