// Files that vanish, change type or cannot be read while the scan runs: never a crash, never a
// wrong hash; each is reported as skipped with its reason.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { scanTreeSync, type ScanOptions } from '../../src/inventory/index.js';
import { isTempName } from '../../src/core/atomic-write.js';
import { CLI } from '../support/cli.js';
import { mkfifo } from '../support/mkfifo.js';
import { withoutPermissionOverride } from '../support/unprivileged.js';
import { cleanupTempDirs, gridTree, tempDir, writeTree } from './helpers.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

afterAll(cleanupTempDirs);

/**
 * Runs a scan that calls `act` once, right after the first file is done. With a budget set the
 * synchronous engine finishes each file before pulling the next, and the directory was listed
 * already: so whatever `act` does happens between readdir and open of the later entries.
 */
function scanWithHook(root: string, act: () => void, extra: ScanOptions = {}) {
  let fired = false;
  return scanTreeSync(root, {
    cache: false,
    maxFiles: 1000,
    ...extra,
    onProgress: (p) => {
      if (!fired && p.filesDone >= 1) {
        fired = true;
        act();
      }
    },
  });
}

describe('mid-scan changes', () => {
  it('reports a file deleted between listing and reading as vanished', () => {
    const root = tempDir();
    writeTree(root, { a: 'a', b: 'b', c: 'c' });
    const r = scanWithHook(root, () => fs.rmSync(path.join(root, 'b')));
    expect(r.files.map((f) => f.path)).toEqual(['a', 'c']);
    expect(r.skipped).toEqual([{ path: 'b', reason: 'vanished', detail: 'ENOENT' }]);
  });

  it('reports a directory deleted before the walk reaches it as vanished', () => {
    const root = tempDir();
    writeTree(root, { a: 'a', 'd/x': 'x', z: 'z' });
    const r = scanWithHook(root, () => fs.rmSync(path.join(root, 'd'), { recursive: true }));
    expect(r.files.map((f) => f.path)).toEqual(['a', 'z']);
    expect(r.skipped).toMatchObject([{ path: 'd', reason: 'vanished' }]);
  });

  it('does not follow a file that was swapped for a symlink mid-scan', () => {
    const root = tempDir();
    const outside = tempDir();
    fs.writeFileSync(path.join(outside, 'secret'), 'SECRET');
    writeTree(root, { a: 'a', b: 'b' });
    const r = scanWithHook(root, () => {
      fs.rmSync(path.join(root, 'b'));
      fs.symlinkSync(path.join(outside, 'secret'), path.join(root, 'b'));
    });
    expect(r.files.map((f) => f.path)).toEqual(['a']);
    expect(r.skipped).toEqual([{ path: 'b', reason: 'unstable', detail: 'replaced by a symlink during the scan' }]);
  });

  it('does not hang on a file swapped for a FIFO mid-scan', () => {
    const root = tempDir();
    writeTree(root, { a: 'a', b: 'b' });
    const r = scanWithHook(root, () => {
      fs.rmSync(path.join(root, 'b'));
      mkfifo(path.join(root, 'b'));
    });
    expect(r.files.map((f) => f.path)).toEqual(['a']);
    expect(r.skipped).toMatchObject([{ path: 'b', reason: 'not-regular-file' }]);
  });
});

describe('unreadable files and directories', () => {
  // Root reads mode-000 files anyway, so the scan runs in a child process (the built CLI) without
  // the permission-override capabilities, where permissions do apply.
  it('skips a chmod-000 file and directory with their reasons when permissions apply', () => {
    const root = tempDir();
    writeTree(root, { ok: 'fine', secret: 'SECRET', 'locked/inner': 'x' });
    fs.chmodSync(path.join(root, 'secret'), 0o000);
    fs.chmodSync(path.join(root, 'locked'), 0o000);
    const [cmd, args] = withoutPermissionOverride(process.execPath, [CLI, 'snapshot', '--root', root, '--no-cache', '--verbose']);
    const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, CI: '1' } });
    expect(r.status, r.stderr).toBe(0);
    const snap = JSON.parse(r.stdout) as { body: { files: { path: string }[] } };
    expect(snap.body.files.map((f) => f.path)).toEqual(['ok']);
    expect(r.stderr).toContain('skipped "locked": unreadable-dir (EACCES)');
    expect(r.stderr).toContain('skipped "secret": unreadable (EACCES)');
    expect(r.stderr).toContain('2 paths skipped');
    expect(r.stdout).not.toContain('SECRET');
  });
});

describe('kill -9 while scanning', () => {
  it.runIf(fs.existsSync(CLI))('never leaves a cache that is partial or wrong: the next run is right and raises no notice', async () => {
    const { root, cacheDir, outDir } = gridTree(30, 60, 40);
    await new Promise((r) => setTimeout(r, 2100)); // past the racy margin: runs do write the cache
    const truth = spawnSync(process.execPath, [CLI, 'snapshot', '--root', root, '--no-cache'], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
    expect(truth.status).toBe(0);
    for (const delayMs of [30, 80, 150, 250, 400]) {
      const { spawn } = await import('node:child_process');
      const child = spawn(process.execPath, [CLI, 'snapshot', '--root', root, '--cache-dir', cacheDir, '-o', path.join(outDir, `out-${delayMs}.json`)], { stdio: 'ignore' });
      const exited = new Promise((r) => child.once('exit', r));
      await new Promise((r) => setTimeout(r, delayMs));
      child.kill('SIGKILL'); // may land before, during or after the cache write
      await exited;
      fs.appendFileSync(path.join(root, `d${delayMs % 30}`, 'f0.txt'), 'more\n'); // keep the cache busy
      const after = spawnSync(process.execPath, [CLI, 'snapshot', '--root', root, '--cache-dir', cacheDir], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
      const fresh = spawnSync(process.execPath, [CLI, 'snapshot', '--root', root, '--no-cache'], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
      expect(after.status).toBe(0);
      expect(after.stderr).not.toContain('notice');
      expect(after.stdout).toBe(fresh.stdout);
    }
    // Whatever a killed run left half-written in the cache directory is swept by the next run
    // that saves the cache, once it is a minute old (a writer elsewhere may look dead by pid) and
    // the last sweep a minute ago (the `.swept` stamp): both clocks are moved two minutes back.
    const then = new Date(Date.now() - 120_000);
    for (const name of fs.readdirSync(cacheDir).filter((n) => isTempName(n) || n.endsWith('.swept'))) fs.utimesSync(path.join(cacheDir, name), then, then);
    // A temp of the cache's own, as a killed save leaves it, so the sweep is proven whether or not
    // a kill above landed mid-write.
    const cacheName = fs.readdirSync(cacheDir).find((n) => n.endsWith('.cache'))!;
    const planted = path.join(cacheDir, `.${cacheName}.cairn-tmp-999999-0123456789ab`);
    fs.writeFileSync(planted, 'half a cache');
    fs.utimesSync(planted, then, then);
    fs.appendFileSync(path.join(root, 'd0', 'f1.txt'), 'more\n');
    expect(spawnSync(process.execPath, [CLI, 'snapshot', '--root', root, '--cache-dir', cacheDir], { env: { ...process.env, CI: '1' } }).status).toBe(0);
    expect(fs.readdirSync(cacheDir).filter(isTempName)).toEqual([]);
  });
});

describe('a stat cache that cannot be written', () => {
  // The scan that finds changes writes the cache's bulk on the thread pool while it builds the
  // result; a write that fails there must still end in a notice, a right result, the last good
  // cache kept and no temp file left behind.
  function treeWithCache(): { root: string; cacheDir: string; run: (wrap?: (cmd: string, args: string[]) => [string, string[]]) => ReturnType<typeof spawnSync> } {
    const { root, cacheDir } = gridTree(10, 40);
    const run = (wrap = (cmd: string, args: string[]): [string, string[]] => [cmd, args]) => {
      const [cmd, args] = wrap(process.execPath, [CLI, 'snapshot', '--root', root, '--cache-dir', cacheDir, '--max-files', '50000']);
      return spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, CI: '1' } });
    };
    return { root, cacheDir, run };
  }

  function truthOf(root: string): string {
    const r = spawnSync(process.execPath, [CLI, 'snapshot', '--root', root, '--no-cache', '--max-files', '50000'], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout;
  }

  it.runIf(fs.existsSync(CLI))('in a read-only cache directory: a notice, the right snapshot, and the next writable run still right', () => {
    const { root, cacheDir, run } = treeWithCache();
    expect(run().status).toBe(0);
    fs.appendFileSync(path.join(root, 'd3', 'f7.txt'), 'edited\n');
    fs.chmodSync(cacheDir, 0o500);
    try {
      const r = run(withoutPermissionOverride);
      expect(r.status, String(r.stderr)).toBe(0);
      expect(r.stderr).toMatch(/cairn: notice: stat cache not saved \(EACCES\)/);
      expect(r.stdout).toBe(truthOf(root));
    } finally {
      fs.chmodSync(cacheDir, 0o700);
    }
    expect(fs.readdirSync(cacheDir).filter(isTempName)).toEqual([]);
    const again = run();
    expect(again.stderr).not.toContain('notice');
    expect(again.stdout).toBe(truthOf(root));
  });

  it.runIf(fs.existsSync(CLI))('when the disk refuses the write midway (a file size limit): a notice, the right snapshot, the old cache kept whole, no temp file', () => {
    const { root, cacheDir, run } = treeWithCache();
    expect(run().status).toBe(0);
    const cacheFile = fs.readdirSync(cacheDir).find((n) => n.endsWith('.cache'))!;
    const before = fs.readFileSync(path.join(cacheDir, cacheFile));
    expect(before.length).toBeGreaterThan(8 * 1024); // so the limit below cuts the rewrite short
    fs.appendFileSync(path.join(root, 'd5', 'f1.txt'), 'edited\n');
    // RLIMIT_FSIZE makes write(2) fail with EFBIG past 8 KiB, as a full disk fails it with ENOSPC
    // (Node ignores SIGXFSZ, so the process lives on to see the error).
    const limited = (cmd: string, args: string[]): [string, string[]] => ['bash', ['-c', 'ulimit -f 8 && exec "$@"', 'limited', cmd, ...args]];
    const r = run(limited);
    expect(r.status, String(r.stderr)).toBe(0);
    expect(r.stderr).toMatch(/cairn: notice: stat cache not saved \(EFBIG\)/);
    const truth = truthOf(root);
    expect(r.stdout).toBe(truth);
    expect(fs.readdirSync(cacheDir).filter(isTempName)).toEqual([]);
    expect(fs.readFileSync(path.join(cacheDir, cacheFile)).equals(before)).toBe(true);
    const again = run();
    expect(again.stderr).not.toContain('notice');
    expect(again.stdout).toBe(truth);
  });
});
