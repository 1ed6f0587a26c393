// A process keeps the stat cache rows it saved (or loaded and left as they were) and starts its
// next scan of the root from them, while the file on disk is still the one they went with
// (src/inventory/cache/resident.ts). Whatever the edits and whoever else writes the cache, every
// scan gives what an uncached scan gives, and the rows are reused only while the file is theirs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { scanTree, scanTreeSync, type ScanResult } from '../../src/inventory/index.js';
import { residentCounts } from '../../src/inventory/cache/resident.js';
import { builtPatched, builtReused } from '../../src/inventory/fastpath/stored-result.js';
import { snapshotRootDetailed } from '../../src/inventory/snapshot.js';
import type { CacheState, KnownUnchanged, RepoSnapshot } from '../../src/inventory/types.js';
import { cleanupTempDirs, MARGIN, strip, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

type Op =
  | { kind: 'write'; dir: number; name: number; text: string }
  | { kind: 'remove'; dir: number; name: number }
  | { kind: 'removeDir'; dir: number }
  | { kind: 'ignore'; dir: number; rule: number }
  | { kind: 'foreignSave' }
  | { kind: 'rewriteInPlace' };

const DIRS = ['', 'a', 'a/b', 'c', 'c/d/e'];
const RULES = ['', 'f1\n', '*.log\n', 'b/\n', '!f2\nf*\n'];

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('write' as const), dir: fc.nat(DIRS.length - 1), name: fc.nat(4), text: fc.string({ maxLength: 12 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), dir: fc.nat(DIRS.length - 1), name: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('removeDir' as const), dir: fc.integer({ min: 1, max: DIRS.length - 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('ignore' as const), dir: fc.nat(DIRS.length - 1), rule: fc.nat(RULES.length - 1) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'foreignSave' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rewriteInPlace' as const }) },
);

function fileName(name: number): string {
  return name === 4 ? 'x.log' : `f${name}`;
}

/** The one cache file a scan left in `cacheDir` (its memos aside). */
function cacheFileIn(cacheDir: string): string {
  const names = fs.readdirSync(cacheDir).filter((n) => n.endsWith('.cache'));
  expect(names.length).toBe(1);
  return path.join(cacheDir, names[0]!);
}

describe('a process starts its next scan from the stat cache rows it kept', () => {
  it('gives what an uncached scan gives on random edit sequences, reusing its rows only while the file is the one they went with', async () => {
    const start = residentCounts.reused;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(opArb, fc.boolean()), { minLength: 4, maxLength: 24 }), async (steps) => {
        const root = tempDir();
        const mine = tempDir('cairn-cache-');
        const other = tempDir('cairn-cache-');
        writeTree(root, { 'a/f0': 'zero', 'a/b/f1': 'one', 'c/d/e/f2': 'two', f3: 'three' });
        const options = { cacheDir: mine, racyMarginMs: MARGIN };
        scanTreeSync(root, options);
        // The rows this process kept stand for the file it saved until something replaces it.
        let ours = true;
        for (const [op, async] of steps) {
          const dir = path.join(root, DIRS[op.kind === 'foreignSave' || op.kind === 'rewriteInPlace' ? 0 : op.dir]!);
          if (op.kind === 'write') {
            fs.mkdirSync(dir, { recursive: true });
            fs.writeFileSync(path.join(dir, fileName(op.name)), op.text);
          } else if (op.kind === 'remove') fs.rmSync(path.join(dir, fileName(op.name)), { force: true });
          else if (op.kind === 'removeDir') fs.rmSync(dir, { recursive: true, force: true });
          else if (op.kind === 'ignore') {
            fs.mkdirSync(dir, { recursive: true });
            fs.writeFileSync(path.join(dir, '.gitignore'), RULES[op.rule]!);
          } else if (op.kind === 'foreignSave') {
            // Another process scans and saves: its file is renamed over ours (a new inode).
            scanTreeSync(root, { cacheDir: other, racyMarginMs: MARGIN });
            const target = cacheFileIn(mine);
            fs.copyFileSync(cacheFileIn(other), `${target}.incoming`);
            fs.renameSync(`${target}.incoming`, target);
            ours = false;
          } else {
            // The same bytes written into the very file: its times move, so it is read again.
            const target = cacheFileIn(mine);
            fs.writeFileSync(target, fs.readFileSync(target));
            ours = false;
          }
          const before = { ...residentCounts };
          const r: ScanResult = async ? await scanTree(root, options) : scanTreeSync(root, options);
          const truth = scanTreeSync(root, { cache: false });
          expect(strip(r)).toEqual(strip(truth));
          if (!ours) expect(residentCounts.reused).toBe(before.reused);
          ours = true;
        }
      }),
      { numRuns: 25 },
    );
    expect(residentCounts.reused).toBeGreaterThan(start);
  });

  it('reuses the rows it saved: the next scan decodes nothing', () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'a/f0': 'zero', f1: 'one' });
    const options = { cacheDir, racyMarginMs: MARGIN };
    scanTreeSync(root, options);
    fs.writeFileSync(path.join(root, 'a/f0'), 'changed');
    const before = residentCounts.reused;
    scanTreeSync(root, options);
    scanTreeSync(root, options);
    expect(residentCounts.reused).toBe(before + 2);
    expect(strip(scanTreeSync(root, options))).toEqual(strip(scanTreeSync(root, { cache: false })));
  });

  it('takes the entries the last snapshot built while nothing changed, and builds them again after any change', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'a/f0': 'zero', 'a/b/f1': 'one', f2: 'two' });
    fs.symlinkSync('a/f0', path.join(root, 'link'));
    const options = { cacheDir, racyMarginMs: MARGIN };
    const snap = async (): Promise<RepoSnapshot> => (await snapshotRootDetailed(root, options)).snapshot;
    const truth = async (): Promise<RepoSnapshot> => (await snapshotRootDetailed(root, { cache: false })).snapshot;
    await new Promise((r) => setTimeout(r, 2 * MARGIN)); // nothing racy: the rows stay as they are
    await snap();
    const kept = await snap(); // rows left as they were: kept with the entries built from them
    const before = builtReused.count;
    const again = await snap();
    expect(builtReused.count).toBe(before + 1);
    expect(again.body.files).toBe(kept.body.files); // the very entries, not built anew
    expect(again).toEqual(await truth());
    // Same size, other bytes: the row's stat moved, so the entries are built from the rows again.
    fs.writeFileSync(path.join(root, 'a/f0'), 'ZERO');
    const changed = await snap();
    expect(builtReused.count).toBe(before + 1);
    expect(changed).toEqual(await truth());
    expect(changed.snapshotDigest).not.toBe(kept.snapshotDigest);
  });

  it('gives what an uncached snapshot gives on random edit sequences, nothing changed between some', async () => {
    const start = builtReused.count;
    const stepArb = fc.oneof(
      { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('write' as const), dir: fc.nat(DIRS.length - 1), name: fc.nat(4), text: fc.string({ maxLength: 12 }) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), dir: fc.nat(DIRS.length - 1), name: fc.nat(4) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('chmod' as const), dir: fc.nat(DIRS.length - 1), name: fc.nat(4) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('relink' as const), name: fc.nat(4) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('ignore' as const), dir: fc.nat(DIRS.length - 1), rule: fc.nat(RULES.length - 1) }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(stepArb, fc.boolean()), { minLength: 4, maxLength: 10 }), async (steps) => {
        const root = tempDir();
        const cacheDir = tempDir('cairn-cache-');
        writeTree(root, { 'a/f0': 'zero', 'a/f1': 'one', 'a/b/f1': 'one', 'a/b/f2': 'two', 'c/d/e/f2': 'two', f0: 'zero', f3: 'three' });
        fs.symlinkSync('a/f0', path.join(root, 'link'));
        const options = { cacheDir, racyMarginMs: MARGIN, jobs: 1 }; // a pool of workers: the scan makes the body's digest (jobs 0 leaves it to the caller)
        await snapshotRootDetailed(root, options);
        for (const [step, wait] of steps) {
          const file = 'name' in step && 'dir' in step ? path.join(root, DIRS[step.dir]!, fileName(step.name)) : '';
          if (step.kind === 'write') {
            fs.mkdirSync(path.dirname(file), { recursive: true });
            fs.writeFileSync(file, step.text);
          } else if (step.kind === 'remove') fs.rmSync(file, { force: true });
          else if (step.kind === 'chmod') {
            if (fs.existsSync(file)) fs.chmodSync(file, (fs.statSync(file).mode & 0o100) !== 0 ? 0o644 : 0o755);
          } else if (step.kind === 'relink') {
            fs.rmSync(path.join(root, 'link'), { force: true });
            fs.symlinkSync(step.name % 2 === 0 ? 'a/f0' : `c/d/e/${fileName(step.name)}`, path.join(root, 'link'));
          } else if (step.kind === 'ignore') {
            fs.mkdirSync(path.join(root, DIRS[step.dir]!), { recursive: true });
            fs.writeFileSync(path.join(root, DIRS[step.dir]!, '.gitignore'), RULES[step.rule]!);
          }
          const truth = (await snapshotRootDetailed(root, { cache: false, jobs: 0 })).snapshot;
          expect((await snapshotRootDetailed(root, options)).snapshot).toEqual(truth);
          if (wait) {
            // Past the racy margin: the racy rows are read again, then a snapshot leaves the rows
            // as they are and keeps its entries with them, for the next edit to be made against.
            await new Promise((r) => setTimeout(r, 2 * MARGIN));
            expect((await snapshotRootDetailed(root, options)).snapshot).toEqual(truth);
            expect((await snapshotRootDetailed(root, options)).snapshot).toEqual(truth);
          }
        }
      }),
      { numRuns: 20 },
    );
    // The property held where the kept entries were taken, not only where they were not.
    expect(builtReused.count).toBeGreaterThan(start);
  });

  it('a watching caller that defers the cache save: nothing is written, nor the state told, until it runs the save; then the next scan reads nothing again', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'a/x': 'x', 'a/y': 'y', w: 'w' });
    const options = { cacheDir, racyMarginMs: MARGIN, withContentDigest: true };
    scanTreeSync(root, options);
    await new Promise((r) => setTimeout(r, 2 * MARGIN));
    fs.appendFileSync(path.join(root, 'a/x'), '+1');
    await new Promise((r) => setTimeout(r, 2 * MARGIN)); // (not racy when saved)
    const told: (CacheState | null)[] = [];
    const saves: (() => void)[] = [];
    const known: KnownUnchanged = { dir: () => false, everyDir: () => false, cacheState: null, onCacheState: (st) => told.push(st), deferSave: (save) => saves.push(save) };
    const file = cacheFileIn(cacheDir);
    const before = fs.readFileSync(file);
    const deferred = scanTreeSync(root, { ...options, knownUnchanged: known });
    expect(strip(deferred)).toEqual(strip(scanTreeSync(root, { cache: false, withContentDigest: true })));
    expect([fs.readFileSync(file).equals(before), told.length, saves.length]).toEqual([true, 0, 1]);
    saves[0]!();
    expect(fs.readFileSync(file).equals(before)).toBe(false);
    expect(told.length === 1 && told[0] !== null).toBe(true);
    let hashed = -1;
    const next = scanTreeSync(root, { ...options, onProgress: (e) => e.phase === 'done' && (hashed = e.filesHashed) });
    expect([strip(next), hashed]).toEqual([strip(deferred), 0]);
  });

  it('a watching caller that names the entries its events were about: a file of a changed directory no event named is taken without an lstat', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'a/x': 'x', 'a/y': 'y', 'a/b/z': 'z', w: 'w' });
    let state: CacheState | null = null;
    const known = (dirs: string[], named: string[] | null): KnownUnchanged => ({
      dir: (rel) => !dirs.includes(rel),
      everyDir: () => dirs.length === 0,
      ...(named !== null ? { entry: (rel: string) => !named.some((n) => rel === n || rel.startsWith(`${n}/`)) } : {}),
      cacheState: state,
      onCacheState: (s) => (state = s),
    });
    const options = { cacheDir, racyMarginMs: MARGIN, withContentDigest: true };
    const bytesOf = (r: ScanResult): Record<string, number> => Object.fromEntries(r.files.map((f) => [f.path, f.bytes]));
    scanTreeSync(root, options);
    await new Promise((r) => setTimeout(r, 2 * MARGIN)); // nothing racy
    scanTreeSync(root, { ...options, knownUnchanged: known([], []) });
    // Both files of `a` grow; the "watcher" names only x (y's growth is what no real event would hide: taken on its word).
    fs.appendFileSync(path.join(root, 'a/x'), '+1');
    fs.appendFileSync(path.join(root, 'a/y'), '+1');
    await new Promise((r) => setTimeout(r, 2 * MARGIN));
    expect(bytesOf(scanTreeSync(root, { ...options, knownUnchanged: known(['a'], ['a/x']) }))).toMatchObject({ 'a/x': 3, 'a/y': 1 });
    // The directory itself named (renamed or replaced): nothing below it is taken on trust.
    fs.appendFileSync(path.join(root, 'a/b/z'), '+1');
    await new Promise((r) => setTimeout(r, 2 * MARGIN));
    expect(bytesOf(scanTreeSync(root, { ...options, knownUnchanged: known(['a', 'a/b'], ['a/b']) }))).toMatchObject({ 'a/y': 1, 'a/b/z': 3 });
    // No names known (an event named none): every row of a changed directory is looked at.
    expect(bytesOf(scanTreeSync(root, { ...options, knownUnchanged: known(['a'], null) }))).toMatchObject({ 'a/x': 3, 'a/y': 3 });
  });

  it('a watching caller takes a racy row it vouches for as the read that made it, and reads it again once its entry is named', () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'a/x': 'x', 'a/y': 'y', w: 'w' });
    let state: CacheState | null = null;
    const known = (dirs: string[], named: string[] | null): KnownUnchanged => ({
      dir: (rel) => !dirs.includes(rel),
      everyDir: () => dirs.length === 0,
      ...(named !== null ? { entry: (rel: string) => !named.includes(rel) } : {}),
      cacheState: state,
      onCacheState: (s) => (state = s),
    });
    const options = { cacheDir, racyMarginMs: 60_000, withContentDigest: true }; // every row written in this test stays racy
    const truth = () => strip(scanTreeSync(root, { cache: false, withContentDigest: true }));
    const scan = (dirs: string[], named: string[] | null): { result: ScanResult; hashed: number } => {
      let hashed = -1;
      const result = scanTreeSync(root, { ...options, knownUnchanged: known(dirs, named), onProgress: (e) => e.phase === 'done' && (hashed = e.filesHashed) });
      return { result, hashed };
    };
    scanTreeSync(root, options);
    scan([], []);
    fs.appendFileSync(path.join(root, 'a/x'), '+1');
    expect(scan(['a'], ['a/x']).hashed).toBe(1); // read, racy
    // No event since that read: the racy row stands for the file (no event means no write since).
    const still = scan([], []);
    expect([still.hashed, strip(still.result)]).toEqual([0, truth()]);
    // A same-size rewrite (its stat may not move: the racy case): the event names it, so it is read.
    fs.writeFileSync(path.join(root, 'a/x'), 'x+2');
    const named = scan(['a'], ['a/x']);
    expect([named.hashed, strip(named.result)]).toEqual([1, truth()]);
    // A directory with events and no names: its racy rows are all read again.
    expect(scan(['a'], null).hashed).toBeGreaterThanOrEqual(1);
  });

  it('a watching caller scanning after files changed in place builds only their entries, and takes none once another process saved the cache', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'a/f0': 'zero', 'a/b/f1': 'one', 'c/f2': 'two', f3: 'three' });
    fs.symlinkSync('a/f0', path.join(root, 'link'));
    // A watcher that knows exactly which directories were written since the last scan.
    let state: CacheState | null = null;
    let changed = new Set<string>();
    const known = (): KnownUnchanged => {
      const dirs = changed;
      changed = new Set();
      return { dir: (rel) => !dirs.has(rel), everyDir: () => dirs.size === 0, cacheState: state, onCacheState: (s) => (state = s) };
    };
    const options = { cacheDir, racyMarginMs: MARGIN, withContentDigest: true };
    const scan = (): ScanResult => scanTreeSync(root, { ...options, knownUnchanged: known() });
    const truth = () => strip(scanTreeSync(root, { cache: false, withContentDigest: true }));
    const entry = (r: ScanResult, rel: string) => r.files.find((f) => f.path === rel);
    scanTreeSync(root, options);
    await new Promise((r) => setTimeout(r, 2 * MARGIN)); // nothing racy
    const first = scan();
    fs.appendFileSync(path.join(root, 'a/b/f1'), ' more');
    changed.add('a/b');
    await new Promise((r) => setTimeout(r, 2 * MARGIN));
    const before = builtPatched.count;
    const second = scan();
    expect(builtPatched.count).toBe(before + 1);
    expect(strip(second)).toEqual(truth());
    expect(entry(second, 'a/f0')).toBe(entry(first, 'a/f0')); // taken, not built anew
    expect(entry(second, 'c/f2')).toBe(entry(first, 'c/f2'));
    expect(entry(second, 'a/b/f1')).not.toEqual(entry(first, 'a/b/f1'));
    expect(second.files).not.toBe(first.files); // the array is the caller's
    // Another process saves the cache (a rename: another inode): this process's rows and entries are dropped.
    fs.appendFileSync(path.join(root, 'c/f2'), ' more');
    changed.add('c');
    const file = cacheFileIn(cacheDir);
    fs.copyFileSync(file, `${file}.tmp`);
    fs.renameSync(`${file}.tmp`, file);
    await new Promise((r) => setTimeout(r, 2 * MARGIN));
    const third = scan();
    expect(builtPatched.count).toBe(before + 1);
    expect(strip(third)).toEqual(truth());
    expect(entry(third, 'a/f0')).not.toBe(entry(second, 'a/f0'));
  });
});
