import { CairnError } from '../core/errors.js';
import { ARTIFACT_NAME, SCHEMA_VERSION, STAGE_SNAPSHOT_MAX_BYTES, TRUNCATION_MARKER } from './constants.js';
import { utf8CutPoint } from './utf8-cut.js';
import { doubleQuoted, yamlString } from './yaml-scalar.js';

/** The frontmatter values of one note, already validated. */
export interface StageSnapshotFields {
  task: string;
  stage: string;
  command: string;
  capturedAt: string;
  capturedBy: string;
  recommendedNext: string;
  options: readonly string[];
}

export interface RenderedStageSnapshot {
  bytes: Buffer;
  sizeBytes: number;
  truncated: boolean;
}

const MARKER_BLOCK = Buffer.from(`\n${TRUNCATION_MARKER}\n`, 'utf8');

/** Everything of the frontmatter up to (not including) `size_bytes`, which depends on the total. */
function renderHead(f: StageSnapshotFields): Buffer {
  const lines = [
    '---',
    `task_id: ${yamlString(f.task, 'task_id')}`,
    `artifact: ${ARTIFACT_NAME}`,
    `schema_version: ${SCHEMA_VERSION}`,
    `stage: ${yamlString(f.stage, 'stage')}`,
    `command: ${yamlString(f.command, 'command')}`,
    `captured_at: ${yamlString(f.capturedAt, 'captured_at')}`,
    `captured_by: ${yamlString(f.capturedBy, 'captured_by')}`,
    `recommended_next: ${yamlString(f.recommendedNext, 'recommended_next')}`,
  ];
  if (f.options.length === 0) {
    // An empty list, not `options:` alone (which a YAML parser reads as null).
    lines.push('options: []');
  } else {
    lines.push('options:');
    for (const option of f.options) {
      yamlString(option, 'option'); // rejects unpaired surrogates
      // Always quoted, as in the seed's example: `/dr-x | purpose: "y"` is ambiguous unquoted.
      lines.push(`  - ${doubleQuoted(option)}`);
    }
  }
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}

/** The closing lines; the blank line after `---` keeps the body from gluing onto it. */
function renderTail(sizeBytes: number, truncated: boolean): Buffer {
  return Buffer.from(`size_bytes: ${sizeBytes}\ntruncated: ${truncated}\n---\n\n`, 'utf8');
}

/**
 * Solves `size_bytes` as a fixed point: the declared number is part of the file it measures,
 * so a change in its decimal width (999 → 1000) changes the size. Converges in two or three
 * rounds because the size only grows with the width.
 */
function solveSize(fixedBytes: (n: number) => number, start: number): number {
  let n = start;
  for (let round = 0; round < 8; round++) {
    const size = fixedBytes(n);
    if (size === n) return n;
    n = size;
  }
  throw new CairnError('ERR_INTERNAL', 'size_bytes did not converge; this is a bug in cairn, please report it', { exitCode: 1 });
}

function capError(size: number): CairnError {
  return new CairnError(
    'ERR_CAP_EXCEEDED',
    `rendered snapshot is ${size} bytes; exceeds ${STAGE_SNAPSHOT_MAX_BYTES}-byte cap (the frontmatter alone is too large: shorten the options or values)`,
    { exitCode: 1, details: { sizeBytes: size, capBytes: STAGE_SNAPSHOT_MAX_BYTES } },
  );
}

/**
 * Renders the whole note. The body is copied byte for byte when the whole file fits in the
 * cap; otherwise it is cut at a UTF-8 character boundary so that the file, marker included,
 * is as close to the cap as that boundary allows.
 */
export function renderStageSnapshot(fields: StageSnapshotFields, body: Uint8Array): RenderedStageSnapshot {
  const head = renderHead(fields);
  const cap = STAGE_SNAPSHOT_MAX_BYTES;

  const wholeSize = solveSize((n) => head.length + renderTail(n, false).length + body.length, body.length);
  if (wholeSize <= cap) {
    return { bytes: Buffer.concat([head, renderTail(wholeSize, false), body]), sizeBytes: wholeSize, truncated: false };
  }

  // Budget the body for a file of exactly `cap` bytes, then solve the size of what the cut left.
  const fixedAtCap = head.length + renderTail(cap, true).length + MARKER_BLOCK.length;
  const budget = cap - fixedAtCap;
  if (budget < 0) {
    const smallest = solveSize((n) => head.length + renderTail(n, true).length + MARKER_BLOCK.length, fixedAtCap);
    throw capError(Math.min(smallest, wholeSize));
  }
  const kept = body.subarray(0, utf8CutPoint(body, budget));
  const size = solveSize((n) => head.length + renderTail(n, true).length + kept.length + MARKER_BLOCK.length, cap);
  if (size > cap) throw capError(size); // cannot happen: the cut only removes bytes
  return { bytes: Buffer.concat([head, renderTail(size, true), kept, MARKER_BLOCK]), sizeBytes: size, truncated: true };
}
