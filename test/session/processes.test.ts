/** Several processes at once, and a process killed mid-snapshot (built CLI; run `npm run build` first). */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CLI } from '../support/cli.js';
import { commitAll, write, trackedDirs } from './helpers.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

const { repo, dir: tempDir } = trackedDirs();

function cacheEnv(): NodeJS.ProcessEnv {
  const cache = tempDir('cairn-cache-');
  return { ...process.env, CI: '1', XDG_CACHE_HOME: cache };
}

function start(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout }));
  });
  return { child, done };
}

describe('concurrent session pre', () => {
  it('gives each process its own numbered iteration directory', async () => {
    const root = repo();
    commitAll(root, 'init');
    const env = cacheEnv();
    const runs = await Promise.all(Array.from({ length: 4 }, () => start(['session', 'pre'], root, env).done));
    for (const r of runs) expect(r.code).toBe(0);
    const claimed = runs.map((r) => path.basename(r.stdout.trim())).sort();
    expect(claimed).toEqual(['001', '002', '003', '004']);
    for (const name of claimed) expect(fs.existsSync(path.join(root, '.cairn', 'iterations', name, 'pre-snapshot.json'))).toBe(true);
  });
});

describe('kill -9 during session post', () => {
  it('leaves either no post-snapshot or a whole one; an unfinished iteration can be posted again, a finished one is final', async () => {
    const root = repo();
    for (let d = 0; d < 40; d++) for (let f = 0; f < 100; f++) write(root, `d${d}/f${f}.txt`, `${d}-${f}\n`);
    commitAll(root, 'init');
    const env = cacheEnv();
    expect((await start(['session', 'pre'], root, env).done).code).toBe(0);
    const iterationDir = path.join(root, '.cairn', 'iterations', '001');
    const postFile = path.join(iterationDir, 'post-snapshot.json');
    const made: string[] = [];
    for (const delayMs of [30, 80, 150, 250, 400]) {
      write(root, `d1/changed-${delayMs}.txt`, 'new');
      made.push(`d1/changed-${delayMs}.txt`);
      const run = start(['session', 'post', '--no-store'], root, env);
      await new Promise((r) => setTimeout(r, delayMs));
      run.child.kill('SIGKILL');
      await run.done;
      if (fs.existsSync(postFile)) {
        const parsed = JSON.parse(fs.readFileSync(postFile, 'utf8')) as { timestamp?: string };
        expect(typeof parsed.timestamp).toBe('string');
        break; // the post got through before the kill: the iteration is finished
      }
    }
    const finishedBefore = fs.existsSync(postFile);
    const before = finishedBefore ? fs.readFileSync(postFile, 'utf8') : '';
    const final = await start(['session', 'post', '--no-store', '--json'], root, env).done;
    if (finishedBefore) {
      expect(final.code).toBe(3);
      expect(fs.readFileSync(postFile, 'utf8')).toBe(before);
      return;
    }
    expect(final.code).toBe(0);
    const diff = JSON.parse(final.stdout) as { filesAdded: string[] }; // post --json prints the SnapshotDiff
    expect(diff.filesAdded).toEqual([...made].sort());
  }, WHOLE_PROCESS_BUDGET_MS);
});
