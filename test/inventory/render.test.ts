// renderRepoSnapshot / writeRepoSnapshot: always exactly JSON.stringify(doc, null, 2) + '\n', also
// when written in pieces; the render memo beside the stat cache is reused only for the same digest
// and an intact memo.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/jcs.js';
import { makeRepoSnapshot, scanTree, snapshotDigestOf } from '../../src/inventory/index.js';
import { renderRepoSnapshot, writeRepoSnapshot } from '../../src/inventory/render.js';
import type { RepoSnapshot } from '../../src/inventory/types.js';
import { cleanupTempDirs, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MARGIN = 50;
const expected = (doc: RepoSnapshot) => Buffer.from(`${JSON.stringify(doc, null, 2)}\n`, 'utf8');

async function setup(files: Record<string, string>) {
  const root = tempDir();
  const cacheDir = tempDir('cairn-cache-');
  writeTree(root, files);
  await sleep(MARGIN + 20);
  const snap = async () => {
    const r = await scanTree(root, { cacheDir, racyMarginMs: MARGIN });
    return makeRepoSnapshot({ files: r.files, truncated: r.truncated, counts: r.counts });
  };
  await snap(); // records every stat
  const memo = () => {
    const f = fs.readdirSync(cacheDir).find((n) => n.endsWith('.render'));
    return f === undefined ? undefined : path.join(cacheDir, f);
  };
  return { root, cacheDir, snap, memo };
}

describe('renderRepoSnapshot', () => {
  it('renders the pretty JSON exactly, ASCII and non-ASCII paths alike, and keeps a memo beside the stat cache', async () => {
    const t = await setup({ 'a.txt': 'a', 'é/ü.txt': 'u', 'z/😀.md': 'smile', 'q"uote': 'q' });
    const doc = await t.snap();
    expect(renderRepoSnapshot(doc).equals(expected(doc))).toBe(true);
    expect(t.memo()).toBeDefined();
  });

  it('reuses the memo for an unchanged tree without rewriting it', async () => {
    const t = await setup({ a: 'a', 'b/c': 'c' });
    renderRepoSnapshot(await t.snap());
    const before = fs.statSync(t.memo()!);
    const doc = await t.snap();
    expect(renderRepoSnapshot(doc).equals(expected(doc))).toBe(true);
    const after = fs.statSync(t.memo()!);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('renders again after a change: the memo of another digest is never used', async () => {
    const t = await setup({ a: 'a', 'b/c': 'c' });
    renderRepoSnapshot(await t.snap());
    fs.writeFileSync(path.join(t.root, 'b', 'c'), 'changed');
    const doc = await t.snap();
    const out = renderRepoSnapshot(doc);
    expect(out.equals(expected(doc))).toBe(true);
    expect(out.toString()).toContain(doc.snapshotDigest);
  });

  it.each([
    ['a flipped byte', (b: Buffer) => Buffer.from(b.map((x, i) => (i === b.length - 10 ? x ^ 0x01 : x)))],
    ['truncation', (b: Buffer) => b.subarray(0, b.length >> 1)],
    ['garbage', () => Buffer.from('not a memo')],
  ])('ignores a memo damaged by %s and renders the document exactly', async (_label, damage) => {
    const t = await setup({ a: 'a', 'b/c': 'c', d: 'dddd' });
    renderRepoSnapshot(await t.snap());
    const file = t.memo()!;
    fs.writeFileSync(file, damage(fs.readFileSync(file)));
    const doc = await t.snap();
    expect(renderRepoSnapshot(doc).equals(expected(doc))).toBe(true);
  });

  it('does not use the memo for a document the caller changed or built', async () => {
    const t = await setup({ a: 'a', 'b/c': 'c' });
    const doc = await t.snap();
    renderRepoSnapshot(doc);
    const reordered = { ...doc, body: { counts: doc.body.counts, files: doc.body.files, truncated: doc.body.truncated } } as RepoSnapshot;
    expect(renderRepoSnapshot(reordered).equals(expected(reordered))).toBe(true);
    const relabelled = { ...doc, snapshotDigest: `sha256:${'0'.repeat(64)}` };
    expect(renderRepoSnapshot(relabelled).equals(expected(relabelled))).toBe(true);
    const extra = { ...doc, note: 'mine' } as RepoSnapshot;
    expect(renderRepoSnapshot(extra).equals(expected(extra))).toBe(true);
  });
});

describe('writeRepoSnapshot (in pieces)', () => {
  async function bigTree(n: number) {
    const files: Record<string, string> = {};
    for (let i = 0; i < n; i++) files[`d${i % 37}/${i % 500 === 0 ? `é-${i}` : `f${i}`}.txt`] = `${i}`;
    return setup(files);
  }

  it('writes exactly the pretty JSON to a file and to a stream, across piece boundaries and non-ASCII names', async () => {
    const t = await bigTree(9000); // more than two pieces of 4096 entries
    const doc = await t.snap();
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    const chunks: Buffer[] = [];
    const out = new PassThrough();
    out.on('data', (c: Buffer) => chunks.push(c));
    await writeRepoSnapshot(doc, { out });
    expect(Buffer.concat(chunks).equals(expected(doc))).toBe(true);
  });

  it('writes the memo as it goes and reuses it next time', async () => {
    const t = await bigTree(5000);
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(await t.snap(), { file });
    const memo = fs.statSync(t.memo()!);
    const doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    expect(fs.statSync(t.memo()!).ino).toBe(memo.ino);
  });

  it('leaves an output file that already holds exactly the text as it is, and rewrites one that differs in any way', async () => {
    const t = await setup({ a: 'a', 'b/c': 'c' });
    const dir = tempDir('cairn-out-');
    const file = path.join(dir, 'snap.json');
    await writeRepoSnapshot(await t.snap(), { file });
    const doc = await t.snap(); // the memo applies from here on
    const text = expected(doc);
    const first = fs.statSync(file, { bigint: true });
    await writeRepoSnapshot(doc, { file });
    const again = fs.statSync(file, { bigint: true });
    expect([again.ino, again.mtimeNs]).toEqual([first.ino, first.mtimeNs]);
    const damaged: [string, () => void][] = [
      ['one byte changed', () => fs.writeFileSync(file, Buffer.from(text).fill(0x20, 5, 6))],
      ['longer', () => fs.writeFileSync(file, Buffer.concat([text, Buffer.from(' ')]))],
      ['shorter', () => fs.writeFileSync(file, text.subarray(0, text.length - 1))],
      ['empty', () => fs.writeFileSync(file, '')],
      ['a link to a file holding the text', () => {
        fs.writeFileSync(path.join(dir, 'elsewhere'), text);
        fs.rmSync(file);
        fs.symlinkSync('elsewhere', file);
      }],
    ];
    for (const [what, damage] of damaged) {
      damage();
      await writeRepoSnapshot(doc, { file });
      expect(fs.lstatSync(file).isFile(), what).toBe(true);
      expect(fs.readFileSync(file).equals(text), what).toBe(true);
    }
  });

  it('still writes the output when the memo cannot be written', async () => {
    const t = await setup({ a: 'a', 'b/c': 'c' });
    const doc = await t.snap();
    const blocked = path.join(t.cacheDir, fs.readdirSync(t.cacheDir).find((n) => n.endsWith('.cache'))!.replace(/\.cache$/, '.render'));
    fs.mkdirSync(path.join(blocked, 'x'), { recursive: true }); // a non-empty directory where the memo goes
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    expect(fs.readdirSync(t.cacheDir).filter((n) => n.includes('.cairn-tmp-'))).toEqual([]);
  });

  it('renders an empty tree exactly', async () => {
    const t = await setup({});
    const doc = await t.snap();
    expect(renderRepoSnapshot(doc).equals(expected(doc))).toBe(true);
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
  });

  it('digests a body of many pieces exactly as RFC 8785 canonical JSON does', async () => {
    const t = await bigTree(9000);
    const doc = await t.snap();
    const body = { files: doc.body.files.map((f) => ({ ...f })), truncated: doc.body.truncated, counts: { ...doc.body.counts } };
    expect(snapshotDigestOf(body)).toBe(`sha256:${createHash('sha256').update(canonicalize(body)).digest('hex')}`);
    expect(snapshotDigestOf(body)).toBe(doc.snapshotDigest);
  });
});
