import { createHash } from 'node:crypto';
import { canonicalEntries, canonicalHead, canonicalTail, computeDigestOf, type RenderBasis } from './digest.js';
import { chunks, entryStarts, readTextMemo, splicePlan, TextMemoWriter, type Part } from './text-memo.js';
import type { RepoSnapshotEntry } from './types.js';

/**
 * The digest of a body, kept with a canonical memo: the canonical text of the body's entries
 * (the bytes the digest hashes, ~130 bytes an entry) as a text memo beside the stat cache. When
 * the scan says how the body came from the memo's (a RenderBasis), every run of entries that
 * came through unchanged is hashed from the memo's bytes and only the rest is serialised: after
 * an agent step that touched a handful of files, the digest of a 76k-entry body costs reading
 * and hashing ~10 MB instead of serialising 76k entries (~60 ms).
 */
const MEMO_TAG = 'cairn-canonical 1';
const CHUNK = 4096;
/**
 * Where every entry of a serialised run but the first begins, two bytes in: each entry's first
 * key is "bytes", and a `"` stands unescaped inside a JSON string only as its closing quote,
 * so `},{"bytes":` occurs only between two entries (`},{"` alone also ends a path like `a},{`).
 */
const BOUNDARY = Buffer.from('},{"bytes":', 'latin1');

/**
 * sha256 digest of the body `{ files, truncated, counts: { files: files.length, bytes } }`, reusing and
 * renewing the canonical memo at `memoFile`. `memoBytes`: that file's bytes, when already read.
 */
export function digestWithMemo(files: readonly RepoSnapshotEntry[], bytes: number, truncated: boolean, memoFile: string, basis?: RenderBasis, memoBytes?: Buffer | null): string {
  const n = files.length;
  const old = basis === undefined || basis.oldIndex.length !== n ? null : readTextMemo(memoFile, MEMO_TAG, [basis.digest], memoBytes);
  const plan = old !== null && old.starts !== null ? splicePlan(basis!.oldIndex, { text: old.text, starts: old.starts }, 1, CHUNK) : chunks(0, n, CHUNK);
  const writer = TextMemoWriter.open(memoFile, MEMO_TAG);
  if (writer === null && old === null) return computeDigestOf(files, bytes, truncated);
  try {
    const h = createHash('sha256');
    h.update(canonicalHead({ files: n, bytes }));
    const comma = Buffer.from(',', 'latin1');
    for (const seg of plan) {
      const count = seg.to - seg.from;
      let part: Part;
      if (seg.bytes !== undefined) part = { bytes: seg.bytes, first: seg.from, count, starts: seg.starts ?? null };
      else {
        const text = canonicalEntries(files, seg.from, seg.to);
        part = { bytes: text, first: seg.from, count, starts: entryStarts(text, count, BOUNDARY, 2) };
      }
      if (seg.from > 0) {
        h.update(comma);
        writer?.put({ bytes: comma });
      }
      h.update(part.bytes);
      writer?.put(part);
    }
    h.update(canonicalTail(truncated));
    const digest = `sha256:${h.digest('hex')}`;
    writer?.commit(digest);
    return digest;
  } finally {
    writer?.abort();
  }
}
