import { createHash } from 'node:crypto';
import { CANONICAL_MEMO_TAG } from '../cache/artefacts.js';
import { canonicalEntries, canonicalHead, canonicalTail, computeDigestOf, PIECE_ENTRIES, type RenderBasis } from '../digest.js';
import { chunks, openMemoWriter, readTextMemo, serialiseGaps, splicePlan, type EntryText, type Part } from './text-memo.js';
import type { RepoSnapshotEntry } from '../types.js';

/**
 * The digest of a body, kept with a canonical memo: the canonical text of the body's entries
 * (the bytes the digest hashes, ~130 bytes an entry) as a text memo beside the stat cache. When
 * the scan says how the body came from the memo's (a RenderBasis), every run of entries that
 * came through unchanged is hashed from the memo's bytes and only the rest is serialised: after
 * an agent step that touched a handful of files, the digest of a 76k-entry body costs reading
 * and hashing ~10 MB instead of serialising 76k entries (~60 ms). Entries are serialised
 * `pieceEntries` at a time (PIECE_ENTRIES unless the scan's tuning says otherwise).
 */
/**
 * Where every entry of a serialised run but the first begins, two bytes in: each entry's first
 * key is "bytes", and a `"` stands unescaped inside a JSON string only as its closing quote,
 * so `},{"bytes":` occurs only between two entries (`},{"` alone also ends a path like `a},{`).
 */
const BOUNDARY = Buffer.from('},{"bytes":', 'latin1');
/** Between two entries of the canonical text. */
const COMMA = Buffer.from(',', 'latin1');

/**
 * sha256 digest of the body `{ files, truncated, counts: { files: files.length, bytes } }`, reusing and
 * renewing the canonical memo at `memoFile`. `memoBytes`: that file's bytes, when already read.
 */
export function digestWithMemo(files: readonly RepoSnapshotEntry[], bytes: number, truncated: boolean, memoFile: string, basis?: RenderBasis, memoBytes?: Buffer | null, pieceEntries = PIECE_ENTRIES): string {
  const n = files.length;
  const old = basis === undefined || basis.oldIndex.length !== n ? null : readTextMemo(memoFile, CANONICAL_MEMO_TAG, [basis.digest], memoBytes);
  const plan = old !== null && old.starts !== null ? splicePlan(basis!.oldIndex, { text: old.text, starts: old.starts, patch: old.patch }, COMMA.length, pieceEntries) : chunks(0, n, pieceEntries);
  const writer = openMemoWriter(memoFile, CANONICAL_MEMO_TAG, old, plan, COMMA);
  if (writer === null && old === null) return computeDigestOf(files, bytes, truncated, pieceEntries);
  try {
    const h = createHash('sha256');
    h.update(canonicalHead({ files: n, bytes }));
    const text: EntryText<RepoSnapshotEntry> = { entries: files, serialise: (list) => canonicalEntries(list, 0, list.length), boundary: BOUNDARY, skip: 2, separator: COMMA.length, chunk: pieceEntries };
    for (let i = 0; i < plan.length; i++) {
      const seg = plan[i]!;
      const count = seg.to - seg.from;
      const serialised = seg.bytes === undefined;
      if (serialised) serialiseGaps(plan, i, text);
      const part: Part = { bytes: seg.bytes!, first: seg.from, count, starts: seg.starts ?? null, base: seg.base };
      if (serialised) plan[i] = { from: seg.from, to: seg.to }; // let go once hashed and written
      if (seg.from > 0) {
        h.update(COMMA);
        writer?.put({ bytes: COMMA });
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
