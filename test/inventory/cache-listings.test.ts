// Directory listings as a loaded cache serves them: decoded lazily from one NUL-joined blob,
// whatever mix of empty, one-name and many-name directories (and non-ASCII names) it holds,
// and written back byte for byte whether the directory map was only read or changed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { FileTable, loadCache, saveCache, type CachedDir, type DirStatRow, type StatCacheData } from '../../src/inventory/cache/stat-cache.js';
import { cleanupTempDirs, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

const ROOT = '/nowhere/root';
const KEY = 'listings-test';

// Whole characters (a regex class would split the emoji's surrogate pair: names are valid UTF-8).
const nameArb = fc.array(fc.constantFrom('a', 'b', 'z', 'é', '😀', '.', '-'), { minLength: 1, maxLength: 5 }).map((cs) => cs.join(''));
const listingArb = fc.uniqueArray(nameArb, { maxLength: 6 }).map((names) => ({ names: names.sort(), types: names.map((n) => (n.length % 2 === 0 ? 'd' : 'f')).join('') }));
const dirsArb = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z/]{0,6}$/), listingArb), { selector: ([rel]) => rel, maxLength: 25 });

function dataOf(dirs: readonly [string, { names: string[]; types: string }][]): StatCacheData {
  const map = new Map<string, CachedDir>();
  dirs.forEach(([rel, listing], i) => map.set(rel, { stat: [i + 0.5, i + 1, 1000 + i, 7] as DirStatRow, listing }));
  return { files: new FileTable(4), dirs: map };
}

function plain(data: StatCacheData): [string, number[], string[], string][] {
  return [...data.dirs].map(([rel, d]) => [rel, [...d.stat], d.listing.names, d.listing.types]);
}

describe('cache listings', () => {
  it('load every listing as saved, and save them back unchanged, untouched or after the map changed', () => {
    const dir = tempDir('cairn-listings-');
    let round = 0;
    fc.assert(
      fc.property(dirsArb, fc.nat(), fc.boolean(), (dirs, pick, touch) => {
        const file = path.join(dir, `c${round++}.cache`);
        const original = dataOf(dirs);
        expect(saveCache(file, original, ROOT, KEY)).toBeUndefined();
        const first = loadCache(file, ROOT, KEY);
        expect(first.warning).toBeUndefined();
        // Look up one listing first (decodes it alone), then all of them.
        if (dirs.length > 0) expect(first.data.dirs.get(dirs[pick % dirs.length]![0])?.listing).toEqual(dirs[pick % dirs.length]![1]);
        expect(plain(first.data)).toEqual(plain(original));
        if (touch && dirs.length > 0) first.data.dirs.set(dirs[0]![0], { stat: [1, 2, 3, 4], listing: dirs[0]![1] });
        const again = path.join(dir, `c${round++}.cache`);
        expect(saveCache(again, first.data, ROOT, KEY)).toBeUndefined();
        const second = loadCache(again, ROOT, KEY);
        expect(second.warning).toBeUndefined();
        const expected = plain(original);
        if (touch && dirs.length > 0) expected[0]![1] = [1, 2, 3, 4];
        expect(plain(second.data)).toEqual(expected);
        if (!touch) expect(fs.readFileSync(again)).toEqual(fs.readFileSync(file));
      }),
      { numRuns: 150 },
    );
  });
});
