// renderRepoSnapshot / writeRepoSnapshot: always exactly JSON.stringify(doc, null, 2) + '\n', also
// when written in pieces; the render memo beside the stat cache is reused only for the same digest
// and an intact memo.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { tempSiblingName } from '../../src/core/atomic-write.js';
import { canonicalize } from '../../src/core/jcs.js';
import { makeRepoSnapshot, snapshotDigestOf } from '../../src/inventory/index.js';
import type { ScannedBody } from '../../src/inventory/digest.js';
import * as render from '../../src/inventory/memo/render.js';
import { scanForSnapshot } from '../../src/inventory/scan.js';
import { racyMarginOf } from '../../src/inventory/rules/racy.js';
import type { RepoSnapshot, ScanTuning } from '../../src/inventory/types.js';
import { cleanupTempDirs, MARGIN, sleep, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

const expected = (doc: RepoSnapshot) => Buffer.from(`${JSON.stringify(doc, null, 2)}\n`, 'utf8');

/**
 * The scan's handle of each body these tests made (scanForSnapshot), passed on with any document
 * over that body as the CLI passes it on: documents rebuilt or relabelled around the same body
 * get it too, and must not be rendered from the memo all the same.
 */
const scannedOf = new Map<readonly unknown[], ScannedBody>();
const renderRepoSnapshot = (doc: RepoSnapshot): Buffer => render.renderRepoSnapshot(doc, scannedOf.get(doc.body.files));
const writeRepoSnapshot = (doc: RepoSnapshot, to: { file: string } | { out: NodeJS.WritableStream }): Promise<void> => render.writeRepoSnapshot(doc, to, scannedOf.get(doc.body.files));
/** How many pieces of entries the text is made of: its parts are the frame's head, the pieces with a separator between two, and the frame's tail. */
const piecesOf = (doc: RepoSnapshot): number => ([...render.renderPieces(doc, scannedOf.get(doc.body.files))].length - 1) / 2;

async function setup(files: Record<string, string>, tuning?: ScanTuning) {
  const root = tempDir();
  const cacheDir = tempDir('cairn-cache-');
  writeTree(root, files);
  await sleep(MARGIN + 20);
  const snap = async () => {
    const { result: r, body } = await scanForSnapshot(root, { cacheDir, racyMarginMs: MARGIN, ...(tuning !== undefined ? { tuning } : {}) });
    if (body !== undefined) scannedOf.set(r.files, body);
    return makeRepoSnapshot({ files: r.files, truncated: r.truncated, counts: r.counts }, body);
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
  // The digest and the text are made PIECE entries at a time here (ScanTuning.pieceEntries), so a
  // tree of MANY files spans pieces as a tree of 9,000 does at the default 4096; the last test
  // keeps such a tree at the default.
  const PIECE = 40;
  /** More than two pieces, the last one partial. */
  const MANY = 2 * PIECE + 25;

  /** `n` files in 37 directories, a non-ASCII name in every eighth of a piece. */
  async function bigTree(n: number, tuning: ScanTuning = { pieceEntries: PIECE }) {
    const every = Math.ceil((tuning.pieceEntries ?? 4096) / 8);
    const files: Record<string, string> = {};
    for (let i = 0; i < n; i++) files[`d${i % 37}/${i % every === 0 ? `é-${i}` : `f${i}`}.txt`] = `${i}`;
    return setup(files, tuning);
  }

  it('writes exactly the pretty JSON to a file and to a stream, across piece boundaries and non-ASCII names', async () => {
    const t = await bigTree(MANY);
    const doc = await t.snap();
    expect(piecesOf(doc)).toBe(3); // the scan's tuning reaches the rendering
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    const chunks: Buffer[] = [];
    const out = new PassThrough();
    out.on('data', (c: Buffer) => chunks.push(c));
    await writeRepoSnapshot(doc, { out });
    expect(Buffer.concat(chunks).equals(expected(doc))).toBe(true);
  });

  /** Changes one character of `rel`'s entry in the memo's text (same length, CRC made right): an entry copied from the memo shows it. */
  /**
   * Marks one entry's path in the memo's own bytes (a letter in place of its first one, the
   * CRCs made right again), so a text that copies the entry shows the mark and one that renders
   * it again does not. The entry may sit in the base memo or in its patch (memo-patch.ts).
   */
  async function markInMemo(memoFile: string, rel: string, letter: string): Promise<string> {
    const { crc32 } = await import('node:zlib');
    const needle = `"path": ${JSON.stringify(rel)}`;
    const patchFile = `${memoFile}.patch`;
    const patch = fs.existsSync(patchFile) ? fs.readFileSync(patchFile) : null;
    const patchHead = /^(.+\+patch) (\S+) (\S+) (\d{10}) (\d{10}) (\d{12})\n$/;
    if (patch !== null && patch.includes(needle)) {
      const head = patch.subarray(0, patch.indexOf(10) + 1).toString('latin1');
      const [, tag, digest, base, baseCrc, , length] = patchHead.exec(head)!;
      const rest = Buffer.from(patch.subarray(head.length));
      rest.write(letter, rest.indexOf(needle) + '"path": "'.length, 'latin1');
      fs.writeFileSync(patchFile, Buffer.concat([Buffer.from(`${tag} ${digest} ${base} ${baseCrc} ${String(crc32(rest)).padStart(10, '0')} ${length}\n`, 'latin1'), rest]));
      return JSON.stringify(`${letter}${rel.slice(1)}`);
    }
    const raw = fs.readFileSync(memoFile);
    const head = raw.subarray(0, raw.indexOf(10) + 1).toString('latin1');
    const [, tag, version, digest, , length] = /^(\S+) (\d+) (\S+) (\d+) (\d+)\n$/.exec(head)!;
    const rest = Buffer.from(raw.subarray(head.length));
    const at = rest.indexOf(needle);
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(Number(length));
    rest.write(letter, at + '"path": "'.length, 'latin1');
    const crc = String(crc32(rest)).padStart(10, '0');
    fs.writeFileSync(memoFile, Buffer.concat([Buffer.from(`${tag} ${version} ${digest} ${crc} ${length}\n`, 'latin1'), rest]));
    if (patch !== null) {
      // The patch names its base by CRC: name the marked base.
      const ph = patch.subarray(0, patch.indexOf(10) + 1).toString('latin1');
      const [, ptag, pdigest, pbase, , pcrc, plength] = patchHead.exec(ph)!;
      fs.writeFileSync(patchFile, Buffer.concat([Buffer.from(`${ptag} ${pdigest} ${pbase} ${crc} ${pcrc} ${plength}\n`, 'latin1'), patch.subarray(ph.length)]));
    }
    return JSON.stringify(`${letter}${rel.slice(1)}`);
  }

  /** A tree of MANY files rendered once to a file, its memo in place and nothing racy. */
  async function renderedBigTree() {
    const t = await bigTree(MANY);
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(await t.snap(), { file });
    await sleep(MARGIN + 20);
    return { t, file };
  }

  it('after in-place edits the text is exact every round; only the entries read again are rendered, every other one copied', async () => {
    const { t, file } = await renderedBigTree();
    let doc = await t.snap();
    for (const [round, ks] of [[1, [0, MANY - 1]], [2, [PIECE + 4]], [3, [10, 2 * PIECE + 10, MANY - 2]]] as const) {
      for (const k of ks) fs.writeFileSync(path.join(t.root, doc.body.files[k]!.path), `edited in round ${round}, entry ${k}`);
      doc = await t.snap();
      await writeRepoSnapshot(doc, { file });
      expect(fs.readFileSync(file).equals(expected(doc)), `round ${round}`).toBe(true);
      expect(renderRepoSnapshot(doc).equals(expected(doc)), `round ${round}`).toBe(true);
    }
    await sleep(MARGIN + 20);
    doc = await t.snap(); // nothing racy left
    await writeRepoSnapshot(doc, { file });
    const kept = await markInMemo(t.memo()!, doc.body.files[PIECE + 20]!.path, 'X');
    const neighbour = await markInMemo(t.memo()!, doc.body.files[MANY - 2]!.path, 'Y');
    const edited = await markInMemo(t.memo()!, doc.body.files[MANY - 1]!.path, 'Z');
    fs.writeFileSync(path.join(t.root, doc.body.files[MANY - 1]!.path), 'edited once more');
    doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    const text = fs.readFileSync(file);
    expect(text.includes(kept)).toBe(true);
    expect(text.includes(neighbour)).toBe(true); // copied right up to the entry read again
    expect(text.includes(edited)).toBe(false); // rendered again
    expect(text.includes(JSON.stringify(doc.body.files[MANY - 1]!.path))).toBe(true);
  });

  it('after a save by rename (its directory changes) only that entry is rendered again', async () => {
    const { t, file } = await renderedBigTree();
    let doc = await t.snap();
    const kept = await markInMemo(t.memo()!, doc.body.files[PIECE + 20]!.path, 'Z');
    const f = path.join(t.root, doc.body.files[20]!.path);
    fs.writeFileSync(`${f}.tmp`, 'saved by rename');
    fs.renameSync(`${f}.tmp`, f);
    doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).includes(kept)).toBe(true);
  });

  it('when files come and go, copies every entry that came through, wherever it now stands', async () => {
    const { t, file } = await renderedBigTree();
    let doc = await t.snap();
    const early = await markInMemo(t.memo()!, doc.body.files[12]!.path, 'X');
    const late = await markInMemo(t.memo()!, doc.body.files[2 * PIECE + 10]!.path, 'Y');
    // A file comes after entry PIECE + 20: every entry after it now stands one further on.
    fs.writeFileSync(path.join(t.root, `${doc.body.files[PIECE + 20]!.path}.new`), 'a new file');
    doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    let text = fs.readFileSync(file);
    expect(text.includes(early)).toBe(true);
    expect(text.includes(late)).toBe(true);
    expect(text.includes(JSON.stringify(`${doc.body.files[PIECE + 20]!.path}.new`))).toBe(true);
    // A file goes before both: they move back by one and are still copied.
    await sleep(MARGIN + 20);
    const gone = doc.body.files[3]!.path;
    fs.rmSync(path.join(t.root, gone));
    doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    text = fs.readFileSync(file);
    expect(text.includes(early)).toBe(true);
    expect(text.includes(late)).toBe(true);
    expect(text.includes(`"path": ${JSON.stringify(gone)}`)).toBe(false);
  });

  it('after a .gitignore is edited (read again for its rules), its own entry is rendered again, the rest copied, and the text stays exact', async () => {
    const files: Record<string, string> = { '.gitignore': '*.log\n', 'sub/.gitignore': '*.tmp\n' };
    for (let i = 0; i < MANY; i++) files[`d${i % 37}/f${i}.txt`] = `${i}`;
    const t = await setup(files, { pieceEntries: PIECE });
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(await t.snap(), { file });
    await sleep(MARGIN + 20);
    let doc = await t.snap();
    const markedPath = doc.body.files[PIECE + 20]!.path;
    const kept = await markInMemo(t.memo()!, markedPath, 'X');
    fs.writeFileSync(path.join(t.root, 'sub', '.gitignore'), '*.tmp\n# a comment changes no rule\n');
    doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    let text = fs.readFileSync(file);
    expect(text.includes(kept)).toBe(true);
    const sub = doc.body.files.find((f) => f.path === 'sub/.gitignore')!;
    expect(sub.bytes).toBe('*.tmp\n# a comment changes no rule\n'.length);
    expect(text.includes(`"sha256": "${sub.sha256!}"`)).toBe(true);
    // Rules that change what is in: the text is exact (every marked entry elsewhere still copied).
    await sleep(MARGIN + 20);
    fs.writeFileSync(path.join(t.root, '.gitignore'), '*.log\nd3/\n');
    doc = await t.snap();
    expect(doc.body.files.some((f) => f.path.startsWith('d3/'))).toBe(false);
    await writeRepoSnapshot(doc, { file });
    text = fs.readFileSync(file);
    expect(text.includes(kept)).toBe(true);
    expect(text.toString('utf8').replace(kept, JSON.stringify(markedPath))).toBe(expected(doc).toString('utf8'));
  });

  it('the text stays exact over rounds of random creates, deletes, edits, saves by rename and new directories', async () => {
    const t = await bigTree(MANY);
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    let doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    for (let round = 0; round < 8; round++) {
      for (let op = 0; op < 6; op++) {
        const files = doc.body.files;
        const f = path.join(t.root, files[next(files.length)]!.path);
        if (!fs.existsSync(f)) continue;
        switch (next(5)) {
          case 0:
            fs.writeFileSync(`${f}.c${round}${op}`, `created ${round}/${op}`);
            break;
          case 1:
            fs.rmSync(f);
            break;
          case 2:
            fs.writeFileSync(f, `edited ${round}/${op}`);
            break;
          case 3:
            fs.writeFileSync(`${f}.tmp`, `saved ${round}/${op}`);
            fs.renameSync(`${f}.tmp`, f);
            break;
          default:
            fs.mkdirSync(path.join(path.dirname(f), `dir${round}${op}`, 'inner'), { recursive: true });
            fs.writeFileSync(path.join(path.dirname(f), `dir${round}${op}`, 'inner', 'x.txt'), 'x');
        }
      }
      doc = await t.snap();
      await writeRepoSnapshot(doc, { file });
      expect(fs.readFileSync(file).equals(expected(doc)), `round ${round}`).toBe(true);
      // The digest the canonical memo spliced, piece by piece, is the body's own.
      expect(doc.snapshotDigest, `round ${round}`).toBe(snapshotDigestOf({ ...doc.body, files: [...doc.body.files] }));
      if (round % 3 === 2) await sleep(MARGIN + 20);
    }
  });

  it('renders everything again when the memo is not of the body the edits started from, or files came or went', async () => {
    const t = await bigTree(MANY);
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    let doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    const edit = (k: number, text: string) => fs.writeFileSync(path.join(t.root, doc.body.files[k]!.path), text);
    edit(1, 'first edit');
    doc = await t.snap(); // not rendered: the memo stays one body behind
    edit(PIECE + 30, 'second edit');
    doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    fs.writeFileSync(path.join(t.root, 'd3', 'new.txt'), 'a new file');
    edit(2, 'third edit');
    doc = await t.snap();
    expect(doc.body.files.some((f) => f.path === 'd3/new.txt')).toBe(true);
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
  });

  it('writes the memo as it goes and reuses it next time', async () => {
    const t = await bigTree(PIECE + 20);
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(await t.snap(), { file });
    const memo = fs.statSync(t.memo()!);
    const doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    expect(fs.statSync(t.memo()!).ino).toBe(memo.ino);
  });

  it("removes the temp file a run killed while writing the same output left beside it, not a live writer's", async () => {
    const t = await setup({ a: 'a', 'b/c': 'c' });
    const dir = tempDir('cairn-out-');
    const file = path.join(dir, 'snap.json');
    const asIfBy = (pid: number): string => {
      const tmp = tempSiblingName(file).replace(`-tmp-${process.pid}-`, `-tmp-${pid}-`);
      fs.writeFileSync(tmp, '{"half": ');
      const then = new Date(Date.now() - 120_000); // past the minute a dead-looking writer is given
      fs.utimesSync(tmp, then, then);
      return path.basename(tmp);
    };
    const deadPid = 2 ** 22 + 4321; // above Linux's default pid_max: no such process
    asIfBy(deadPid);
    const live = asIfBy(process.ppid);
    const doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual([live, 'snap.json'].sort());
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

  it('once an output was compared and found right, later runs trust its stat alone until anything about it changes', async () => {
    const t = await setup({ a: 'a', 'b/c': 'c' });
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(await t.snap(), { file });
    const doc = await t.snap(); // the memo applies from here on
    await writeRepoSnapshot(doc, { file });
    await sleep(2500); // past the racy margin (2 s): a stamp taken now can be trusted
    await writeRepoSnapshot(doc, { file }); // compares the bytes and stamps the file
    const stamped = fs.statSync(file, { bigint: true });
    // With the memo damaged, only the stamp can spare the file a rewrite.
    fs.writeFileSync(t.memo()!, 'damaged');
    await writeRepoSnapshot(doc, { file });
    const trusted = fs.statSync(file, { bigint: true });
    expect([trusted.ino, trusted.ctimeNs]).toEqual([stamped.ino, stamped.ctimeNs]);
    // Same size, mtime put back: ctime still moves, so the edit is seen and the text restored.
    const text = fs.readFileSync(file);
    fs.writeFileSync(file, Buffer.from(text).fill(0x20, 3, 4));
    fs.utimesSync(file, trusted.atime, trusted.mtime);
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    // A link put where the file was is replaced by the file, never followed.
    const elsewhere = path.join(path.dirname(file), 'elsewhere');
    fs.renameSync(file, elsewhere);
    fs.symlinkSync('elsewhere', file);
    await writeRepoSnapshot(doc, { file });
    expect(fs.lstatSync(file).isFile()).toBe(true);
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
  });

  it("trusts a stamp once the output is older than its own file system's racy margin (100 ms on a local one), not a fixed 2 s", async () => {
    const t = await setup({ a: 'a', 'b/c': 'c' });
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    const margin = racyMarginOf(path.dirname(file));
    await writeRepoSnapshot(await t.snap(), { file });
    const doc = await t.snap();
    await writeRepoSnapshot(doc, { file });
    await sleep(margin + 200);
    await writeRepoSnapshot(doc, { file }); // compares the bytes and stamps the file
    const stamped = fs.statSync(file, { bigint: true });
    fs.writeFileSync(t.memo()!, 'damaged'); // only the stamp can spare the file a rewrite now
    await writeRepoSnapshot(doc, { file });
    const after = fs.statSync(file, { bigint: true });
    expect([after.ino, after.ctimeNs]).toEqual([stamped.ino, stamped.ctimeNs]);
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
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

  it('at the default pieces of 4096 entries, digests a body of many exactly as RFC 8785 canonical JSON does, and writes its text exactly', async () => {
    const t = await bigTree(9000, {}); // more than two pieces of the default
    const doc = await t.snap();
    expect(piecesOf(doc)).toBe(3);
    const file = path.join(tempDir('cairn-out-'), 'snap.json');
    await writeRepoSnapshot(doc, { file });
    expect(fs.readFileSync(file).equals(expected(doc))).toBe(true);
    const body = { files: doc.body.files.map((f) => ({ ...f })), truncated: doc.body.truncated, counts: { ...doc.body.counts } };
    expect(snapshotDigestOf(body)).toBe(`sha256:${createHash('sha256').update(canonicalize(body)).digest('hex')}`);
    expect(snapshotDigestOf(body)).toBe(doc.snapshotDigest);
  });
});
