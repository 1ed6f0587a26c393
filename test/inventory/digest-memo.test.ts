// The canonical memo (digest-memo.ts): a digest computed by copying unchanged runs of the last
// body's canonical text must be the digest of the new body, whatever the edits, and a memo that
// is damaged or of another body must never be used.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import canonicalizeOracle from 'canonicalize';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/jcs.js';
import { digestWithMemo } from '../../src/inventory/memo/digest-memo.js';
import { makeRepoSnapshot, scanTree } from '../../src/inventory/index.js';
import { scanForSnapshot, type Scanned } from '../../src/inventory/scan.js';
import type { RepoSnapshotEntry } from '../../src/inventory/types.js';
import { cleanupTempDirs, MARGIN, sleep, strip, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

const sum = (files: readonly RepoSnapshotEntry[]): number => files.reduce((n, f) => n + f.bytes, 0);
const oracle = (files: RepoSnapshotEntry[], truncated = false): string => `sha256:${sha256Hex(canonicalizeOracle({ files, truncated, counts: { files: files.length, bytes: sum(files) } })!)}`;

// Paths that could fool a boundary search: JSON punctuation, quotes, backslashes, non-ASCII.
const pathArb = fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), fc.constantFrom('a},{"b', '},{"bytes":1', 'q"\\', 'é/ü', 'z\u{1F600}', '\u2028'));
const entryArb: fc.Arbitrary<RepoSnapshotEntry> = fc.record(
  {
    path: pathArb,
    bytes: fc.nat({ max: 1_000_000 }),
    sha256: fc.stringMatching(/^[a-f0-9]{64}$/),
    mode: fc.constantFrom('0644' as const, '0755' as const),
    kind: fc.constantFrom('file' as const, 'symlink' as const),
  },
  { requiredKeys: ['path', 'bytes', 'mode', 'kind'] },
);

/** Edits of a body: each old entry kept, changed or dropped, new entries put in before any of them. */
const editsArb = fc.array(fc.record({ op: fc.constantFrom('keep', 'keep', 'keep', 'change', 'drop'), insert: fc.array(entryArb, { maxLength: 2 }), changed: entryArb }), { maxLength: 40 });

/** The new body and, for each of its entries, the old index it came from unchanged (-1: new or changed). */
function applyEdits(old: RepoSnapshotEntry[], edits: { op: string; insert: RepoSnapshotEntry[]; changed: RepoSnapshotEntry }[]): { files: RepoSnapshotEntry[]; oldIndex: Int32Array } {
  const files: RepoSnapshotEntry[] = [];
  const from: number[] = [];
  old.forEach((e, i) => {
    const edit = edits[i];
    for (const ins of edit?.insert ?? []) {
      files.push(ins);
      from.push(-1);
    }
    if (edit?.op === 'drop') return;
    if (edit?.op === 'change') {
      files.push(edit.changed);
      from.push(-1);
      return;
    }
    files.push(e);
    from.push(i);
  });
  return { files, oldIndex: Int32Array.from(from) };
}

describe('canonical memo', () => {
  it('a digest spliced from the last body equals the RFC 8785 digest of the new body, edit after edit', () => {
    const dir = tempDir('cairn-canon-');
    const memo = path.join(dir, 'x.canonical');
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 30 }), editsArb, editsArb, fc.boolean(), (first, edits1, edits2, truncated) => {
        fs.rmSync(memo, { force: true });
        const d0 = digestWithMemo(first, sum(first), truncated, memo);
        expect(d0).toBe(oracle(first, truncated));
        const second = applyEdits(first, edits1);
        const d1 = digestWithMemo(second.files, sum(second.files), truncated, memo, { digest: d0, oldIndex: second.oldIndex });
        expect(d1).toBe(oracle(second.files, truncated));
        // The memo the spliced run wrote serves the next splice.
        const third = applyEdits(second.files, edits2);
        const d2 = digestWithMemo(third.files, sum(third.files), truncated, memo, { digest: d1, oldIndex: third.oldIndex });
        expect(d2).toBe(oracle(third.files, truncated));
      }),
      { numRuns: 200 },
    );
  });

  it('unchanged entries are hashed from the memo, not serialised again: an entry marked in the memo (CRC made right) shows in the digest', () => {
    const dir = tempDir('cairn-canon-');
    const memo = path.join(dir, 'x.canonical');
    // Entry 3's path ends like an entry boundary (`},{`): the memo must still tell entries apart.
    const files: RepoSnapshotEntry[] = Array.from({ length: 50 }, (_, i) => ({ path: `f${String(i).padStart(3, '0')}${i === 3 ? '},{' : ''}`, bytes: i, sha256: 'b'.repeat(64), mode: '0644', kind: 'file' }));
    const d0 = digestWithMemo(files, sum(files), false, memo);
    const raw = fs.readFileSync(memo);
    const headEnd = raw.indexOf(10) + 1;
    const [tag, version, digest, , length] = raw.subarray(0, headEnd - 1).toString('latin1').split(' ');
    const rest = Buffer.from(raw.subarray(headEnd));
    const at = rest.indexOf('"path":"f005"');
    rest.write('X', at + '"path":"'.length, 'latin1'); // f005 -> X005, same length
    fs.writeFileSync(memo, Buffer.concat([Buffer.from(`${tag} ${version} ${digest} ${String(crc32(rest)).padStart(10, '0')} ${length}\n`, 'latin1'), rest]));
    const next = files.map((e, i) => (i === 30 ? { ...e, bytes: 3000 } : e));
    const oldIndex = Int32Array.from(next.map((_, i) => (i === 30 ? -1 : i)));
    const marked = next.map((e, i) => (i === 5 ? { ...e, path: 'X005' } : e));
    expect(digestWithMemo(next, sum(next), false, memo, { digest: d0, oldIndex })).toBe(oracle(marked));
  });

  it('a damaged memo is not used: a flipped byte in a run that would be copied changes nothing', () => {
    const dir = tempDir('cairn-canon-');
    const memo = path.join(dir, 'x.canonical');
    const files: RepoSnapshotEntry[] = Array.from({ length: 50 }, (_, i) => ({ path: `f${String(i).padStart(3, '0')}`, bytes: i, sha256: 'a'.repeat(64), mode: '0644', kind: 'file' }));
    const d0 = digestWithMemo(files, sum(files), false, memo);
    const buf = fs.readFileSync(memo);
    const at = buf.indexOf('"path":"f010"');
    expect(at).toBeGreaterThan(0);
    buf[at + 9] = '9'.charCodeAt(0); // f010 -> f090 in the memo's text only
    fs.writeFileSync(memo, buf);
    const next = [...files];
    next[40] = { ...files[40]!, bytes: 4000 };
    const oldIndex = Int32Array.from(next.map((_, i) => (i === 40 ? -1 : i)));
    expect(digestWithMemo(next, sum(next), false, memo, { digest: d0, oldIndex })).toBe(oracle(next));
  });

  it('a memo of another body is not used, even with as many entries', () => {
    const dir = tempDir('cairn-canon-');
    const memo = path.join(dir, 'x.canonical');
    const make = (tag: string): RepoSnapshotEntry[] => Array.from({ length: 20 }, (_, i) => ({ path: `${tag}${i}`, bytes: i, mode: '0644', kind: 'file' }));
    const a = make('a');
    const b = make('b');
    const da = digestWithMemo(a, sum(a), false, memo);
    digestWithMemo(b, sum(b), false, memo); // the memo now holds b's text
    const next = a.map((e, i) => (i === 3 ? { ...e, bytes: 99 } : e));
    const oldIndex = Int32Array.from(next.map((_, i) => (i === 3 ? -1 : i)));
    expect(digestWithMemo(next, sum(next), false, memo, { digest: da, oldIndex })).toBe(oracle(next));
  });

  it('a first scan, into a cache directory not made yet, leaves the canonical memo: the first change is spliced from it', async () => {
    const root = tempDir();
    const cacheDir = path.join(tempDir('cairn-cache-'), 'not', 'made', 'yet');
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) files[`d${i % 5}/f${String(i).padStart(3, '0')}.txt`] = `file ${i}\n`;
    writeTree(root, files);
    await sleep(MARGIN + 20);
    const opts = { cacheDir, racyMarginMs: MARGIN };
    const digestOf = ({ result: r, body }: Scanned): string => makeRepoSnapshot({ files: r.files, truncated: r.truncated, counts: r.counts }, body).snapshotDigest;
    await scanTree(root, opts);
    const memo = path.join(cacheDir, fs.readdirSync(cacheDir).find((n) => n.endsWith('.canonical'))!);
    expect(fs.statSync(cacheDir).mode & 0o777).toBe(0o700);
    // Mark an entry the next scan will not read again (the CRC made right): a spliced digest shows it.
    const raw = fs.readFileSync(memo);
    const headEnd = raw.indexOf(10) + 1;
    const [tag, version, digest, , length] = raw.subarray(0, headEnd - 1).toString('latin1').split(' ');
    const rest = Buffer.from(raw.subarray(headEnd));
    rest.write('X', rest.indexOf('"path":"d1/f101.txt"') + '"path":"'.length, 'latin1');
    fs.writeFileSync(memo, Buffer.concat([Buffer.from(`${tag} ${version} ${digest} ${String(crc32(rest)).padStart(10, '0')} ${length}\n`, 'latin1'), rest]));
    fs.writeFileSync(path.join(root, 'd3/f003.txt'), 'edited\n');
    const edited = await scanForSnapshot(root, opts);
    const truth = await scanTree(root, { cache: false });
    expect(strip(edited.result)).toEqual(strip(truth));
    const marked = truth.files.map((f) => (f.path === 'd1/f101.txt' ? { ...f, path: 'X1/f101.txt' } : f));
    expect(digestOf(edited)).toBe(oracle(marked));
  });

  it('a file read again only because it was written just before the last scan (racy) changes no digest: the stored one stands, the memo is not renewed', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`d${i % 9}/f${i}.txt`] = `file ${i}\n`;
    writeTree(root, files);
    await sleep(MARGIN + 20);
    const opts = { cacheDir, racyMarginMs: MARGIN };
    const digestOf = ({ result: r, body }: Scanned): string => makeRepoSnapshot({ files: r.files, truncated: r.truncated, counts: r.counts }, body).snapshotDigest;
    await scanTree(root, opts);
    await scanTree(root, opts); // the whole result stored, with its digest and canonical memo
    fs.writeFileSync(path.join(root, 'd1/f10.txt'), 'edited just now\n');
    const edited = await scanForSnapshot(root, opts); // read, and racy: it will be read again next time
    const memo = path.join(cacheDir, fs.readdirSync(cacheDir).find((n) => n.endsWith('.canonical'))!);
    // The memo, or the patch beside it (memo-patch.ts), is what a renewal replaces.
    const state = (): string => [memo, `${memo}.patch`].map((f) => fs.statSync(f, { throwIfNoEntry: false })?.ino ?? '-').join();
    const before = state();
    await sleep(MARGIN + 20);
    const again = await scanForSnapshot(root, opts);
    expect(strip(again.result)).toEqual(strip(edited.result));
    expect(digestOf(again)).toBe(digestOf(edited));
    expect(state()).toBe(before); // no entry changed: nothing was digested again
    // Read again and changed after all: a new digest, the memo renewed.
    fs.writeFileSync(path.join(root, 'd1/f10.txt'), 'edited once more\n');
    await sleep(MARGIN + 20);
    const changed = await scanForSnapshot(root, opts);
    expect(changed.result.files.find((f) => f.path === 'd1/f10.txt')!.bytes).toBe('edited once more\n'.length);
    expect(digestOf(changed)).not.toBe(digestOf(edited));
    expect(state()).not.toBe(before);
  });
});
