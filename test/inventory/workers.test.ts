// The scanner's workers are module files (io/hash-worker.ts, io/verify-worker.ts): they must
// start from each layout cairn ships — the CLI bundle (dist/bin/, their own entries) and the tsc
// build (dist/inventory/io/, beside the pool) — and `npm pack` must carry them. Under vitest they
// start from the TypeScript sources (every other inventory test hashes through them).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanTreeSync } from '../../src/inventory/index.js';
import { npmPackFiles, REPO_ROOT } from '../support/cli.js';
import { cleanupTempDirs, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

/** Scans `root` with two hash workers in a child process running `entry`; returns the file paths it found. */
function scanWith(entry: string, root: string): string[] {
  const driver = path.join(tempDir('cairn-driver-'), 'scan.mjs');
  fs.writeFileSync(driver, `const { scanTree } = await import(${JSON.stringify(entry)});
const r = await scanTree(${JSON.stringify(root)}, { cache: false, jobs: 2 });
process.stdout.write(JSON.stringify(r.files.map((f) => f.path + ' ' + f.sha256)));`);
  const r = spawnSync(process.execPath, [driver], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as string[];
}

describe('the scanner workers ship as module files', () => {
  const root = tempDir();
  const files: Record<string, string> = {};
  for (let i = 0; i < 600; i++) files[`d${i % 7}/f${i}.txt`] = `file ${i}\n`;
  writeTree(root, files);
  const expected = scanTreeSync(root, { cache: false }).files.map((f) => `${f.path} ${f.sha256}`);

  it.each([
    ['the CLI bundle', path.join(REPO_ROOT, 'dist', 'bin', 'engine.mjs')],
    ['the tsc build', path.join(REPO_ROOT, 'dist', 'inventory', 'index.js')],
  ])('hash on two workers from %s, with the same result as this thread', (_label, entry) => {
    expect(scanWith(entry, root)).toEqual(expected);
  });

  it('are in the package npm would publish', () => {
    const shipped = new Set(npmPackFiles());
    for (const name of ['hash-worker', 'verify-worker']) {
      expect(shipped.has(`dist/bin/${name}.mjs`), name).toBe(true);
      expect(shipped.has(`dist/inventory/io/${name}.js`), name).toBe(true);
    }
  });
});
