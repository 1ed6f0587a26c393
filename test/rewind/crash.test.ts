/**
 * kill -9 in the middle of a restore (when its writes reach a given directory), then the next
 * restore finishes the job (or `--undo` reverts it) and says so: the tree ends exactly at pre (or
 * post), never a silent mix.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { killUntilInside, killWhenNameAppears } from '../support/kill-window.js';
import { trackedDirs, useTempCacheHome, write } from '../session/helpers.js';
import { CLI, cairn, post, pre, shapeOf } from './helpers.js';

useTempCacheHome();
const { dir: tempDir } = trackedDirs();

const FILES = 400;
/** The tree's directories d0 … d19, in the order a restore writes them (its ops go in path order). */
const DIRS_IN_ORDER = Array.from({ length: 20 }, (_, k) => `d${k}`).sort();
const KILLS = 16;

function pendingRecords(root: string): number {
  const dir = path.join(root, '.cairn', 'restores');
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir).filter((n) => /^\d{6}\.json$/.test(n)).filter((n) => (JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as { state: string }).state === 'pending').length;
}

function setup(): { root: string; preShape: Record<string, string>; postShape: Record<string, string> } {
  const root = tempDir();
  for (let i = 0; i < FILES; i++) write(root, `d${i % 20}/f${i}.txt`, `original ${i}\n`.repeat(3));
  const dir = pre(root);
  const preShape = shapeOf(root);
  for (let i = 0; i < FILES; i++) {
    if (i % 3 === 0) fs.rmSync(path.join(root, `d${i % 20}/f${i}.txt`));
    else write(root, `d${i % 20}/f${i}.txt`, `agent ${i}\n`);
  }
  for (let i = 0; i < FILES / 4; i++) write(root, `new${i % 7}/n${i}.txt`, `new ${i}\n`);
  post(root, dir);
  return { root, preShape, postShape: shapeOf(root) };
}

describe('a restore killed with SIGKILL', () => {
  it.each([
    ['the next restore finishes it', 'restore', 10],
    ['--undo finishes and reverts it', 'undo', 5],
  ] as const)('%s', async (_label, next, cutAt) => {
    const { root, preShape, postShape } = setup();
    // Kill when the restore's first temp file appears in directory `cutAt` of the write order
    // (support/kill-window.ts), its deletions and the directories before made and the rest not,
    // until one kill leaves a pending record, at most KILLS times: one that let the restore finish
    // (undone, to try again) was too late.
    const sawPending = await killUntilInside(async () => {
      const cut = path.join(root, DIRS_IN_ORDER[cutAt]!);
      await killWhenNameAppears(process.execPath, [CLI, 'session', 'restore', '--root', root], {}, cut, (n) => n.startsWith('.cairn-restore-'));
      if (pendingRecords(root) > 0) return 'inside';
      if (JSON.stringify(shapeOf(root)) !== JSON.stringify(preShape)) return 'unclear';
      // Finished: undone, so that the next kill has a restore to interrupt.
      expect(cairn(root, ['session', 'restore', '--undo']).status).toBe(0);
      return 'late';
    }, KILLS);
    expect(sawPending).toBe(true);
    const pendingBefore = pendingRecords(root) > 0;
    const r = next === 'restore' ? cairn(root, ['session', 'restore']) : cairn(root, ['session', 'restore', '--undo']);
    if (pendingBefore) expect(r.stderr).toMatch(/interrupted/);
    expect(pendingRecords(root)).toBe(0);
    if (next === 'restore') {
      expect(r.status).toBe(0);
      expect(shapeOf(root)).toEqual(preShape);
    } else {
      expect(r.status).toBe(0);
      expect(shapeOf(root)).toEqual(postShape);
    }
    for (const d of fs.readdirSync(root)) {
      if (d === '.cairn') continue;
      const abs = path.join(root, d);
      if (fs.statSync(abs).isDirectory()) expect(fs.readdirSync(abs).filter((n) => n.startsWith('.cairn-restore-'))).toEqual([]);
    }
  });
});
