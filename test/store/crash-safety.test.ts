import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileStorage, isSnapshot } from '../../src/store/index.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support', 'store-worker.ts');
const location = { sessionId: 'shared', scope: 'agent' as const, scopeId: 'worker-test' };
const KILLS = 32;

/**
 * Starts a writer that saves latest and history in a loop, and SIGKILLs it once it has finished
 * `pairs` save pairs plus a short random moment into the next: the test is bounded by the work
 * the writer does, so a loaded machine makes it slower, never wrong or out of time.
 */
async function killWriterAfter(baseDir: string, pairs: number, jitterMs: number): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, 'forever', baseDir, '1'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  let seen = 0;
  const saved = new Promise<void>((resolve) => {
    if (pairs === 0) resolve();
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString().split('saved\n').length - 1;
      if (seen >= pairs) resolve();
    });
  });
  child.stdin.write('go\n');
  await saved;
  await new Promise((r) => setTimeout(r, jitterMs));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return seen;
}

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-crash-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('FileStorage under SIGKILL', () => {
  it(`a writer killed at ${KILLS} random moments never leaves a torn latest or history file; verify reports leftovers and prune cleans them`, async () => {
    const storage = new FileStorage(dir);
    let lastHistoryCount = 0;
    let latestExists = false;
    for (let i = 0; i < KILLS; i++) {
      // A round may ask for no finished pair, so the first rounds can all end before any save.
      const pairsSeen = await killWriterAfter(dir, Math.floor(Math.random() * 4), Math.floor(Math.random() * 15));
      latestExists ||= pairsSeen > 0;
      // Whatever moment the kill hit, latest is absent (only until a save finished) or whole.
      const latest = await storage.loadSnapshot({ location });
      if (latestExists) expect(latest).not.toBeNull();
      latestExists ||= latest !== null;
      if (latest !== null) {
        expect(isSnapshot(latest)).toBe(true);
        const { writer, seq, payload } = latest.data as { writer: number; seq: number; payload: string };
        expect(payload).toBe(`${writer}:${seq}:`.repeat(4000));
      }
      const ids = await storage.listSnapshotIds({ location });
      expect(ids.length).toBeGreaterThanOrEqual(lastHistoryCount);
      lastHistoryCount = ids.length;
    }
    // Every listed history file is whole; the only possible damage is leftover temp files.
    const report = await storage.verify();
    expect(report.issues.filter((issue) => issue.kind !== 'temp-file')).toEqual([]);
    expect(report.checked).toBe(lastHistoryCount + 1);
    for (const id of await storage.listSnapshotIds({ location })) {
      expect(isSnapshot(await storage.loadSnapshot({ location, snapshotId: id }))).toBe(true);
    }
    const leftovers = report.issues.map((issue) => issue.where);
    // Temp files younger than the grace may belong to a live writer, so prune keeps them (a grace
    // of a day, not the default minute, which a loaded machine can spend on this test) ...
    const gentle = await new FileStorage(dir, { tempFileGraceMs: 86_400_000 }).prune({ location, keepLast: 1_000_000 });
    expect(gentle.tempFilesRemoved).toEqual([]);
    // ... and once they are past the grace period, prune removes every one of them.
    const cleaner = new FileStorage(dir, { tempFileGraceMs: 0 });
    const pruned = await cleaner.prune({ location, keepLast: 1_000_000 });
    expect([...(pruned.tempFilesRemoved ?? [])].sort()).toEqual([...leftovers].sort());
    expect(pruned.deleted).toEqual([]);
    expect(await cleaner.verify()).toMatchObject({ ok: true, issues: [] });
  }, WHOLE_PROCESS_BUDGET_MS);
});
