// The stat cache never changes an answer; a bad cache is ignored with a notice; abort leaves
// no cache; progress is monotonic; the sync and threaded engines agree.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { makeRepoSnapshot, scanTree, scanTreeSync, snapshotDigestOf, snapshotRootDetailed, type ScanOptions, type ScanProgress, type ScanResult, type ScanTuning } from '../../src/inventory/index.js';
import { scanForSnapshot, type Scanned } from '../../src/inventory/scan.js';
import { loadCache } from '../../src/inventory/cache/stat-cache.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';
import { mkfifo } from '../support/mkfifo.js';
import { cleanupTempDirs, inDir, MARGIN, sleep, strip, tempDir, writeTree } from './helpers.js';

// Big trees and worker threads: bounded by work; the budget only catches a hang (support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });
afterAll(cleanupTempDirs);


function listFiles(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String) : [];
}

const FILES = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt', 'g.txt'];
type Op =
  | { t: 'edit'; f: number; content: string }
  | { t: 'sameSizeRewrite'; f: number }
  | { t: 'rename'; f: number; to: number }
  | { t: 'chmod'; f: number; exec: boolean }
  | { t: 'delete'; f: number }
  | { t: 'symlinkSwap'; f: number; to: number }
  | { t: 'ignore'; pattern: string }
  | { t: 'rootIgnore'; pattern: string }
  | { t: 'rmdir' }
  | { t: 'create'; dir: string; name: string; content: string }
  | { t: 'atomicSave'; f: number; content: string }
  | { t: 'mkdirWithFile'; name: string };
const fileIx = fc.nat({ max: FILES.length - 1 });
/** No budget, or one that cuts the tree (a cut result is stored and reused too). */
const limitsArb = fc.constantFrom<Pick<ScanOptions, 'maxFiles' | 'maxBytes'>>({}, {}, { maxFiles: 2 }, { maxFiles: 4 }, { maxBytes: 12 }, { maxBytes: 30 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('edit' as const), f: fileIx, content: fc.string({ maxLength: 12 }) }),
  fc.record({ t: fc.constant('sameSizeRewrite' as const), f: fileIx }),
  fc.record({ t: fc.constant('rename' as const), f: fileIx, to: fileIx }),
  fc.record({ t: fc.constant('chmod' as const), f: fileIx, exec: fc.boolean() }),
  fc.record({ t: fc.constant('delete' as const), f: fileIx }),
  fc.record({ t: fc.constant('symlinkSwap' as const), f: fileIx, to: fileIx }),
  fc.record({ t: fc.constant('ignore' as const), pattern: fc.constantFrom('*.txt', 'c.txt', '!b.txt', 'e/', '') }),
  fc.record({ t: fc.constant('rmdir' as const) }),
  fc.record({ t: fc.constant('rootIgnore' as const), pattern: fc.constantFrom('*.log', 'd/', 'e', '!d/c.txt', '') }),
  fc.record({ t: fc.constant('create' as const), dir: fc.constantFrom('', 'd', 'd/e'), name: fc.constantFrom('new.txt', 'new.log', 'z', '.hidden'), content: fc.string({ maxLength: 8 }) }),
  fc.record({ t: fc.constant('atomicSave' as const), f: fileIx, content: fc.string({ maxLength: 12 }) }),
  fc.record({ t: fc.constant('mkdirWithFile' as const), name: fc.constantFrom('n', 'e2', 'node_modules') }),
);

function apply(root: string, op: Op): void {
  const p = (i: number) => path.join(root, FILES[i]!);
  const exists = (f: string) => fs.existsSync(f) || fs.lstatSync(f, { throwIfNoEntry: false }) !== undefined;
  switch (op.t) {
    case 'edit':
      fs.mkdirSync(path.dirname(p(op.f)), { recursive: true });
      if (exists(p(op.f))) fs.rmSync(p(op.f));
      fs.writeFileSync(p(op.f), op.content);
      return;
    case 'sameSizeRewrite': {
      // Same size, mtime put back to the old value: only ctime (and the content) differ.
      const f = p(op.f);
      const st = fs.lstatSync(f, { throwIfNoEntry: false });
      if (st === undefined || !st.isFile()) return;
      const data = fs.readFileSync(f);
      for (let i = 0; i < data.length; i++) data[i] = data[i]! ^ 0x01;
      fs.writeFileSync(f, data);
      fs.utimesSync(f, st.atime, st.mtime);
      return;
    }
    case 'rename':
      if (op.f === op.to || !exists(p(op.f))) return;
      fs.mkdirSync(path.dirname(p(op.to)), { recursive: true });
      if (exists(p(op.to))) fs.rmSync(p(op.to));
      fs.renameSync(p(op.f), p(op.to));
      return;
    case 'chmod': {
      const st = fs.lstatSync(p(op.f), { throwIfNoEntry: false });
      if (st?.isFile()) fs.chmodSync(p(op.f), op.exec ? 0o755 : 0o644);
      return;
    }
    case 'delete':
      if (exists(p(op.f))) fs.rmSync(p(op.f));
      return;
    case 'symlinkSwap':
      if (op.f === op.to) return;
      fs.mkdirSync(path.dirname(p(op.f)), { recursive: true });
      if (exists(p(op.f))) fs.rmSync(p(op.f));
      fs.symlinkSync(path.relative(path.dirname(p(op.f)), p(op.to)), p(op.f));
      return;
    case 'ignore':
      fs.writeFileSync(path.join(root, 'd', '.gitignore'), `${op.pattern}\n`, { flag: 'w' });
      return;
    case 'rmdir':
      fs.rmSync(path.join(root, 'd', 'e'), { recursive: true, force: true });
      return;
    case 'rootIgnore':
      if (op.pattern === '') fs.rmSync(path.join(root, '.gitignore'), { force: true });
      else fs.writeFileSync(path.join(root, '.gitignore'), `${op.pattern}\n`);
      return;
    case 'create': {
      const dir = path.join(root, op.dir);
      if (!fs.existsSync(dir)) return;
      const f = path.join(dir, op.name);
      if (fs.lstatSync(f, { throwIfNoEntry: false }) !== undefined) fs.rmSync(f, { recursive: true });
      fs.writeFileSync(f, op.content);
      return;
    }
    case 'atomicSave': {
      // How editors and agents save: write a temporary sibling, rename it over the file.
      const f = p(op.f);
      if (!fs.existsSync(path.dirname(f))) return;
      const tmp = `${f}.tmp-save`;
      fs.writeFileSync(tmp, op.content);
      fs.renameSync(tmp, f);
      return;
    }
    case 'mkdirWithFile': {
      const dir = path.join(root, 'd', op.name);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'inner.txt'), op.name);
      return;
    }
  }
}

describe('stat cache', () => {
  it('a cached scan always equals an uncached one, over random edits, renames, chmods, deletes, same-size rewrites and symlink swaps, with and without a budget', async () => {
    let cachedHits = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 6 }), fc.boolean(), limitsArb, fc.boolean(), async (ops, threaded, limits, fromRoot) => {
        const root = tempDir();
        const cacheDir = tempDir('cairn-cache-');
        writeTree(root, { 'a.txt': 'alpha', 'b.txt': 'bravo', 'd/c.txt': 'charlie', 'd/e/f.txt': 'foxtrot', 'g.txt': 'golf' });
        await sleep(MARGIN + 20);
        const opts: ScanOptions = { cacheDir, racyMarginMs: MARGIN, ...limits, onProgress: (p) => p.phase === 'done' && (cachedHits += p.filesCached) };
        // fromRoot: the working directory is the root, as under the CLI (paths are looked up relative to it).
        const scanHere = (o: ScanOptions) => (threaded ? scanTree(root, { jobs: 2, ...o }) : Promise.resolve(scanTreeSync(root, o)));
        const scan = (o: ScanOptions) => (fromRoot ? inDir(root, () => scanHere(o)) : scanHere(o));
        await scan(opts); // prime
        for (const op of ops) {
          apply(root, op);
          const cached = await scan(opts);
          const fresh = await scan({ cache: false, ...limits });
          expect(strip(cached)).toEqual(strip(fresh));
          // Every cache this sequence wrote loaded cleanly (a damaged one would be discarded with a notice).
          expect(cached.warnings).toEqual([]);
          await sleep(MARGIN + 20);
        }
        fs.rmSync(root, { recursive: true, force: true });
        fs.rmSync(cacheDir, { recursive: true, force: true });
      }),
      { numRuns: 25 },
    );
    expect(cachedHits).toBeGreaterThan(0); // the cache was really used, not bypassed
  });

  it('a .gitignore edit classifies from the cached listings and writes every directory row and listing back unchanged', async () => {
    const files: Record<string, string> = { '.gitignore': '*.log\n', 'x.log': 'x', 'é/ü.txt': 'u' };
    for (let i = 0; i < 40; i++) files[`d${i % 7}/sub${i % 3}/f${i}.txt`] = String(i);
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, files);
    await sleep(MARGIN + 20);
    const opts: ScanOptions = { cacheDir, racyMarginMs: MARGIN };
    scanTreeSync(root, opts);
    scanTreeSync(root, opts); // the whole result stored, nothing racy
    const cacheFile = path.join(cacheDir, fs.readdirSync(cacheDir).find((n) => n.endsWith('.cache'))!);
    const header = (): { root: string; optionsKey: string } => {
      const raw = fs.readFileSync(cacheFile);
      return JSON.parse(raw.subarray(16, 16 + raw.readUInt32LE(12)).toString('utf8')) as { root: string; optionsKey: string };
    };
    const dirsOf = () => {
      const { root: r, optionsKey } = header();
      const { data, warning } = loadCache(cacheFile, r, optionsKey);
      expect(warning).toBeUndefined();
      return [...data.dirs].map(([rel, d]) => [rel, [...d.stat], d.listing.names, d.listing.types]);
    };
    const before = dirsOf();
    expect(before.length).toBeGreaterThan(20);
    const ino = fs.statSync(cacheFile).ino;
    fs.writeFileSync(path.join(root, '.gitignore'), '*.log\n# a comment: the rules keep the same files\n');
    const r = scanTreeSync(root, opts);
    expect(r.warnings).toEqual([]);
    expect(strip(r)).toEqual(strip(scanTreeSync(root, { cache: false })));
    expect(fs.statSync(cacheFile).ino).not.toBe(ino); // rewritten (the .gitignore row changed)
    expect(dirsOf()).toEqual(before);
  });

  it('a loaded cache views its rows in place, in shared memory, whatever the length of the root path (the header pads the rows to 8 bytes)', async () => {
    const base = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    // Roots whose path lengths cover every remainder mod 8, so the header JSON does too.
    for (let extra = 0; extra < 8; extra++) {
      const root = path.join(base, `r${'x'.repeat(extra)}`);
      writeTree(root, { 'a.txt': 'a', 'sub/b.txt': 'bb', 'sub/deeper/c.txt': 'ccc' });
    }
    await sleep(MARGIN + 20);
    for (let extra = 0; extra < 8; extra++) {
      const root = fs.realpathSync(path.join(base, `r${'x'.repeat(extra)}`));
      const opts: ScanOptions = { cacheDir, racyMarginMs: MARGIN };
      const truth = strip(scanTreeSync(root, { cache: false }));
      expect(strip(scanTreeSync(root, opts))).toEqual(truth);
      const written = fs.readdirSync(cacheDir).filter((n) => n.endsWith('.cache')).map((n) => path.join(cacheDir, n));
      const cacheFile = written.sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs)[0]!;
      const raw = fs.readFileSync(cacheFile);
      const header = JSON.parse(raw.subarray(16, 16 + raw.readUInt32LE(12)).toString('utf8')) as { root: string; optionsKey: string };
      expect(header.root).toBe(root);
      const { data, warning } = loadCache(cacheFile, header.root, header.optionsKey);
      expect(warning).toBeUndefined();
      expect(data.files.size).toBe(3);
      expect(data.files.stats.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(data.files.stats.length).toBe(3 * 6);
      expect(data.files.stats[0]).toBe(1); // a.txt: one byte
      expect(strip(scanTreeSync(root, opts))).toEqual(truth); // and the cache serves the next scan right
    }
  });

  it('a .gitignore that appears without being an entry (left out by include) is still watched: editing it later changes the result', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'a.txt': 'x', 'sub/b.txt': 'y' });
    await sleep(MARGIN + 20);
    const opts: ScanOptions = { cacheDir, racyMarginMs: MARGIN, include: ['**/*.txt'] };
    const paths = (r: ScanResult): string[] => r.files.map((f) => f.path);
    scanTreeSync(root, opts);
    expect(paths(scanTreeSync(root, opts))).toEqual(['a.txt', 'sub/b.txt']);
    fs.writeFileSync(path.join(root, 'sub', '.gitignore'), '# nothing yet\n');
    await sleep(MARGIN + 20);
    expect(paths(scanTreeSync(root, opts))).toEqual(['a.txt', 'sub/b.txt']); // its directory moved: the update reads it
    await sleep(MARGIN + 20);
    fs.writeFileSync(path.join(root, 'sub', '.gitignore'), 'b.txt\n'); // same directory listing: only its own row can tell
    await sleep(MARGIN + 20);
    expect(paths(scanTreeSync(root, opts))).toEqual(['a.txt']);
    expect(paths(scanTreeSync(root, { ...opts, cache: false }))).toEqual(['a.txt']);
  });

  it('re-reads a file rewritten with the same size and mtime (ctime differs)', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { f: 'AAAA' });
    await sleep(MARGIN + 20);
    const first = scanTreeSync(root, { cacheDir, racyMarginMs: MARGIN });
    const st = fs.statSync(path.join(root, 'f'));
    fs.writeFileSync(path.join(root, 'f'), 'BBBB');
    fs.utimesSync(path.join(root, 'f'), st.atime, st.mtime);
    const second = scanTreeSync(root, { cacheDir, racyMarginMs: MARGIN });
    expect(second.files[0]!.sha256).not.toBe(first.files[0]!.sha256);
    expect(second.files).toEqual(scanTreeSync(root, { cache: false }).files);
  });

  it('does not trust entries changed just before the scan (racy guard): they are re-read next time', () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { f: 'x' });
    const seen: ScanProgress[] = [];
    scanTreeSync(root, { cacheDir }); // default margin: f is too fresh to be cached
    scanTreeSync(root, { cacheDir, onProgress: (p) => seen.push(p) });
    expect(seen.at(-1)).toMatchObject({ phase: 'done', filesHashed: 1, filesCached: 0 });
  });

  it('serves unchanged files from the cache without reading them', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { a: 'a', b: 'b', 'c/d': 'd' });
    await sleep(MARGIN + 20);
    scanTreeSync(root, { cacheDir, racyMarginMs: MARGIN });
    const seen: ScanProgress[] = [];
    scanTreeSync(root, { cacheDir, racyMarginMs: MARGIN, onProgress: (p) => seen.push(p) });
    expect(seen.at(-1)).toMatchObject({ filesHashed: 0, filesCached: 3 });
  });

  it('keeps a usable cache for a tree with no files at all (no "corrupt" notice on every run)', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    fs.mkdirSync(path.join(root, 'empty', 'deeper'), { recursive: true });
    await sleep(MARGIN + 20);
    const notices: string[] = [];
    const opts: ScanOptions = { cacheDir, racyMarginMs: MARGIN, onWarning: (w) => notices.push(w.code) };
    for (let i = 0; i < 3; i++) expect(scanTreeSync(root, opts).files).toEqual([]);
    expect(await scanTree(root, opts)).toMatchObject({ files: [], warnings: [] });
    expect(notices).toEqual([]);
    const [file] = fs.readdirSync(cacheDir).filter((n) => n.endsWith('.cache'));
    const raw = fs.readFileSync(path.join(cacheDir, file!));
    const header = JSON.parse(raw.subarray(16, 16 + raw.readUInt32LE(12)).toString('utf8')) as { root: string; optionsKey: string };
    const loaded = loadCache(path.join(cacheDir, file!), header.root, header.optionsKey);
    expect(loaded.warning).toBeUndefined();
    expect([...loaded.data.dirs.keys()].sort()).toEqual(['', 'empty', 'empty/deeper']);
  });

  it.each([
    ['corrupt', (f: string) => fs.writeFileSync(f, Buffer.from(fs.readFileSync(f).map((b, i) => (i === 200 ? b ^ 0xff : b))))],
    ['truncated', (f: string) => fs.truncateSync(f, Math.floor(fs.statSync(f).size / 2))],
    ['foreign-version', (f: string) => {
      const b = fs.readFileSync(f);
      b.writeUInt32LE(999, 8);
      fs.writeFileSync(f, b);
    }],
    ['not a cache at all', (f: string) => fs.writeFileSync(f, 'hello')],
    ['unreadable', (f: string) => {
      fs.rmSync(f);
      fs.mkdirSync(f); // reading a directory fails even as root
    }],
  ])('ignores a %s cache with a notice and still gives the right answer', async (_label, damage) => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { a: 'one', 'b/c': 'two' });
    await sleep(MARGIN + 20);
    const truth = scanTreeSync(root, { cache: false });
    scanTreeSync(root, { cacheDir, racyMarginMs: MARGIN });
    const [file] = fs.readdirSync(cacheDir);
    damage(path.join(cacheDir, file!));
    const notices: string[] = [];
    const r = scanTreeSync(root, { cacheDir, racyMarginMs: MARGIN, onWarning: (w) => notices.push(w.code) });
    expect(strip(r)).toEqual(strip(truth));
    expect(notices[0]).toBe('CACHE_DISCARDED');
    expect(r.warnings[0]!.code).toBe('CACHE_DISCARDED');
  });

  it('writes nothing inside the root, and refuses a cache directory inside it', async () => {
    const root = tempDir();
    writeTree(root, { a: 'a', 'b/c': 'c' });
    const before = listFiles(root).sort();
    const inside = path.join(root, '.cache-here');
    const r = await snapshotRootDetailed(root, { cacheDir: inside });
    expect(r.warnings.map((w) => w.code)).toEqual(['CACHE_DISABLED']);
    expect(listFiles(root).sort()).toEqual(before);
    const outside = tempDir('cairn-cache-');
    await snapshotRootDetailed(root, { cacheDir: outside, racyMarginMs: -60_000 });
    expect(listFiles(root).sort()).toEqual(before);
    // The stat cache, the canonical text its digest was computed from, the sweep's stamp: all in the cache directory.
    expect(listFiles(outside).map((f) => path.extname(f)).sort()).toEqual(['.cache', '.canonical', '.swept']);
  });

  it('the default cache lives under $XDG_CACHE_HOME/cairn', () => {
    const root = tempDir();
    const xdg = tempDir('cairn-xdg-');
    writeTree(root, { a: 'a' });
    const old = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = xdg;
    try {
      scanTreeSync(root, { racyMarginMs: -60_000 }); // a negative margin trusts even fresh files
    } finally {
      if (old === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = old;
    }
    expect(listFiles(path.join(xdg, 'cairn', 'snapshots')).filter((f) => f.endsWith('.cache'))).toHaveLength(1);
  });
});

describe('unchanged-tree fast path', () => {
  async function primed(files: Record<string, string>, tuning?: ScanTuning) {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, files);
    await sleep(MARGIN + 20);
    const opts: ScanOptions = { cacheDir, racyMarginMs: MARGIN, ...(tuning !== undefined ? { tuning } : {}) };
    scanTreeSync(root, opts); // records every stat
    scanTreeSync(root, opts); // stores the whole result (now that nothing is racy)
    const events = (o: ScanOptions = {}) => {
      const seen: ScanProgress[] = [];
      const r = scanTreeSync(root, { ...opts, ...o, onProgress: (p) => seen.push(p) });
      return { r, seen };
    };
    return { root, cacheDir, opts, events };
  }

  it('returns the stored result with one lstat per path when nothing changed (one progress event, nothing hashed)', async () => {
    const t = await primed({ a: 'a', 'b/c': 'c', '.gitignore': '*.log\n', 'x.log': 'x' });
    const { r, seen } = t.events();
    expect(seen).toEqual([{ phase: 'done', filesSeen: 3, filesDone: 3, filesHashed: 0, bytesHashed: 0, filesCached: 3 }]);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    expect(strip(await scanTree(t.root, t.opts))).toEqual(strip(r));
  });

  it('looked up from inside the root (the CLI works there), an unchanged tree is served as is: the cache is not even rewritten', async () => {
    const files: Record<string, string> = { a: 'a', 'b/c': 'c' };
    for (let f = 0; f < 300; f++) files[`d/f${f}`] = String(f); // big enough for the worker-shared check
    const t = await primed(files);
    const cacheFile = () => fs.readdirSync(t.cacheDir).filter((n) => n.endsWith('.cache')).map((n) => fs.statSync(path.join(t.cacheDir, n), { bigint: true }))[0]!;
    const before = cacheFile();
    await inDir(t.root, async () => {
      const seen: ScanProgress[] = [];
      const r = await scanTree(t.root, { ...t.opts, onProgress: (p) => seen.push(p) });
      expect(seen).toEqual([expect.objectContaining({ phase: 'done', filesHashed: 0, filesCached: 302 })]);
      expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
      expect(strip(scanTreeSync(t.root, t.opts))).toEqual(strip(r));
      const unchanged = cacheFile();
      expect([unchanged.ino, unchanged.mtimeNs]).toEqual([before.ino, before.mtimeNs]);
      fs.writeFileSync(path.join(t.root, 'd', 'f7'), 'edited from inside');
      const edited = await scanTree(t.root, t.opts);
      expect(edited.files.find((f) => f.path === 'd/f7')!.bytes).toBe(18);
      expect(strip(edited)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    });
    const after = cacheFile();
    expect([after.ino, after.mtimeNs]).not.toEqual([before.ino, before.mtimeNs]); // the edit was recorded
  });

  it('a directory replaced by a file (its cached files now lie under a file) is seen, not an error', async () => {
    const files: Record<string, string> = { 'a/x': 'x', 'a/y': 'y', b: 'b' };
    for (let f = 0; f < 300; f++) files[`big/f${f}`] = String(f);
    for (const threaded of [false, true]) {
      const t = await primed(files);
      fs.rmSync(path.join(t.root, 'a'), { recursive: true });
      fs.writeFileSync(path.join(t.root, 'a'), 'now a file');
      const r = threaded ? await scanTree(t.root, t.opts) : scanTreeSync(t.root, t.opts);
      expect(r.files.filter((f) => !f.path.startsWith('big/')).map((f) => f.path)).toEqual(['a', 'b']);
      expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    }
  });

  it('re-reads only the files edited in place, without walking (one progress event)', async () => {
    const t = await primed({ a: 'a', 'b/c': 'c', 'b/d': 'd' });
    fs.writeFileSync(path.join(t.root, 'b', 'c'), 'changed in place');
    fs.chmodSync(path.join(t.root, 'a'), 0o755);
    const { r, seen } = t.events();
    expect(seen).toEqual([{ phase: 'done', filesSeen: 3, filesDone: 3, filesHashed: 2, bytesHashed: 17, filesCached: 1 }]);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    // The edited file is racy now: it is re-read again next time, and still right.
    const again = t.events();
    expect(again.seen.at(-1)!.filesHashed).toBeGreaterThanOrEqual(1);
    expect(strip(again.r)).toEqual(strip(r));
  });

  it('a cache rewritten by the fast path still lists every directory right for the next update and the next walk', async () => {
    const t = await primed({ a: 'a', 'b/c': 'c', 'b/d/e': 'e', 'f/g': 'g' });
    fs.writeFileSync(path.join(t.root, 'a'), 'edited in place');
    expect(t.events().seen).toHaveLength(1); // rewrites the cache without decoding its listings
    fs.writeFileSync(path.join(t.root, 'f', 'new'), 'new'); // f listed again and compared: one new file, no walk
    const added = t.events();
    expect(added.seen).toHaveLength(1);
    expect(added.r.files.map((f) => f.path)).toEqual(['a', 'b/c', 'b/d/e', 'f/g', 'f/new']);
    fs.mkdirSync(path.join(t.root, 'f', 'sub', 'deeper'), { recursive: true });
    fs.writeFileSync(path.join(t.root, 'f', 'sub', 'x'), 'x'); // a new directory: listed with what it holds, no walk
    fs.writeFileSync(path.join(t.root, 'f', 'sub', 'deeper', 'y'), 'y');
    const dir = t.events();
    expect(dir.seen).toHaveLength(1);
    expect(dir.r.files.map((f) => f.path)).toEqual(['a', 'b/c', 'b/d/e', 'f/g', 'f/new', 'f/sub/deeper/y', 'f/sub/x']);
    fs.symlinkSync('../a', path.join(t.root, 'f', 'link')); // a new symlink: the walk reuses every listing it can
    const { r, seen } = t.events();
    expect(seen.length).toBeGreaterThan(1);
    expect(r.files.map((f) => f.path)).toEqual(['a', 'b/c', 'b/d/e', 'f/g', 'f/link', 'f/new', 'f/sub/deeper/y', 'f/sub/x']);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  });

  it('listings kept as loaded survive a cache rewrite, non-ASCII and empty ones included, and serve the next walk right', async () => {
    const t = await primed({ 'é/ü.txt': 'u', 'é/ä/ö.txt': 'o', 'z/a': 'a', 'z/b': 'b', '😀/x': 'x' });
    fs.mkdirSync(path.join(t.root, 'empty'));
    await sleep(MARGIN + 20);
    t.events();
    await sleep(MARGIN + 20);
    t.events(); // the empty directory is in the stored result's listings now
    fs.writeFileSync(path.join(t.root, 'z', 'c'), 'c'); // z listed again; every other listing stays as loaded
    expect(t.events().seen).toHaveLength(1);
    await sleep(MARGIN + 20);
    fs.symlinkSync('../z/a', path.join(t.root, 'é', 'link')); // é moved: the walk lists it, and takes the others from the cache
    fs.writeFileSync(path.join(t.root, 'z', 'b'), 'b, edited');
    const { r, seen } = t.events();
    expect(seen.length).toBeGreaterThan(1);
    expect(r.files.map((f) => f.path)).toEqual(['z/a', 'z/b', 'z/c', 'é/link', 'é/ä/ö.txt', 'é/ü.txt', '😀/x']);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  });

  it('a new directory is listed and classified without a walk: ignored parts left out, its own .gitignore applied, the next scan unchanged', async () => {
    const t = await primed({ '.gitignore': 'build/\n', a: 'a', 'b/c': 'c' });
    writeTree(t.root, {
      'n/.gitignore': '*.tmp\n',
      'n/keep.ts': 'keep',
      'n/drop.tmp': 'dropped by n/.gitignore',
      'n/build/out.js': 'ignored by the root rules',
      'n/m/deep.ts': 'deep',
      'n/m/also.tmp': 'dropped too',
    });
    const { r, seen } = t.events();
    expect(seen).toEqual([expect.objectContaining({ phase: 'done', filesHashed: 3 })]);
    expect(r.files.map((f) => f.path)).toEqual(['.gitignore', 'a', 'b/c', 'n/.gitignore', 'n/keep.ts', 'n/m/deep.ts']);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    await sleep(MARGIN + 20);
    expect(strip(t.events().r)).toEqual(strip(r));
    const settled = t.events(); // nothing racy left: served as stored
    expect(settled.seen).toEqual([expect.objectContaining({ filesHashed: 0 })]);
    expect(strip(settled.r)).toEqual(strip(r));
    // Its files are ordinary rows now: an edit inside is a re-read, a new file a listing compared.
    fs.writeFileSync(path.join(t.root, 'n', 'm', 'deep.ts'), 'edited');
    fs.writeFileSync(path.join(t.root, 'n', 'm', 'new.ts'), 'new');
    const later = t.events();
    expect(later.seen).toHaveLength(1);
    expect(strip(later.r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  });

  it('a new directory holding a symlink, or a name it must report, is left to the walk', async () => {
    // Each step also edits b, so a walk shows as a progress event for its batch before 'done'
    // (the stored-result path reports once, whatever it read).
    const t = await primed({ a: 'a', b: 'b' });
    fs.mkdirSync(path.join(t.root, 'n'));
    fs.symlinkSync('../a', path.join(t.root, 'n', 'link'));
    fs.writeFileSync(path.join(t.root, 'b'), 'b, edited');
    const linked = t.events();
    expect(linked.seen.length).toBeGreaterThan(1);
    expect(strip(linked.r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    await sleep(MARGIN + 20);
    t.events();
    fs.mkdirSync(path.join(t.root, 'o'));
    fs.writeFileSync(path.join(t.root, 'o', 'bad '), 'a name with a trailing space');
    fs.writeFileSync(path.join(t.root, 'b'), 'b, edited again');
    const reported = t.events();
    expect(reported.seen.length).toBeGreaterThan(1);
    expect(reported.r.skipped.map((sk) => sk.path)).toEqual(['o/bad ']);
    expect(strip(reported.r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  });

  it('a synchronous scan of a big tree (worker-shared lstat check) still sees edits anywhere in it', async () => {
    const files: Record<string, string> = {};
    for (let d = 0; d < 50; d++) for (let f = 0; f < 420; f++) files[`d${d}/f${f}`] = `${d}-${f}`;
    const t = await primed(files);
    for (const rel of ['d0/f0', 'd25/f200', 'd49/f419']) fs.writeFileSync(path.join(t.root, rel), `edited ${rel}`);
    const { r, seen } = t.events();
    expect(seen).toEqual([expect.objectContaining({ phase: 'done', filesHashed: 3 })]);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  }, WHOLE_PROCESS_BUDGET_MS);

  /**
   * 21,000 files in 50 directories, primed; `scan` scans it cached, threaded or not. Past the
   * default parallelVerifyMin, so a verifying worker shares the check, and big on purpose: the
   * worker only gets a share while this thread is still at its own (booting takes tens of ms), so
   * on a small tree it finds this thread done and checks nothing (none of 12 scans of 400 or 5,000
   * files gave it a row, with every threshold lowered; at 21,000 most do).
   */
  async function bigTree(threaded: boolean, tuning?: ScanTuning) {
    const files: Record<string, string> = {};
    for (let d = 0; d < 50; d++) for (let f = 0; f < 420; f++) files[`d${d}/f${f}`] = `${d}-${f}`;
    return scannable(files, threaded, tuning);
  }

  /**
   * 420 files in 20 directories, with the thresholds lowered so that it takes the paths a tree of
   * 21,000 takes with the defaults: a verifying worker, booted while the cache loads, chunks of a
   * few rows, and a fast-path change limit of a quarter of the rows with no floor. For the tests
   * whose point is which path the scan takes with what the check found, not the worker's share.
   */
  const SMALL_TREE_TUNING: ScanTuning = { parallelVerifyMin: 100, earlyVerifierCacheBytes: 0, verifyChunkRows: 16, fastPathChangeMin: 0 };
  async function smallTree(threaded: boolean) {
    const files: Record<string, string> = {};
    for (let d = 0; d < 20; d++) for (let f = 0; f < 21; f++) files[`d${d}/f${f}`] = `${d}-${f}`;
    return scannable(files, threaded, SMALL_TREE_TUNING);
  }

  async function scannable(files: Record<string, string>, threaded: boolean, tuning: ScanTuning | undefined) {
    const t = await primed(files, tuning);
    const scan = async () => {
      const seen: ScanProgress[] = [];
      const o: ScanOptions = { ...t.opts, onProgress: (p) => seen.push(p) };
      const r = threaded ? await scanTree(t.root, { ...o, jobs: 2 }) : scanTreeSync(t.root, o);
      return { r, seen };
    };
    return { files, t, scan };
  }

  /**
   * Scans the edited tree: the answer must equal an uncached scan's, and what was read must be
   * recorded as read (a second scan reads nothing and answers the same). Returns the first scan.
   */
  async function scanTwice(root: string, scan: () => Promise<{ r: ScanResult; seen: ScanProgress[] }>) {
    await sleep(MARGIN + 20);
    const first = await scan();
    expect(strip(first.r)).toEqual(strip(scanTreeSync(root, { cache: false })));
    const second = await scan();
    expect(second.seen).toEqual([expect.objectContaining({ phase: 'done', filesHashed: 0 })]);
    expect(strip(second.r)).toEqual(strip(first.r));
    return first;
  }

  describe.each([
    ['synchronous', false],
    ['threaded', true],
  ])('%s scans of a big tree', (_label, threaded) => {
    it('reads again the hundreds of files both checking threads found changed, and records each exactly', async () => {
      // The worker's read budget lowered from 64 MiB: the file past it need not be 64 MiB.
      const prereadWorkerBytes = 64 * 1024;
      const { files, t, scan } = await bigTree(threaded, { prereadWorkerBytes });
      // Every 35th file, spread over the whole table so both threads' shares hold some: appended
      // to, or rewritten with the same size and mtime (only ctime and the bytes tell).
      const edited = Object.keys(files).filter((_, i) => i % 35 === 0);
      edited.forEach((rel, k) => {
        const abs = path.join(t.root, rel);
        if (k % 2 === 0) fs.appendFileSync(abs, ' edited');
        else {
          const st = fs.statSync(abs);
          fs.writeFileSync(abs, Buffer.from(files[rel]!).map((b) => b ^ 1));
          fs.utimesSync(abs, st.atime, st.mtime);
        }
      });
      // One grown past what the worker reads during the pass: read after it, on the main thread.
      fs.writeFileSync(path.join(t.root, edited[1]!), Buffer.alloc(prereadWorkerBytes + 1, 7));
      const first = await scanTwice(t.root, scan);
      expect(first.seen).toEqual([expect.objectContaining({ phase: 'done', filesHashed: edited.length, filesCached: 21_000 - edited.length })]);
    }, WHOLE_PROCESS_BUDGET_MS);

    it('where changed files became a FIFO and a directory reports them as an uncached scan does, and takes the other reads', async () => {
      const { files, t, scan } = await bigTree(threaded);
      const edited = Object.keys(files).filter((_, i) => i % 50 === 0);
      for (const rel of edited) fs.appendFileSync(path.join(t.root, rel), ' edited');
      // At both ends of the table, so each thread of the check finds one.
      for (const rel of [edited[0]!, edited.at(-1)!]) fs.rmSync(path.join(t.root, rel));
      mkfifo(path.join(t.root, edited[0]!));
      fs.mkdirSync(path.join(t.root, edited.at(-1)!));
      fs.writeFileSync(path.join(t.root, edited.at(-1)!, 'inside'), 'x');
      const first = await scanTwice(t.root, scan);
      expect(first.r.skipped.map((sk) => sk.path)).toEqual([edited[0]]);
      expect(first.r.files.find((f) => f.path === `${edited.at(-1)!}/inside`)?.bytes).toBe(1);
    }, WHOLE_PROCESS_BUDGET_MS);

    it('with a third of its files changed (past the fast path limit) walks, taking the rows and reads of the check as they are', async () => {
      const { files, t, scan } = await smallTree(threaded);
      const n = Object.keys(files).length;
      const edited = Object.keys(files).filter((_, i) => i % 3 === 0);
      // Past the limit (a quarter of the rows) and within twice it: the check's rows and reads are taken.
      expect(edited.length).toBeGreaterThan((n + 21) / 4);
      expect(edited.length + 2).toBeLessThanOrEqual((n + 21) / 2);
      for (const rel of edited) fs.appendFileSync(path.join(t.root, rel), '+');
      fs.writeFileSync(path.join(t.root, 'd2', 'new'), 'new'); // and a directory moved
      const first = await scanTwice(t.root, scan);
      expect(first.seen.at(-1)).toMatchObject({ phase: 'done', filesHashed: edited.length + 1, filesDone: n + 1 });
    }, WHOLE_PROCESS_BUDGET_MS);

    it('takes added, deleted and edited files and new directories without a walk, then walks for a new symlink with the rows it checked', async () => {
      const { files, t, scan } = await smallTree(threaded);
      const n = Object.keys(files).length;
      const perDir = 21;
      fs.writeFileSync(path.join(t.root, 'd3', 'new'), 'new');
      fs.mkdirSync(path.join(t.root, 'd4', 'sub'));
      fs.writeFileSync(path.join(t.root, 'd4', 'sub', 'x'), 'x');
      fs.rmSync(path.join(t.root, 'd7', 'f1'));
      fs.rmSync(path.join(t.root, 'd9'), { recursive: true });
      fs.writeFileSync(path.join(t.root, 'd14', 'f5'), 'edited');
      await sleep(MARGIN + 20); // nothing racy: exact counts
      const first = await scan();
      // Only the two new files and the edited one are read, in one step: d3, d4, d7 and the root were listed again, d4/sub for the first time.
      expect(first.seen).toEqual([expect.objectContaining({ phase: 'done', filesHashed: 3, filesCached: n - perDir - 1 - 1 })]);
      expect(strip(first.r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
      fs.symlinkSync('f0', path.join(t.root, 'd3', 'link'));
      fs.writeFileSync(path.join(t.root, 'd15', 'f6'), 'edited too');
      await sleep(MARGIN + 20);
      const second = await scan();
      // A new symlink needs the walk (only the walk records one); every row the lstat pass
      // confirmed is taken from the cache, and the edited file from the check's own read.
      expect(second.r.files.find((f) => f.path === 'd3/link')?.kind).toBe('symlink');
      expect(second.seen.at(-1)).toMatchObject({ filesHashed: 1, filesDone: n - perDir - 1 + 2 + 1 });
      expect(strip(second.r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
      expect(strip((await scan()).r)).toEqual(strip(second.r));
    }, WHOLE_PROCESS_BUDGET_MS);
  });

  /** A tree scanned under a budget; `run` scans it (cached) and checks the answer against an uncached scan. */
  async function cappedTree(files: Record<string, string>, limits: Pick<ScanOptions, 'maxFiles' | 'maxBytes'>) {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, files);
    await sleep(MARGIN + 20);
    const run = () => {
      const seen: ScanProgress[] = [];
      const r = scanTreeSync(root, { cacheDir, racyMarginMs: MARGIN, ...limits, onProgress: (p) => seen.push(p) });
      expect(strip(r)).toEqual(strip(scanTreeSync(root, { cache: false, ...limits })));
      return { r, seen };
    };
    return { root, run };
  }

  it('stores a result cut at maxFiles and reuses it while the prefix is unchanged, whatever happens after it', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`d${String(i).padStart(2, '0')}/f`] = `${i}`;
    const { root, run } = await cappedTree(files, { maxFiles: 10 });
    run();
    expect(run().seen).toHaveLength(1); // stored, cut: the fast path
    fs.writeFileSync(path.join(root, 'd25', 'new'), 'after the cut'); // a directory after the prefix moved
    fs.writeFileSync(path.join(root, 'd20', 'f'), 'edited after the cut');
    await sleep(MARGIN + 20);
    const after = run();
    expect(after.seen).toEqual([expect.objectContaining({ filesHashed: 0 })]);
    expect(after.r.truncated).toBe(true);
    fs.writeFileSync(path.join(root, 'd03', 'f'), 'edited in the prefix');
    await sleep(MARGIN + 20);
    expect(run().seen).toEqual([expect.objectContaining({ filesHashed: 1 })]);
    fs.writeFileSync(path.join(root, 'd02', 'new'), 'new in the prefix: the cut moves');
    await sleep(MARGIN + 20);
    const moved = run();
    expect(moved.seen.length).toBeGreaterThan(1); // walked
    expect(moved.r.files.map((f) => f.path)).toContain('d02/new');
  });

  it('a result cut by bytes is reused only while no file changes size', async () => {
    const { root, run } = await cappedTree({ a: 'aaaa', b: 'bbbb', c: 'cccc', d: 'dddd' }, { maxBytes: 10 });
    run();
    expect(run().seen).toHaveLength(1);
    fs.writeFileSync(path.join(root, 'a'), 'AAAA'); // same size: still the fast path
    await sleep(MARGIN + 20);
    expect(run().seen).toHaveLength(1);
    fs.writeFileSync(path.join(root, 'a'), 'A'); // smaller: c may fit now
    await sleep(MARGIN + 20);
    const moved = run();
    expect(moved.seen.length).toBeGreaterThan(1);
    expect(moved.r.files.map((f) => f.path)).toEqual(['a', 'b', 'c']);
  });

  it('falls back to the walk when an in-place edit pushes the total over maxBytes', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { a: 'aa', b: 'bb', c: 'cc' });
    await sleep(MARGIN + 20);
    const opts: ScanOptions = { cacheDir, racyMarginMs: MARGIN, maxBytes: 10 };
    scanTreeSync(root, opts);
    scanTreeSync(root, opts);
    fs.writeFileSync(path.join(root, 'b'), 'b'.repeat(20));
    const r = scanTreeSync(root, opts);
    expect(r.truncated).toBe(true);
    expect(strip(r)).toEqual(strip(scanTreeSync(root, { cache: false, maxBytes: 10 })));
  });

  it('sees an edit of a .gitignore that ignores itself, without a walk', async () => {
    const t = await primed({ '.gitignore': '.gitignore\n*.log\n', 'a.log': 'x', b: 'b' });
    expect(t.events().r.files.map((f) => f.path)).toEqual(['b']);
    fs.writeFileSync(path.join(t.root, '.gitignore'), '.gitignore\n');
    const { r, seen } = t.events();
    expect(seen).toHaveLength(1); // the root's entries classified again from the cached listing
    expect(r.files.map((f) => f.path)).toEqual(['a.log', 'b']);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  });

  it('after a .gitignore edit, classifies its subtree again: edited, unignored and untouched files all right', async () => {
    const t = await primed({ '.gitignore': '*.log\n', 'sub/x.log': 'was ignored', 'sub/y': 'y', a: 'a', b: 'b' });
    fs.writeFileSync(path.join(t.root, '.gitignore'), '*.tmp\n');
    fs.writeFileSync(path.join(t.root, 'b'), 'edited in place');
    const { r, seen } = t.events();
    expect(seen).toEqual([expect.objectContaining({ filesHashed: 3, filesCached: 2 })]); // .gitignore, b, sub/x.log read; a, sub/y from the check
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    expect(strip(await scanTree(t.root, t.opts))).toEqual(strip(r));
  });

  it('a nested .gitignore edit that ignores a subtree drops its rows and listings, and the next scan is unchanged', async () => {
    const t = await primed({ 'a/.gitignore': '', 'a/build/x': 'x', 'a/build/deep/y': 'y', 'a/src/z': 'z', b: 'b' });
    fs.writeFileSync(path.join(t.root, 'a', '.gitignore'), 'build/\n');
    const { r, seen } = t.events();
    expect(seen).toHaveLength(1);
    expect(r.files.map((f) => f.path)).toEqual(['a/.gitignore', 'a/src/z', 'b']);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    await sleep(MARGIN + 20);
    t.events(); // the edited .gitignore was racy: read once more
    fs.writeFileSync(path.join(t.root, 'a', 'build', 'x'), 'ignored now: not looked at');
    const again = t.events();
    expect(again.seen).toEqual([expect.objectContaining({ filesHashed: 0 })]);
    expect(strip(again.r)).toEqual(strip(r));
  });

  it('walks when new rules un-ignore a directory that was never listed', async () => {
    const t = await primed({ '.gitignore': 'build/\n', 'build/out': 'o', 'build/sub/deep': 'd', src: 's' });
    fs.writeFileSync(path.join(t.root, '.gitignore'), '# nothing ignored\n');
    const { r, seen } = t.events();
    expect(seen.length).toBeGreaterThan(1);
    expect(r.files.map((f) => f.path)).toEqual(['.gitignore', 'build/out', 'build/sub/deep', 'src']);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  });

  it('a .gitignore that appears or goes classifies its directory again', async () => {
    const t = await primed({ 'd/a.log': 'a', 'd/b': 'b', c: 'c' });
    fs.writeFileSync(path.join(t.root, 'd', '.gitignore'), '*.log\n');
    const added = t.events();
    expect(strip(added.r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
    expect(added.seen).toHaveLength(1);
    expect(added.r.files.map((f) => f.path)).toEqual(['c', 'd/.gitignore', 'd/b']);
    await sleep(MARGIN + 20);
    fs.rmSync(path.join(t.root, 'd', '.gitignore'));
    const gone = t.events();
    expect(gone.seen).toHaveLength(1);
    expect(gone.r.files.map((f) => f.path)).toEqual(['c', 'd/a.log', 'd/b']);
    expect(strip(gone.r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  });

  it('stays on the fast path when a .gitignore is rewritten with the same bytes', async () => {
    const t = await primed({ '.gitignore': '*.log\n', 'sub/.gitignore': '!keep.log\n', 'sub/keep.log': 'k', 'x.log': 'x', a: 'a' });
    fs.writeFileSync(path.join(t.root, 'sub', '.gitignore'), '!keep.log\n');
    const { r, seen } = t.events();
    expect(seen).toHaveLength(1);
    expect(r.files.map((f) => f.path)).toEqual(['.gitignore', 'a', 'sub/.gitignore', 'sub/keep.log']);
    expect(strip(r)).toEqual(strip(scanTreeSync(t.root, { cache: false })));
  });

  it('still applies when only ignored content changed, and never with other limits', async () => {
    const t = await primed({ '.gitignore': 'build/\n', 'build/out': 'o', src: 's' });
    fs.writeFileSync(path.join(t.root, 'build', 'out'), 'changed');
    fs.writeFileSync(path.join(t.root, 'build', 'new'), 'new');
    expect(t.events().seen).toHaveLength(1);
    expect(t.events({ maxFiles: 1 }).r.truncated).toBe(true);
  });

  it('applies with symlinks, whose targets are re-read when edited in place', async () => {
    const l = await primed({ a: 'a', b: 'b' });
    fs.symlinkSync('a', path.join(l.root, 'link'));
    fs.symlinkSync('missing', path.join(l.root, 'dangling'));
    await sleep(MARGIN + 20);
    l.events();
    l.events();
    const { r, seen } = l.events();
    expect(seen).toHaveLength(1);
    expect(strip(r)).toEqual(strip(scanTreeSync(l.root, { cache: false })));
    fs.writeFileSync(path.join(l.root, 'a'), 'edited in place');
    const edited = l.events();
    expect(edited.seen).toHaveLength(1);
    expect(edited.r.files.find((f) => f.path === 'link')).toMatchObject({ bytes: 15, kind: 'symlink' });
    expect(strip(edited.r)).toEqual(strip(scanTreeSync(l.root, { cache: false })));
  });

  it('falls back to the walk when a link leads elsewhere through a directory it does not record', async () => {
    // build/ is ignored, so its changes do not show in any recorded directory: only re-resolving the links can tell.
    const l = await primed({ '.gitignore': 'build/\n', 'build/x': 'x', src: 'source' });
    fs.symlinkSync('build/x', path.join(l.root, 'via'));
    fs.symlinkSync('build/later', path.join(l.root, 'dangling'));
    await sleep(MARGIN + 20);
    l.events();
    l.events();
    expect(l.events().seen).toHaveLength(1);
    fs.rmSync(path.join(l.root, 'build', 'x'));
    fs.symlinkSync('../src', path.join(l.root, 'build', 'x'));
    fs.writeFileSync(path.join(l.root, 'build', 'later'), 'appeared');
    const { r, seen } = l.events();
    expect(seen.length).toBeGreaterThan(1);
    expect(r.files.find((f) => f.path === 'via')).toMatchObject({ bytes: 6, kind: 'symlink' });
    expect(r.files.find((f) => f.path === 'dangling')).toMatchObject({ bytes: 8, kind: 'symlink' });
    expect(strip(r)).toEqual(strip(scanTreeSync(l.root, { cache: false })));
  });
});

describe('digest stored with the result', () => {
  const fresh = (r: ScanResult) => snapshotDigestOf({ files: r.files.map((f) => ({ ...f })), truncated: r.truncated, counts: { ...r.counts } });
  // The scan's handle of its body gives the document its digest (scanForSnapshot).
  const digestOf = ({ result: r, body }: Scanned) => makeRepoSnapshot({ files: r.files, truncated: r.truncated, counts: r.counts }, body).snapshotDigest;

  it('a warm scan reuses the stored digest only while it is true, and its file list cannot be changed', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { a: 'a', 'b/c': 'c', 'b/d': 'd' });
    fs.symlinkSync('a', path.join(root, 'link'));
    await sleep(MARGIN + 20);
    const opts: ScanOptions = { cacheDir, racyMarginMs: MARGIN };
    await scanTree(root, opts);
    const warmScan = await scanForSnapshot(root, opts);
    const warm = warmScan.result;
    expect(warmScan.body?.digest).toBeDefined();
    expect(digestOf(warmScan)).toBe(fresh(warm));
    expect(() => {
      (warm.files[0] as { bytes: number }).bytes = 99;
    }).toThrow(TypeError);
    expect(() => warm.files.push({ path: 'z', bytes: 0, mode: '0644', kind: 'file' })).toThrow(TypeError);
    // The handle describes its own frozen list only: with another body it is not believed.
    const other = warm.files.map((f, k) => (k === 0 ? { ...f, bytes: f.bytes + 1 } : f));
    const otherBody = { files: other, truncated: warm.truncated, counts: { files: other.length, bytes: warm.counts.bytes + 1 } };
    expect(makeRepoSnapshot(otherBody, warmScan.body).snapshotDigest).toBe(snapshotDigestOf(otherBody));
    expect(makeRepoSnapshot(otherBody, warmScan.body).snapshotDigest).not.toBe(digestOf(warmScan));
    // Edited and re-scanned by the synchronous engine (which computes no digest): the stored one must go.
    fs.writeFileSync(path.join(root, 'a'), 'edited');
    scanTreeSync(root, opts);
    await sleep(MARGIN + 20);
    scanTreeSync(root, opts);
    const afterScan = await scanForSnapshot(root, opts);
    const after = afterScan.result;
    expect(after.files.find((f) => f.path === 'link')).toMatchObject({ bytes: 6 });
    expect(digestOf(afterScan)).toBe(fresh(after));
    expect(digestOf(afterScan)).not.toBe(digestOf(warmScan));
  });
});

describe('abort, progress, engines', () => {
  function bigTree(): string {
    const root = tempDir();
    const files: Record<string, string> = {};
    for (let d = 0; d < 20; d++) for (let i = 0; i < 60; i++) files[`d${d}/f${i}.txt`] = `file ${d}/${i} `.repeat(50);
    writeTree(root, files);
    return root;
  }

  it('aborts with ERR_ABORTED and leaves no cache (not even a temp file)', async () => {
    const root = bigTree();
    const cacheDir = tempDir('cairn-cache-');
    const ac = new AbortController();
    const run = scanTree(root, { cacheDir, signal: ac.signal, racyMarginMs: -60_000, onProgress: (p) => p.filesDone > 450 && ac.abort() });
    await expect(run).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    expect(listFiles(cacheDir)).toEqual([]);
    const pre = new AbortController();
    pre.abort();
    await expect(scanTree(root, { cacheDir, signal: pre.signal })).rejects.toMatchObject({ code: 'ERR_ABORTED' });
    expect(() => scanTreeSync(root, { cacheDir, signal: pre.signal })).toThrow(expect.objectContaining({ code: 'ERR_ABORTED' }) as Error);
    expect(listFiles(cacheDir)).toEqual([]);
  });

  it('emits monotonic progress that ends, once, at the totals', async () => {
    const root = bigTree();
    for (const threaded of [true, false]) {
      const seen: ScanProgress[] = [];
      const r = threaded ? await scanTree(root, { cache: false, onProgress: (p) => seen.push(p) }) : scanTreeSync(root, { cache: false, onProgress: (p) => seen.push(p) });
      expect(seen.length).toBeGreaterThan(1);
      for (let i = 1; i < seen.length; i++) {
        for (const k of ['filesSeen', 'filesDone', 'filesHashed', 'bytesHashed', 'filesCached'] as const) expect(seen[i]![k]).toBeGreaterThanOrEqual(seen[i - 1]![k]);
      }
      const last = seen.at(-1)!;
      expect(seen.filter((p) => p.phase === 'done')).toHaveLength(1);
      expect(last).toEqual({ phase: 'done', filesSeen: r.counts.files, filesDone: r.counts.files, filesHashed: r.counts.files, bytesHashed: r.counts.bytes, filesCached: 0 });
    }
  });

  it('scanTreeSync and scanTree (1, 2 and 4 workers) give identical results', async () => {
    const root = bigTree();
    fs.symlinkSync('d0/f0.txt', path.join(root, 'link'));
    fs.writeFileSync(path.join(root, 'big.bin'), Buffer.alloc(5 * 1024 * 1024, 7)); // > one read buffer
    const sync = strip(scanTreeSync(root, { cache: false }));
    for (const jobs of [0, 1, 2, 4]) expect(strip(await scanTree(root, { cache: false, jobs }))).toEqual(sync);
    const capped = strip(scanTreeSync(root, { cache: false, maxFiles: 700, maxBytes: 400_000 }));
    expect(strip(await scanTree(root, { cache: false, maxFiles: 700, maxBytes: 400_000 }))).toEqual(capped);
    expect(capped.truncated).toBe(true);
  });
});
