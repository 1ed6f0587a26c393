/**
 * Issue 23, items 1 and 2: a truncated snapshot says so on stderr and `snapshot-diff` never
 * reports paths beyond a truncated side's cut as changes; every option is checked before
 * anything is written or served.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { errorJson, runCli } from '../support/cli.js';
import { cleanupTempDirs, tempDir, writeTree } from '../inventory/helpers.js';
import { commitAll, makeRepo, removeDir, write } from '../session/helpers.js';

afterAll(cleanupTempDirs);

function threeFiles(): { root: string; work: string; env: NodeJS.ProcessEnv } {
  const root = tempDir();
  // 100 + 200 + 300 bytes, in sort order a, b, c.
  writeTree(root, { 'a.txt': 'a'.repeat(100), 'b.txt': 'b'.repeat(200), 'c.txt': 'c'.repeat(300) });
  const work = tempDir('cairn-cli-');
  return { root, work, env: { XDG_CACHE_HOME: path.join(work, 'xdg') } };
}

describe('cairn snapshot on a tree over its budget', () => {
  it('keeps the seed document and exit 0 but says on stderr what cut it, what is left out and the flag that lifts it', () => {
    const { root, work, env } = threeFiles();
    const r = runCli(['snapshot', '--root', root, '--max-bytes', '150'], { cwd: work, env });
    expect(r.status).toBe(0);
    const snap = JSON.parse(r.stdout) as { body: { truncated: boolean; files: { path: string }[] } };
    expect(snap.body.truncated).toBe(true);
    expect(snap.body.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(r.stderr).toContain('truncated');
    expect(r.stderr).toContain('--max-bytes');
    expect(r.stderr).toMatch(/2 files \(500 bytes\) left out/);
  });

  it('counts what is left out anew on every warm run: files beyond the cut that grew, appeared or went', () => {
    const { root, work, env } = threeFiles();
    const run = (): string => runCli(['snapshot', '--root', root, '--max-files', '1', '-o', 'cut.json'], { cwd: work, env }).stderr;
    expect(run()).toMatch(/2 files \(500 bytes\) left out/);
    expect(run()).toMatch(/2 files \(500 bytes\) left out/); // warm: from the count's own stat cache
    fs.appendFileSync(path.join(root, 'c.txt'), 'c'.repeat(50));
    expect(run()).toMatch(/2 files \(550 bytes\) left out/);
    fs.mkdirSync(path.join(root, 'd'));
    fs.writeFileSync(path.join(root, 'd', 'e.txt'), 'e'.repeat(7));
    expect(run()).toMatch(/3 files \(557 bytes\) left out/);
    fs.rmSync(path.join(root, 'b.txt'));
    expect(run()).toMatch(/2 files \(357 bytes\) left out/);
    const uncached = runCli(['snapshot', '--root', root, '--max-files', '1', '--no-cache', '-o', 'cut.json'], { cwd: work, env: { XDG_CACHE_HOME: path.join(work, 'other') } });
    expect(uncached.stderr).toMatch(/2 files \(357 bytes\) left out/);
    // --no-cache: no cache for the count either. (Node 22+ may keep V8's compile cache of cairn's
    // own code under the same XDG_CACHE_HOME; that is no cache of the tree.)
    const other = path.join(work, 'other');
    const written = fs.existsSync(other) ? (fs.readdirSync(other, { recursive: true }) as string[]).map((p) => p.split(path.sep).join('/')) : [];
    expect(written.filter((p) => p !== 'cairn' && p !== 'cairn/compile' && !p.startsWith('cairn/compile/'))).toEqual([]);
  });

  it('names --max-files when the file count cut it', () => {
    const { root, work, env } = threeFiles();
    const r = runCli(['snapshot', '--root', root, '--max-files', '2', '-o', 'cut.json'], { cwd: work, env });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/1 file \(300 bytes\) left out/);
    expect(r.stderr).toContain('--max-files');
  });

  it('says nothing about truncation when the whole tree fits', () => {
    const { root, work, env } = threeFiles();
    const r = runCli(['snapshot', '--root', root], { cwd: work, env });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });
});

describe('cairn snapshot-diff with a truncated side', () => {
  it('does not report files beyond the cut as added; it lists them under beyondCut and says so on stderr', () => {
    const { root, work, env } = threeFiles();
    expect(runCli(['snapshot', '--root', root, '--max-bytes', '150', '-o', 'cut.json'], { cwd: work, env }).status).toBe(0);
    expect(runCli(['snapshot', '--root', root, '-o', 'full.json'], { cwd: work, env }).status).toBe(0);
    const r = runCli(['snapshot-diff', 'cut.json', 'full.json', '--exit-code'], { cwd: work, env });
    const diff = JSON.parse(r.stdout) as { added: string[]; removed: string[]; changed: unknown[]; beyondCut?: { after: string | null; paths: string[]; truncated: string[] } };
    expect(diff.added).toEqual([]);
    expect(diff.removed).toEqual([]);
    expect(diff.beyondCut).toEqual({ truncated: ['a'], after: 'a.txt', paths: ['b.txt', 'c.txt'] });
    expect(r.stderr).toContain('truncated');
    // Nothing comparable differs, so --exit-code does not report a difference.
    expect(r.status).toBe(0);
  });

  it('still reports real changes before the cut', () => {
    const { root, work, env } = threeFiles();
    expect(runCli(['snapshot', '--root', root, '--max-bytes', '150', '-o', 'cut.json'], { cwd: work, env }).status).toBe(0);
    fs.writeFileSync(path.join(root, 'a.txt'), 'changed');
    expect(runCli(['snapshot', '--root', root, '-o', 'full.json'], { cwd: work, env }).status).toBe(0);
    const r = runCli(['snapshot-diff', 'full.json', 'cut.json', '--exit-code'], { cwd: work, env });
    expect(r.status).toBe(1);
    const diff = JSON.parse(r.stdout) as { added: string[]; removed: string[]; changed: { path: string }[]; beyondCut?: { truncated: string[] } };
    expect(diff.changed.map((c) => c.path)).toEqual(['a.txt']);
    expect(diff.removed).toEqual([]);
    expect(diff.beyondCut?.truncated).toEqual(['b']);
  });

  it('keeps the seed output, without beyondCut, when neither side is truncated', () => {
    const { root, work, env } = threeFiles();
    expect(runCli(['snapshot', '--root', root, '-o', 'one.json'], { cwd: work, env }).status).toBe(0);
    fs.rmSync(path.join(root, 'c.txt'));
    expect(runCli(['snapshot', '--root', root, '-o', 'two.json'], { cwd: work, env }).status).toBe(0);
    const r = runCli(['snapshot-diff', 'one.json', 'two.json'], { cwd: work, env });
    expect(JSON.parse(r.stdout)).toEqual({ added: [], removed: ['c.txt'], changed: [] });
    expect(r.stderr).toBe('');
  });
});

describe('options are checked before anything is written or served', () => {
  it('session post --store weird://x fails with ERR_USAGE before writing the post-snapshot or printing a report', () => {
    const root = makeRepo();
    try {
      write(root, 'a.txt', 'a');
      commitAll(root, 'init');
      const env = { XDG_CACHE_HOME: path.join(root, '.xdg') };
      expect(runCli(['session', 'pre'], { cwd: root, env }).status).toBe(0);
      const r = runCli(['session', 'post', '--store', 'weird://x'], { cwd: root, env });
      expect(r.status).toBe(2);
      expect(errorJson(r.stderr).code).toBe('ERR_USAGE');
      expect(r.stdout).toBe('');
      expect(fs.existsSync(path.join(root, '.cairn', 'iterations', '001', 'post-snapshot.json'))).toBe(false);
    } finally {
      removeDir(root);
    }
  });

  it('cairn mcp --store weird://x exits 2 at start instead of serving', () => {
    const root = tempDir();
    const r = runCli(['mcp', '--root', root, '--store', 'weird://x'], { cwd: root, input: '' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(errorJson(r.stderr).code).toBe('ERR_USAGE');
    expect(r.stderr).not.toContain('serving');
  });
});
