// Several processes snapshotting one tree at once share its stat cache, its memos and their
// patches (memo-patch.ts): whichever writes last, every output is the tree's, no run raises a
// notice, and the files they leave serve the next run right.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { isTempName } from '../../src/core/atomic-write.js';
import { CLI } from '../support/cli.js';
import { cleanupTempDirs, gridTree, MARGIN, sleep } from './helpers.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

afterAll(cleanupTempDirs);

const env = { ...process.env, CI: '1' };

function snapshot(root: string, cacheDir: string, out: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'snapshot', '--root', root, '--cache-dir', cacheDir, '-o', out], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.once('exit', (status) => resolve({ status, stderr }));
  });
}

describe('concurrent snapshots of one tree', () => {
  it.runIf(fs.existsSync(CLI))('four processes at once, round after round of edits: every output is the tree\'s, no notice, the next run right', async () => {
    const { root, cacheDir, outDir } = gridTree(24, 80);
    await sleep(MARGIN + 20);
    const truth = (): string => {
      const r = spawnSync(process.execPath, [CLI, 'snapshot', '--root', root, '--no-cache'], { encoding: 'utf8', env });
      expect(r.status).toBe(0);
      return r.stdout;
    };
    // Primed: the cache, both memos; then a few edits at a time keep the memos in patches.
    expect((await snapshot(root, cacheDir, path.join(outDir, 'prime.json'))).status).toBe(0);
    for (let round = 0; round < 4; round++) {
      for (let k = 0; k < 5; k++) fs.appendFileSync(path.join(root, `d${(round * 5 + k) % 24}`, `f${(round * 7 + k) % 80}.txt`), `edit ${round}\n`);
      if (round === 2) fs.writeFileSync(path.join(root, 'd3', 'new.txt'), 'a new file\n');
      await sleep(MARGIN + 20);
      const expected = truth();
      const runs = await Promise.all([0, 1, 2, 3].map((i) => snapshot(root, cacheDir, path.join(outDir, `r${round}-${i}.json`))));
      for (const [i, r] of runs.entries()) {
        expect(r.status, `round ${round} process ${i}`).toBe(0);
        expect(r.stderr).not.toContain('notice');
        expect(fs.readFileSync(path.join(outDir, `r${round}-${i}.json`), 'utf8'), `round ${round} process ${i}`).toBe(expected);
      }
    }
    // What they left serves a run that comes after: right, quiet, and no temp file behind.
    fs.appendFileSync(path.join(root, 'd0', 'f0.txt'), 'after\n');
    await sleep(MARGIN + 20);
    const last = await snapshot(root, cacheDir, path.join(outDir, 'last.json'));
    expect(last.status).toBe(0);
    expect(last.stderr).not.toContain('notice');
    expect(fs.readFileSync(path.join(outDir, 'last.json'), 'utf8')).toBe(truth());
    expect(fs.readdirSync(cacheDir).filter(isTempName)).toEqual([]);
    expect(fs.readdirSync(cacheDir).some((n) => n.endsWith('.patch'))).toBe(true); // the patches were in play
  }, WHOLE_PROCESS_BUDGET_MS);
});
