/**
 * Lines added and deleted between two texts, as `git diff --numstat` counts them (a changed line
 * is one deletion plus one addition): Myers' O((N+M)·D) shortest edit script over line ids, after
 * the common head and tail are cut. Binary content (a NUL in the first 8000 bytes, as git
 * decides) has no line counts.
 */
export function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8000);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

function splitLines(bytes: Uint8Array): string[] {
  if (bytes.length === 0) return [];
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Edit distance budget: past it the counts are an upper bound (all of both middles). */
const MAX_D = 20_000;

export function lineCounts(before: Uint8Array | null, after: Uint8Array | null): { additions: number; deletions: number } | null {
  if ((before !== null && isBinary(before)) || (after !== null && isBinary(after))) return null;
  const a = before === null ? [] : splitLines(before);
  const b = after === null ? [] : splitLines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ids = new Map<string, number>();
  const id = (s: string): number => {
    let v = ids.get(s);
    if (v === undefined) ids.set(s, (v = ids.size));
    return v;
  };
  const x = Int32Array.from(a.slice(start, endA), id);
  const y = Int32Array.from(b.slice(start, endB), id);
  const d = editDistance(x, y);
  // d = deletions + additions, and additions - deletions = |y| - |x|
  const deletions = (d + x.length - y.length) / 2;
  return { additions: d - deletions, deletions };
}

function editDistance(x: Int32Array, y: Int32Array): number {
  const n = x.length;
  const m = y.length;
  if (n === 0 || m === 0) return n + m;
  const max = Math.min(n + m, MAX_D);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      let i = k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number)) ? (v[offset + k + 1] as number) : (v[offset + k - 1] as number) + 1;
      let j = i - k;
      while (i < n && j < m && x[i] === y[j]) {
        i++;
        j++;
      }
      v[offset + k] = i;
      if (i >= n && j >= m) return d;
    }
  }
  return n + m;
}
