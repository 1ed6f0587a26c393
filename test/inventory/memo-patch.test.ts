// Memo patches (memo-patch.ts): after a step that changed a few entries the memo is kept as its
// base plus a patch; whatever the chain of steps (edits, entries added and removed, edits undone,
// the patch outgrowing its share and the base written again), every digest spliced through base
// and patch must be the digest of the body, and a damaged or mismatched patch must never be used.
import * as fs from 'node:fs';
import * as path from 'node:path';
import canonicalizeOracle from 'canonicalize';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/jcs.js';
import { digestWithMemo } from '../../src/inventory/memo/digest-memo.js';
import { CANONICAL_MEMO_TAG, patchPath, RENDER_MEMO_TAG } from '../../src/inventory/cache/artefacts.js';
import { parseMemoPatch, PATCH_SHARE } from '../../src/inventory/memo/memo-patch.js';
import type { RepoSnapshotEntry } from '../../src/inventory/types.js';
import { cleanupTempDirs, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

const sum = (files: readonly RepoSnapshotEntry[]): number => files.reduce((n, f) => n + f.bytes, 0);
const oracle = (files: RepoSnapshotEntry[]): string => `sha256:${sha256Hex(canonicalizeOracle({ files, truncated: false, counts: { files: files.length, bytes: sum(files) } })!)}`;

const N = 256;
const entry = (i: number, version = 0): RepoSnapshotEntry => ({ path: `d${i % 7}/f${String(i).padStart(4, '0')}${i % 11 === 0 ? '},{"q' : ''}`, bytes: i * 10 + version, sha256: (version % 16).toString(16).repeat(64), mode: '0644', kind: 'file' });

/** One step: entries edited (a new version), edited back to an earlier body's, added or removed. */
type Step = { edit: number[]; undo: boolean; add: number[]; drop: number[] };
const stepArb: fc.Arbitrary<Step> = fc.record({
  edit: fc.array(fc.nat({ max: N - 1 }), { maxLength: 6 }),
  undo: fc.boolean(),
  add: fc.array(fc.integer({ min: N, max: N + 40 }), { maxLength: 3 }),
  drop: fc.array(fc.nat({ max: N - 1 }), { maxLength: 2 }),
});

interface Body {
  files: RepoSnapshotEntry[];
  /** Entry keys (stable ids) in order, and each one's version. */
  keys: number[];
  versions: Map<number, number>;
}

function bodyOf(keys: number[], versions: Map<number, number>): Body {
  const sorted = [...keys].sort((a, b) => (entry(a).path < entry(b).path ? -1 : 1));
  return { files: sorted.map((k) => entry(k, versions.get(k) ?? 0)), keys: sorted, versions };
}

/** For each entry of `next`, its index in `prev` when it came through unchanged, else -1. */
function oldIndexOf(prev: Body, next: Body): Int32Array {
  const at = new Map(prev.keys.map((k, i) => [k, i]));
  return Int32Array.from(next.keys.map((k) => {
    const i = at.get(k);
    return i !== undefined && (prev.versions.get(k) ?? 0) === (next.versions.get(k) ?? 0) ? i : -1;
  }));
}

/** A memo of N entries written whole, and their digest. */
function firstMemo(): { memo: string; files: RepoSnapshotEntry[]; d0: string } {
  const memo = path.join(tempDir('cairn-patch-'), 'x.canonical');
  const files = Array.from({ length: N }, (_, i) => entry(i));
  return { memo, files, d0: digestWithMemo(files, sum(files), false, memo) };
}

/** `files` with the entries at `at` in another version, and the old index of each entry (-1: edited). */
function edit(files: RepoSnapshotEntry[], at: number[], version: number): { files: RepoSnapshotEntry[]; oldIndex: Int32Array } {
  return { files: files.map((e, i) => (at.includes(i) ? entry(i, version) : e)), oldIndex: Int32Array.from(files.map((_, i) => (at.includes(i) ? -1 : i))) };
}

describe('memo patches', () => {
  it('every digest spliced through a base and its patch is the digest of the body, step after step', () => {
    const dir = tempDir('cairn-patch-');
    let round = 0;
    let patched = 0;
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 12 }), (steps) => {
        const memo = path.join(dir, `m${round++}.canonical`);
        let body = bodyOf(Array.from({ length: N }, (_, i) => i), new Map());
        let digest = digestWithMemo(body.files, sum(body.files), false, memo);
        expect(digest).toBe(oracle(body.files));
        const history: Body[] = [body];
        for (const step of steps) {
          let keys = body.keys.filter((k) => !step.drop.includes(k));
          for (const k of step.add) if (!keys.includes(k)) keys = [...keys, k];
          const versions = new Map(body.versions);
          if (step.undo && history.length > 1) {
            // Edits undone: entries back to an earlier body's bytes (a patch heals to its base).
            const earlier = history[Math.max(0, history.length - 3)]!;
            for (const k of keys) versions.set(k, earlier.versions.get(k) ?? 0);
          }
          for (const k of step.edit) versions.set(k, (versions.get(k) ?? 0) + 1);
          const next = bodyOf(keys, versions);
          digest = digestWithMemo(next.files, sum(next.files), false, memo, { digest, oldIndex: oldIndexOf(body, next) });
          expect(digest).toBe(oracle(next.files));
          if (fs.existsSync(patchPath(memo))) patched++;
          body = next;
          history.push(next);
        }
      }),
      { numRuns: 60 },
    );
    expect(patched).toBeGreaterThan(0); // the patch path was taken
  });

  it('a patch beyond its share is not written: the base is written anew and the old patch goes', () => {
    const { memo, files, d0 } = firstMemo();
    const { files: few, oldIndex } = edit(files, [5], 1);
    const d1 = digestWithMemo(few, sum(few), false, memo, { digest: d0, oldIndex });
    expect(fs.existsSync(patchPath(memo))).toBe(true);
    const baseBefore = fs.readFileSync(memo);
    const many = Math.ceil(N * PATCH_SHARE) + 1;
    const lots = few.map((e, i) => (i < many ? entry(i, 2) : e));
    const d2 = digestWithMemo(lots, sum(lots), false, memo, { digest: d1, oldIndex: Int32Array.from(lots.map((_, i) => (i < many ? -1 : i))) });
    expect(d2).toBe(oracle(lots));
    expect(fs.existsSync(patchPath(memo))).toBe(false);
    expect(fs.readFileSync(memo).equals(baseBefore)).toBe(false);
  });

  it('an entry edited back to its base bytes leaves the patch (healed), and the digest stays exact', () => {
    const { memo, files, d0 } = firstMemo();
    const { files: edited, oldIndex } = edit(files, [9, 200], 1);
    const d1 = digestWithMemo(edited, sum(edited), false, memo, { digest: d0, oldIndex });
    expect(parseMemoPatch(fs.readFileSync(patchPath(memo)), CANONICAL_MEMO_TAG)!.text.length).toBeGreaterThan(0);
    const d2 = digestWithMemo(files, sum(files), false, memo, { digest: d1, oldIndex });
    expect(d2).toBe(d0);
    const healed = parseMemoPatch(fs.readFileSync(patchPath(memo)), CANONICAL_MEMO_TAG)!;
    expect(healed.text.length).toBe(0);
    expect([...healed.from]).toEqual(files.map((_, i) => i));
  });

  it('a damaged patch, or one whose base was written anew, is never used', () => {
    const { memo, files, d0 } = firstMemo();
    const { files: edited, oldIndex } = edit(files, [40], 1);
    const d1 = digestWithMemo(edited, sum(edited), false, memo, { digest: d0, oldIndex });
    const good = fs.readFileSync(patchPath(memo));
    expect(parseMemoPatch(good, CANONICAL_MEMO_TAG)?.digest).toBe(d1);
    expect(parseMemoPatch(good, RENDER_MEMO_TAG)).toBeNull(); // another memo's tag
    for (const at of [10, good.length - 3, good.length - 1]) {
      const bad = Buffer.from(good);
      bad[at] = bad[at]! ^ 0x01;
      expect(parseMemoPatch(bad, CANONICAL_MEMO_TAG)).toBeNull();
    }
    expect(parseMemoPatch(good.subarray(0, good.length - 8), CANONICAL_MEMO_TAG)).toBeNull();
    // Damaged on disk: the next digest is still exact (the patch ignored, the body serialised).
    const bad = Buffer.from(good);
    bad[bad.length - 2] = bad[bad.length - 2]! ^ 0x01;
    fs.writeFileSync(patchPath(memo), bad);
    const { files: again, oldIndex: oldAgain } = edit(edited, [41], 1);
    expect(digestWithMemo(again, sum(again), false, memo, { digest: d1, oldIndex: oldAgain })).toBe(oracle(again));
    // A good patch over a base written anew since (another body): ignored too.
    fs.writeFileSync(patchPath(memo), good);
    const other = files.map((e) => ({ ...e, mode: '0755' as const }));
    digestWithMemo(other, sum(other), false, memo);
    fs.writeFileSync(patchPath(memo), good);
    expect(digestWithMemo(again, sum(again), false, memo, { digest: d1, oldIndex: oldAgain })).toBe(oracle(again));
  });
});
