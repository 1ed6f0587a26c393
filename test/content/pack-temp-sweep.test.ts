/**
 * A pack write killed with SIGKILL mid-write leaves its temp file in `packs/`, under a name no pack
 * listing sees (each pack has a new name); content gc removes it once its writer is dead and it is
 * STALE_TEMP_AGE_MS old, and never a younger one or one whose writer is alive (it may still be
 * writing), nor in a dry run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { STALE_TEMP_AGE_MS } from '../../src/core/atomic-write.js';
import { ContentStore } from '../../src/content/index.js';
import { REPO_ROOT } from '../support/cli.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';
import { killUntilInside, killWhenNameAppears } from '../support/kill-window.js';
import { trackedDirs } from '../session/helpers.js';

vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS });

const { dir: tempDir } = trackedDirs();
const STORE_URL = new URL(`file://${path.join(REPO_ROOT, 'dist', 'content', 'store.js')}`).href;
/** Tries, each killed at its temp file's appearance: one is enough where the kill follows within ~25 ms. */
const KILLS = 10;

/**
 * A fresh process stores two objects of 24 MB of random bytes (they do not compress, so the pack
 * is ~48 MB: a write that takes ~25 ms on a tmpfs, longer on a disk, from its temp file's creation
 * to its rename).
 */
const WRITER = `
const { createHash, randomBytes } = await import('node:crypto');
const { ContentStore } = await import(process.env.STORE_URL);
const items = [0, 1].map(() => { const bytes = randomBytes(24 << 20); return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes }; });
new ContentStore(process.env.STORE_DIR).put(items);
`;

function packTemps(packs: string): string[] {
  return (fs.existsSync(packs) ? fs.readdirSync(packs) : []).filter((n) => n.includes('.pack.cairn-tmp-'));
}

function age(file: string, ms: number): void {
  const when = (Date.now() - ms) / 1000;
  fs.utimesSync(file, when, when);
}

describe('pack temp files', () => {
  it('a pack write killed mid-write leaves one that content gc removes once its writer is dead and it is old', async () => {
    const dir = path.join(tempDir(), 'content');
    const packs = path.join(dir, 'packs');
    // Made here (as the store makes it) so that its entries can be watched from the first.
    fs.mkdirSync(packs, { recursive: true, mode: 0o700 });
    // Kill when the pack's temp file appears (support/kill-window.ts), until one kill leaves it, at
    // most KILLS times: a whole pack was too late (removed, so that the next try starts alike).
    let left: string[] = [];
    await killUntilInside(async () => {
      await killWhenNameAppears(process.execPath, ['--input-type=module', '-e', WRITER], { env: { ...process.env, STORE_URL, STORE_DIR: dir } }, packs, (n) => n.includes('.pack.cairn-tmp-'));
      left = packTemps(packs);
      if (left.length > 0) return 'inside';
      const whole = fs.readdirSync(packs).filter((n) => n.endsWith('.pack'));
      if (whole.length === 0) return 'unclear';
      for (const n of whole) fs.rmSync(path.join(packs, n));
      return 'late';
    }, KILLS);
    expect(left).toHaveLength(1);
    const killed = path.join(packs, left[0]!);
    // One whose writer is alive (this process) stays, however old: it may still be writing.
    const alive = path.join(packs, `.0123-live.pack.cairn-tmp-${process.pid}-0123456789ab`);
    fs.writeFileSync(alive, 'a live writer');
    age(alive, 2 * STALE_TEMP_AGE_MS);
    // Young, the killed writer's temp stays: its writer might be on another host.
    new ContentStore(dir).gc(new Set(), { graceMs: 0 });
    expect(fs.existsSync(killed)).toBe(true);
    // Old, a dry run leaves it; a real one removes it, and only it.
    age(killed, 2 * STALE_TEMP_AGE_MS);
    new ContentStore(dir).gc(new Set(), { graceMs: 0, dryRun: true });
    expect(fs.existsSync(killed)).toBe(true);
    new ContentStore(dir).gc(new Set(), { graceMs: 0 });
    expect(packTemps(packs)).toEqual([path.basename(alive)]);
  });
});
