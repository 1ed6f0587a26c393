// A save of the stat cache removes what a writer killed mid-write left of the cache's family,
// but lists the (shared) cache directory at most once a STALE_TEMP_AGE_MS: the family's `.swept`
// stamp says when it last did.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STALE_TEMP_AGE_MS } from '../../src/core/atomic-write.js';
import { sweptStampPath } from '../../src/inventory/cache/artefacts.js';
import { FileTable, saveCache, type StatCacheData } from '../../src/inventory/cache/stat-cache.js';
import { cleanupTempDirs, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

const ROOT = '/nowhere/root';
const KEY = 'sweep-test';
const empty = (): StatCacheData => ({ files: new FileTable(4), dirs: new Map() });

/** The pid of a process that has exited (its temps are a dead writer's). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  return r.pid;
}

/** A temp of `file` as a writer with `pid` names it, dated `ageMs` ago. */
function leftTemp(file: string, pid: number, ageMs: number): string {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.cairn-tmp-${pid}-0123456789ab`);
  fs.writeFileSync(temp, 'half a cache');
  const when = (Date.now() - ageMs) / 1000;
  fs.utimesSync(temp, when, when);
  return temp;
}

function age(file: string, ms: number): void {
  const when = (Date.now() - ms) / 1000;
  fs.utimesSync(file, when, when);
}

describe('stale temps of the stat cache', () => {
  it('are removed by the first save, which stamps the family', () => {
    const file = path.join(tempDir('cairn-sweep-'), 'a.cache');
    const temp = leftTemp(file, deadPid(), 2 * STALE_TEMP_AGE_MS);
    expect(saveCache(file, empty(), ROOT, KEY)).toBeUndefined();
    expect(fs.existsSync(temp)).toBe(false);
    expect(fs.lstatSync(sweptStampPath(file)).isFile()).toBe(true);
  });

  it('are left for a later save while the last sweep is recent, then removed', () => {
    const file = path.join(tempDir('cairn-sweep-'), 'a.cache');
    expect(saveCache(file, empty(), ROOT, KEY)).toBeUndefined(); // sweeps and stamps
    const temp = leftTemp(file, deadPid(), 2 * STALE_TEMP_AGE_MS);
    expect(saveCache(file, empty(), ROOT, KEY)).toBeUndefined();
    expect(fs.existsSync(temp)).toBe(true); // the directory was not listed again
    age(sweptStampPath(file), STALE_TEMP_AGE_MS + 1000);
    expect(saveCache(file, empty(), ROOT, KEY)).toBeUndefined();
    expect(fs.existsSync(temp)).toBe(false);
  });

  it('sweep when the stamp is dated ahead (a clock set back)', () => {
    const file = path.join(tempDir('cairn-sweep-'), 'a.cache');
    expect(saveCache(file, empty(), ROOT, KEY)).toBeUndefined();
    age(sweptStampPath(file), -10 * STALE_TEMP_AGE_MS);
    const temp = leftTemp(file, deadPid(), 2 * STALE_TEMP_AGE_MS);
    expect(saveCache(file, empty(), ROOT, KEY)).toBeUndefined();
    expect(fs.existsSync(temp)).toBe(false);
  });

  it('keep a young temp, and one whose writer lives, whenever they sweep', () => {
    const file = path.join(tempDir('cairn-sweep-'), 'a.cache');
    const young = leftTemp(file, deadPid(), 0);
    const live = leftTemp(file, process.ppid, 2 * STALE_TEMP_AGE_MS);
    expect(saveCache(file, empty(), ROOT, KEY)).toBeUndefined();
    expect([fs.existsSync(young), fs.existsSync(live)]).toEqual([true, true]);
  });

  it('never follow a link planted at the stamp', () => {
    const dir = tempDir('cairn-sweep-');
    const file = path.join(dir, 'a.cache');
    const target = path.join(tempDir('cairn-sweep-target-'), 'victim');
    fs.writeFileSync(target, 'keep');
    age(target, 10 * STALE_TEMP_AGE_MS);
    const before = fs.statSync(target).mtimeMs;
    fs.symlinkSync(target, sweptStampPath(file));
    expect(saveCache(file, empty(), ROOT, KEY)).toBeUndefined();
    expect(fs.readFileSync(target, 'utf8')).toBe('keep');
    expect(fs.statSync(target).mtimeMs).toBe(before);
  });
});
