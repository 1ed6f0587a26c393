/**
 * Hostile trees, stage notes: a file or a link where the per-task lock goes is refused at once
 * (it used to wait the whole timeout and say "lock timeout"), and a swapper exchanging the
 * snapshot directory with a link while notes are written never puts a note, a temp file or a
 * lock outside the root.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RACE_FREE } from '../../src/core/contained-dir.js';
import { writeStageSnapshot } from '../../src/stage/index.js';
import { stageWrite } from '../stage/support.js';
import { expectOutsideIntact, LINK_KINDS, makeOutside, plantLink, startSwapper, type Outside, printFigures } from './support.js';

afterAll(() => printFigures('stage'));

let tmp: string;
let root: string;
let outside: Outside;
beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-hostile-stage-')));
  root = path.join(tmp, 'root');
  fs.mkdirSync(path.join(root, 'datarim', 'snapshots'), { recursive: true });
  outside = makeOutside(path.join(tmp, 'outside'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const note = { task: 'TUNE-0254', stage: 'plan', command: '/dr-plan', capturedBy: 'agent', recommendedNext: '/dr-do' };

describe('hostile tree: stage write', () => {
  it('a file or a link of any kind at the lock path is a coded error at once, not a lock timeout (issue 20, item 6)', () => {
    const lock = path.join(root, 'datarim', 'snapshots', '.lock.TUNE-0254');
    const cases: Array<() => void> = [() => fs.writeFileSync(lock, 'x'), ...LINK_KINDS.map((kind) => () => plantLink(lock, kind, outside))];
    for (const plant of cases) {
      fs.rmSync(lock, { recursive: true, force: true });
      plant();
      // A 60 s lock timeout: only an immediate answer passes within the spawn's 20 s.
      const r = stageWrite({ root }, tmp, { DR_SNAPSHOT_LOCK_TIMEOUT: '60' });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain('is not a cairn lock; remove it');
    }
    expectOutsideIntact(outside);
  });

  it('notes, temps and locks stay inside while the snapshot directory is exchanged with a link (item 4)', async () => {
    const dir = path.join(root, 'datarim', 'snapshots');
    const swapper = await startSwapper(dir, path.join(root, 'datarim', 'decoy'), outside.dir);
    const ROUNDS = 300;
    let done = 0;
    let refused = 0;
    try {
      // Bounded by rounds, not time: on a loaded machine the swapper can win every one of the
      // first ROUNDS, so go on (at most ten times as many) until one write got through.
      for (let round = 0; round < ROUNDS || (done === 0 && round < 10 * ROUNDS); round++) {
        try {
          await writeStageSnapshot({ root, ...note, body: `round ${round}\n`, lockTimeoutSeconds: 5, env: {} });
          done++;
        } catch (e) {
          expect((e as { code?: string }).code, String(e)).toMatch(/^ERR_CONTAINMENT$/);
          refused++;
        }
      }
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(0);
    }
    expect(done + refused).toBeGreaterThanOrEqual(ROUNDS);
    expect(done).toBeGreaterThan(0);
    if (RACE_FREE) expectOutsideIntact(outside);
  });
});
