import { parse } from 'yaml';
import { TRUNCATION_MARKER, UPSTREAM_TRUNCATION_MARKER } from './constants.js';

export interface ParsedStageSnapshot {
  /** The YAML between the `---` lines. */
  frontmatterText: string;
  /** The frontmatter as parsed (YAML 1.2 core schema, duplicate keys rejected). */
  frontmatter: Record<string, unknown>;
  /** Everything after the blank line that follows the closing `---`. */
  body: Buffer;
}

export type ParseOutcome = { ok: true; note: ParsedStageSnapshot } | { ok: false; problem: string };

const OPEN = Buffer.from('---\n');
const CLOSE = Buffer.from('\n---\n');

/** Splits a note into frontmatter and body and parses the YAML; never throws. */
export function parseStageSnapshot(bytes: Buffer): ParseOutcome {
  if (!bytes.subarray(0, OPEN.length).equals(OPEN)) return { ok: false, problem: 'the file does not start with a `---` frontmatter line' };
  // Searching from the newline of the opening line also finds an empty frontmatter.
  const end = bytes.indexOf(CLOSE, OPEN.length - 1);
  if (end < 0) return { ok: false, problem: 'the frontmatter has no closing `---` line' };
  const frontmatterText = bytes.subarray(OPEN.length, end + 1).toString('utf8');
  let bodyStart = end + CLOSE.length;
  if (bytes[bodyStart] === 0x0a) bodyStart++;
  let frontmatter: unknown;
  try {
    frontmatter = parse(frontmatterText, { version: '1.2', schema: 'core', uniqueKeys: true });
  } catch (e) {
    return { ok: false, problem: `the frontmatter is not valid YAML: ${(e as Error).message.split('\n')[0]}` };
  }
  if (frontmatter === null || typeof frontmatter !== 'object' || Array.isArray(frontmatter)) {
    return { ok: false, problem: 'the frontmatter is empty or not a mapping of fields' };
  }
  return { ok: true, note: { frontmatterText, frontmatter: frontmatter as Record<string, unknown>, body: bytes.subarray(bodyStart) } };
}

/** True when the body ends with the truncation marker block (cairn's text, or the upstream writer's). */
export function endsWithTruncationMarker(body: Buffer): boolean {
  return [TRUNCATION_MARKER, UPSTREAM_TRUNCATION_MARKER].some((marker) => {
    const block = Buffer.from(`\n${marker}\n`, 'utf8');
    return body.length >= block.length && body.subarray(body.length - block.length).equals(block);
  });
}
