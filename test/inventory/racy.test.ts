// The racy-timestamp rule: a short margin on the root's own local file system, the long one
// elsewhere (other file systems, another device inside the tree), a given margin everywhere.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { earlierRacyFrom, isRacy, RACY_MARGIN_LOCAL_MS, RACY_MARGIN_MS, racyFromNow, racyMarginsFor } from '../../src/inventory/rules/racy.js';
import { scanTreeSync, type ScanProgress } from '../../src/inventory/index.js';
import { cleanupTempDirs, sleep, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

describe('racy margins', () => {
  it('are short on a local file system stamped by the kernel clock (the test directory), long on procfs, and as given when given', () => {
    const dir = tempDir();
    const dev = fs.statSync(dir).dev;
    expect(racyMarginsFor(dir, undefined)).toEqual({ nearMs: RACY_MARGIN_LOCAL_MS, farMs: RACY_MARGIN_MS, dev });
    expect(racyMarginsFor('/proc', undefined)).toMatchObject({ nearMs: RACY_MARGIN_MS, farMs: RACY_MARGIN_MS });
    expect(racyMarginsFor(dir, 50)).toEqual({ nearMs: 50, farMs: 50, dev });
  });

  it('judge an entry on another device than the root by the long margin', () => {
    const from = racyFromNow({ nearMs: 100, farMs: 2000, dev: 7 }, 10_000);
    expect(isRacy(from, 9_899, 9_899, 7)).toBe(false);
    expect(isRacy(from, 9_900, 0, 7)).toBe(true); // at the instant itself: racy
    expect(isRacy(from, 0, 9_950, 7)).toBe(true); // ctime counts too
    expect(isRacy(from, 9_899, 9_899, 8)).toBe(true);
    expect(isRacy(from, 7_999, 7_999, 8)).toBe(false);
  });

  it('take the earlier instants of two looks (reads made during the check are older than the walk)', () => {
    const check = racyFromNow({ nearMs: 100, farMs: 2000, dev: 1 }, 5_000);
    const walk = racyFromNow({ nearMs: 100, farMs: 2000, dev: 1 }, 5_300);
    expect(earlierRacyFrom(walk, check)).toEqual(check);
    expect(earlierRacyFrom(walk, undefined)).toEqual(walk);
  });

  it('by default, files written a few hundred ms before a scan are trusted by the next one (the 2 s margin re-read them); a file stamped in the future is always read again', async () => {
    const root = tempDir();
    const cacheDir = tempDir('cairn-cache-');
    writeTree(root, { 'settled.txt': 'a', 'future.txt': 'b' });
    await sleep(RACY_MARGIN_LOCAL_MS * 3);
    const scan = () => {
      const seen: ScanProgress[] = [];
      scanTreeSync(root, { cacheDir, onProgress: (p) => seen.push(p) });
      return seen.at(-1)!;
    };
    expect(scan()).toMatchObject({ filesHashed: 2 });
    expect(scan()).toMatchObject({ filesHashed: 0, filesCached: 2 });
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(root, 'future.txt'), later, later);
    expect(scan()).toMatchObject({ filesHashed: 1 });
    expect(scan()).toMatchObject({ filesHashed: 1, filesCached: 1 });
  });
});
