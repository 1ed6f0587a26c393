/**
 * A pack-table rewrite killed with SIGKILL mid-write leaves its temp file in `content/`; the next
 * rewrite removes it once its writer is dead and it is STALE_TEMP_AGE_MS old, and never a younger
 * one or one whose writer is alive (it may still be writing).
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { STALE_TEMP_AGE_MS } from '../../src/core/atomic-write.js';
import { ContentStore, sha256Of } from '../../src/content/index.js';
import { PACK_TABLE_FILE } from '../../src/content/pack-table.js';
import { REPO_ROOT } from '../support/cli.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';
import { killUntilInside, killWhenNameAppears } from '../support/kill-window.js';
import { trackedDirs } from '../session/helpers.js';

vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS });

const { dir: tempDir } = trackedDirs();
const STORE_URL = new URL(`file://${path.join(REPO_ROOT, 'dist', 'content', 'store.js')}`).href;
/** Objects the table lists: ~48 MB of table, so that writing it is a window a kill can land in (~25 ms on a tmpfs). */
const PACKS = 20;
const OBJECTS_PER_PACK = 50_000;
/** Packs the table does not list yet: enough that a fresh process rewrites it. */
const NEW_PACKS = 16;
/** Tries, each killed at the table's temp file's appearance: one is enough where the kill follows within ~25 ms. */
const KILLS = 10;

/**
 * A fresh process looks an object up: it reads the table and the unlisted packs' headers, and
 * rewrites the table.
 */
const REWRITER = `
const { ContentStore } = await import(process.env.STORE_URL);
new ContentStore(process.env.STORE_DIR).has('0'.repeat(64));
`;

const REWRITER_ARGS = ['--input-type=module', '-e', REWRITER];

function rewriterOptions(dir: string): SpawnOptions {
  return { env: { ...process.env, STORE_URL, STORE_DIR: dir } };
}

/** Runs a rewrite to its end. */
function rewrite(dir: string): Promise<number | null> {
  return new Promise((resolve) => spawn(process.execPath, REWRITER_ARGS, { ...rewriterOptions(dir), stdio: 'ignore' }).on('exit', (code) => resolve(code)));
}

function tableTemps(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.startsWith(`.${PACK_TABLE_FILE}.cairn-tmp-`));
}

function age(file: string, ms: number): void {
  const when = (Date.now() - ms) / 1000;
  fs.utimesSync(file, when, when);
}

function put(dir: string, pack: number, objects: number, tag: string): void {
  const items = Array.from({ length: objects }, (_, k) => {
    const bytes = Buffer.from(`${tag} pack ${pack} object ${k}\n`);
    return { sha256: sha256Of(bytes), bytes };
  });
  new ContentStore(dir).put(items);
}

describe('pack table temp files', () => {
  it('a rewrite killed mid-write leaves one that the next rewrite removes once its writer is dead and it is old', async () => {
    const dir = path.join(tempDir(), 'content');
    for (let p = 0; p < PACKS; p++) put(dir, p, OBJECTS_PER_PACK, 'listed');
    expect(await rewrite(dir)).toBe(0);
    for (let p = 0; p < NEW_PACKS; p++) put(dir, p, 1, 'unlisted');
    const table = path.join(dir, PACK_TABLE_FILE);
    const before = fs.readFileSync(table);
    // Kill when the table's temp file appears (support/kill-window.ts), until one kill leaves it,
    // at most KILLS times: one that found a new table was too late (the old one is put back, so
    // that the next rewriter has the same work).
    let left: string[] = [];
    await killUntilInside(async () => {
      await killWhenNameAppears(process.execPath, REWRITER_ARGS, rewriterOptions(dir), dir, (n) => n.startsWith(`.${PACK_TABLE_FILE}.cairn-tmp-`));
      left = tableTemps(dir);
      if (left.length > 0) return 'inside';
      if (fs.readFileSync(table).equals(before)) return 'unclear';
      fs.writeFileSync(table, before);
      return 'late';
    }, KILLS);
    expect(left).toHaveLength(1);
    const killed = path.join(dir, left[0]!);
    // One whose writer is alive (this process) stays, however old: it may still be writing.
    const alive = path.join(dir, `.${PACK_TABLE_FILE}.cairn-tmp-${process.pid}-0123456789ab`);
    fs.writeFileSync(alive, 'a live writer');
    age(alive, 2 * STALE_TEMP_AGE_MS);
    // Young, the killed writer's temp stays too: its writer might be on another host.
    expect(await rewrite(dir)).toBe(0);
    expect(fs.readFileSync(table).equals(before)).toBe(false);
    expect(fs.existsSync(killed)).toBe(true);
    // Old, it goes with the next rewrite (the old table put back, so that there is one to make).
    fs.writeFileSync(table, before);
    age(killed, 2 * STALE_TEMP_AGE_MS);
    expect(await rewrite(dir)).toBe(0);
    expect(fs.readFileSync(table).equals(before)).toBe(false);
    expect(tableTemps(dir)).toEqual([path.basename(alive)]);
  });
});
