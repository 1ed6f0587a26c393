/**
 * A put never loses an object to a prune running at the same time (inventory-store.ts, "Put and
 * prune"): one process stores inventories that share most directories with the last one and then
 * lets each go, while another prunes with no grace period at all, over and over. Every inventory
 * must be whole between its put and its ref. Bounded by work (rounds), not time; uses the built
 * library (`npm run build` first).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';
import { trackedDirs } from './helpers.js';

vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS });

const { dir: tempDir } = trackedDirs();
const STORE_URL = new URL(`file://${path.join(REPO_ROOT, 'dist', 'session', 'inventory-store', 'inventory-store.js')}`).href;

const WRITER = `
import * as fs from 'node:fs';
import * as path from 'node:path';
const { InventoryStore } = await import(process.env.STORE_URL);
const [dir, work, rounds] = [process.env.STORE_DIR, process.env.WORK_DIR, Number(process.env.ROUNDS)];
const store = new InventoryStore(dir);
const sha = (s) => s.padEnd(64, '0').slice(0, 64);
let broken = 0, reused = 0;
for (let i = 0; i < rounds; i++) {
  // 40 directories of 10 files; one file changes each round, so 39 directories are the last round's.
  const entries = [];
  for (let d = 0; d < 40; d++) for (let f = 0; f < 10; f++) {
    const v = d === i % 40 && f === 0 ? String(i) : 'a';
    entries.push({ path: 'd' + String(d).padStart(2, '0') + '/f' + f, bytes: v.length, sha256: sha(v.replace(/[^0-9a-f]/g, 'a')), mode: '0644', kind: 'file' });
  }
  const { digest, objectsWritten } = store.put(entries);
  if (objectsWritten < 41) reused++;
  try {
    if (store.get(digest).length !== 400) broken++;
  } catch {
    broken++; // an object of this inventory was deleted under the put
  }
  // Let the inventory go: a ref (which takes the put's mark back), then its snapshot file removed.
  const snapshot = path.join(work, 'snapshot-' + i + '.json');
  fs.writeFileSync(snapshot, JSON.stringify({ inventory: { digest } }));
  store.addRef(snapshot, digest);
  fs.rmSync(snapshot);
}
fs.writeFileSync(path.join(work, 'stop'), '');
process.stdout.write(JSON.stringify({ broken, reused }));
`;

const PRUNER = `
import * as fs from 'node:fs';
import * as path from 'node:path';
const { InventoryStore } = await import(process.env.STORE_URL);
const store = new InventoryStore(process.env.STORE_DIR);
let prunes = 0, deleted = 0;
// Until the writer is done (and at most 100,000 prunes): work-bound, not time-bound.
while (!fs.existsSync(path.join(process.env.WORK_DIR, 'stop')) && prunes < 100000) {
  deleted += store.prune({ graceMs: 0 }).deleted;
  prunes++;
}
process.stdout.write(JSON.stringify({ prunes, deleted }));
`;

function run(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

describe('inventory put against a concurrent prune', () => {
  it('keeps every inventory whole from its put to its ref while another process prunes with no grace period', async () => {
    const dir = path.join(tempDir(), 'inventories');
    const work = tempDir();
    const env = { STORE_URL, STORE_DIR: dir, WORK_DIR: work, ROUNDS: '150' };
    const [writer, pruner] = await Promise.all([run(WRITER, env), run(PRUNER, env)]);
    expect(writer.err).toBe('');
    expect(pruner.err).toBe('');
    expect(writer.code).toBe(0);
    expect(pruner.code).toBe(0);
    const w = JSON.parse(writer.out) as { broken: number; reused: number };
    const p = JSON.parse(pruner.out) as { prunes: number; deleted: number };
    expect(w.broken).toBe(0);
    expect(w.reused).toBeGreaterThan(0); // puts did reuse objects a prune could have taken
    expect(p.prunes).toBeGreaterThan(1); // the prunes ran while the writer worked …
    expect(p.deleted).toBeGreaterThan(0); // … and deleted the inventories let go
    expect(fs.readdirSync(path.join(dir, 'pending'))).toEqual([]); // every mark was taken back
    expect(fs.existsSync(path.join(dir, 'pruning'))).toBe(false);
  });
});
