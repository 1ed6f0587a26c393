/**
 * How alike two files are, as git's rename detection measures it (diffcore-delta.c): both files
 * are cut into chunks that end at a newline or after 64 bytes (a CR before the newline is
 * dropped), and the score is the bytes of chunks the two have in common over the bigger size.
 * Scores are out of MAX_SCORE; git pairs a deleted and an added file as a rename at 50 % or more.
 */

export const MAX_SCORE = 60000;
export const DEFAULT_RENAME_SCORE = 30000;

/** Chunk → bytes it accounts for, summed over the file. */
export type Spans = Map<string, number>;

export function spans(bytes: Buffer, isText: boolean): Spans {
  const out: Spans = new Map();
  const chunk = Buffer.alloc(64);
  let n = 0;
  const flush = (): void => {
    const key = chunk.toString('latin1', 0, n);
    out.set(key, (out.get(key) ?? 0) + n);
    n = 0;
  };
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    // git ignores the CR of a CRLF in text, so a line-ending change still counts as similar
    if (isText && c === 13 && bytes[i + 1] === 10) continue;
    chunk[n++] = c;
    if (c === 10 || n >= 64) flush();
  }
  if (n > 0) flush();
  return out;
}

/**
 * Git's estimate_similarity: 0 when the sizes alone rule out `minScore`, else copied bytes ×
 * MAX_SCORE / the bigger size. Empty files are never renames (git skips them too).
 */
export function similarity(a: { bytes: Buffer; spans: () => Spans }, b: { bytes: Buffer; spans: () => Spans }, minScore = DEFAULT_RENAME_SCORE): number {
  const srcSize = a.bytes.length;
  const dstSize = b.bytes.length;
  const maxSize = Math.max(srcSize, dstSize);
  const minSize = Math.min(srcSize, dstSize);
  if (maxSize === 0) return 0;
  if (maxSize * (MAX_SCORE - minScore) > minSize * MAX_SCORE) return 0;
  const src = a.spans();
  const dst = b.spans();
  let copied = 0;
  for (const [key, count] of src) {
    const other = dst.get(key);
    if (other !== undefined) copied += Math.min(count, other);
  }
  return Math.floor((copied * MAX_SCORE) / maxSize);
}

/** The percentage git prints after `R` and in `similarity index N%`. */
export function scorePercent(score: number): number {
  return Math.floor((score * 100) / MAX_SCORE);
}
