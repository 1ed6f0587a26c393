// The fast path says which way a scan went and why: with CAIRN_DEBUG=inventory, every scan
// prints one line on stderr — the stored result reused, updated (rows read again), or the walk
// with its reason. Each scan here is a real process running the built engine (the chunks
// `cairn snapshot` loads) on a real tree.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { cleanupTempDirs, MARGIN, sleep, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

const ENGINE = path.join(REPO_ROOT, 'dist', 'bin', 'engine.mjs');

/** Scans `root` in a child process and returns its inventory debug lines and file count. */
function scan(root: string, options: Record<string, unknown>, debug = 'inventory'): { lines: string[]; files: number } {
  const script = `const { scanTree } = await import(${JSON.stringify(ENGINE)});
const r = await scanTree(${JSON.stringify(root)}, ${JSON.stringify({ racyMarginMs: MARGIN, ...options })});
process.stdout.write(String(r.files.length));`;
  // A module file, not \`-e\` with --input-type=module: workers inherit that flag and their (CommonJS) source would fail.
  const driver = path.join(tempDir('cairn-driver-'), 'scan.mjs');
  fs.writeFileSync(driver, script);
  const r = spawnSync(process.execPath, [driver], { encoding: 'utf8', env: { ...process.env, CAIRN_DEBUG: debug } });
  expect(r.status, r.stderr).toBe(0);
  return { lines: r.stderr.split('\n').filter((l) => l.startsWith('cairn:inventory ')), files: Number(r.stdout) };
}

function tree(): { root: string; cacheDir: string } {
  const root = tempDir();
  const files: Record<string, string> = { '.gitignore': 'ignored/\n' };
  for (let i = 0; i < 20; i++) files[`src/m${i}.ts`] = `export const v${i} = ${i};\n`;
  writeTree(root, files);
  return { root, cacheDir: path.join(tempDir('cairn-cache-'), 'c') };
}

describe('the fast path says why (CAIRN_DEBUG=inventory)', () => {
  it('walks without a cache, and says so', () => {
    const { root } = tree();
    const r = scan(root, { cache: false });
    expect(r.files).toBe(21);
    expect(r.lines).toEqual([`cairn:inventory walk: no cache (--no-cache, or no cache directory) (${root})`]);
  });

  it('walks on a first scan, reuses the stored result when nothing changed, updates it after an edit in place', async () => {
    const { root, cacheDir } = tree();
    await sleep(3 * MARGIN); // older than the racy margin: the first scan trusts what it records
    expect(scan(root, { cacheDir }).lines).toEqual([`cairn:inventory walk: the cache is empty (a first scan, or it was discarded) (${root})`]);
    expect(scan(root, { cacheDir }).lines).toEqual([`cairn:inventory reused: the stored result, 0 rows read again (${root})`]);
    fs.appendFileSync(path.join(root, 'src', 'm3.ts'), '// edited\n');
    await sleep(3 * MARGIN);
    const edited = scan(root, { cacheDir });
    expect(edited.files).toBe(21);
    expect(edited.lines).toEqual([`cairn:inventory updated: the stored result, 1 row read again (${root})`]);
  });

  it('walks when the stored result is for other limits', async () => {
    const { root, cacheDir } = tree();
    await sleep(3 * MARGIN);
    scan(root, { cacheDir });
    const r = scan(root, { cacheDir, maxFiles: 10 });
    expect(r.files).toBe(10);
    expect(r.lines).toEqual([`cairn:inventory walk: the stored result is for other limits (maxFiles, maxBytes) (${root})`]);
  });

  it('walks when a new symlink appears (the update does not place links), naming the directories that moved', async () => {
    const { root, cacheDir } = tree();
    await sleep(3 * MARGIN);
    scan(root, { cacheDir });
    fs.symlinkSync('m1.ts', path.join(root, 'src', 'link.ts'));
    await sleep(3 * MARGIN);
    const r = scan(root, { cacheDir });
    expect(r.files).toBe(22);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^cairn:inventory walk: 1 directory moved beyond what the update places/);
  });

  it('walks when a .gitignore gains rules in a result cut by maxFiles', async () => {
    const { root, cacheDir } = tree();
    await sleep(3 * MARGIN);
    scan(root, { cacheDir, maxFiles: 10 });
    fs.appendFileSync(path.join(root, '.gitignore'), 'src/m1*.ts\n');
    await sleep(3 * MARGIN);
    const r = scan(root, { cacheDir, maxFiles: 10 });
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^cairn:inventory walk: /);
    expect(r.lines[0]).not.toContain('walk: no cache');
  });

  it('says why a quiet fallback cost speed: a memo it could not read', async () => {
    const { root, cacheDir } = tree();
    await sleep(3 * MARGIN);
    scan(root, { cacheDir });
    scan(root, { cacheDir }); // the stored result, with its digest and canonical memo
    const memo = path.join(cacheDir, fs.readdirSync(cacheDir).find((n) => n.endsWith('.canonical'))!);
    fs.rmSync(memo);
    fs.mkdirSync(memo); // a memo that cannot be read
    fs.appendFileSync(path.join(root, 'src', 'm3.ts'), '// edited\n');
    await sleep(3 * MARGIN);
    const r = scan(root, { cacheDir });
    expect(r.files).toBe(21);
    expect(r.lines).toContain(`cairn:inventory fallback: memo ${memo} not read: made again (EISDIR)`);
    expect(r.lines).toContain(`cairn:inventory updated: the stored result, 1 row read again (${root})`);
  });

  it('stays silent without CAIRN_DEBUG, and for another channel', async () => {
    const { root, cacheDir } = tree();
    await sleep(3 * MARGIN);
    expect(scan(root, { cacheDir }, '').lines).toEqual([]);
    expect(scan(root, { cacheDir }, 'store').lines).toEqual([]);
    expect(scan(root, { cacheDir }, 'store,inventory').lines).toHaveLength(1);
  });
});
