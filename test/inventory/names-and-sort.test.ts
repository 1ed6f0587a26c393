import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareUtf8 } from '../../src/core/utf8.js';
import { snapshotRootDetailed, scanTreeSync } from '../../src/inventory/index.js';
import { cleanupTempDirs, sortUtf8, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

describe('sort order', () => {
  it('lists paths in UTF-8 byte order across the classic traps (a-b, a.b, a/b, upper case, non-ASCII, astral)', async () => {
    const root = tempDir();
    const names = ['a-b', 'a.b', 'a/b', 'a/c', 'ab', 'A', 'Z', 'a0', 'é', 'e', 'z', '\u{1F600}', '\uFF61', '\uE000', 'a b', 'x/\u{1F600}', 'x/\uFFFD'];
    const tree: Record<string, string> = {};
    for (const n of names) tree[n] = n;
    writeTree(root, tree);
    const got = (await snapshotRootDetailed(root, { cache: false })).snapshot.body.files.map((f) => f.path);
    expect(got).toEqual(sortUtf8(names));
    // The astral trap: JS `<` on UTF-16 puts U+1F600 (surrogates D83D…) before U+FF61; bytes do not.
    expect(got.indexOf('\uFF61')).toBeLessThan(got.indexOf('\u{1F600}'));
    for (let i = 1; i < got.length; i++) expect(compareUtf8(got[i - 1]!, got[i]!)).toBeLessThan(0);
  });
});

describe('names that cannot be recorded are skipped and reported', () => {
  it('reports NFD, trailing space or dot, reserved and forbidden-character names with their reason', async () => {
    const root = tempDir();
    const nfd = 'cafe\u0301.txt';
    writeTree(root, { ok: 'x', [nfd]: 'x', 'space ': 'x', 'dot.': 'x', 'CON.txt': 'x', 'a:b': 'x', 'bad dir /inside': 'x', 'tab\tname': 'x' });
    const r = await snapshotRootDetailed(root, { cache: false });
    expect(r.snapshot.body.files.map((f) => f.path)).toEqual(['ok']);
    const skipped = new Map(r.skipped.map((s) => [s.path, s]));
    expect([...skipped.keys()].sort()).toEqual(['CON.txt', 'a:b', 'bad dir ', nfd, 'dot.', 'space ', 'tab\tname'].sort());
    for (const s of r.skipped) expect(s.reason).toBe('invalid-name');
    expect(skipped.get('bad dir ')!.detail).toContain('directory');
    expect(skipped.get(nfd)!.detail).toMatch(/NFC/);
  });

  it('reports a name that is not valid UTF-8 instead of recording a lossy path', () => {
    const root = tempDir();
    writeTree(root, { ok: 'x', 'real\uFFFD': 'a genuine U+FFFD is fine' });
    // Latin-1 "é" (0xE9) alone is not UTF-8; Node would decode it as U+FFFD.
    const raw = Buffer.concat([Buffer.from(root + '/bad'), Buffer.from([0xe9]), Buffer.from('.txt')]);
    fs.writeFileSync(raw, 'x');
    const r = scanTreeSync(root, { cache: false });
    expect(r.files.map((f) => f.path)).toEqual(['ok', 'real\uFFFD']);
    expect(r.skipped).toEqual([{ path: 'bad\uFFFD.txt', reason: 'invalid-utf8', detail: 'the name on disk is not valid UTF-8' }]);
  });

  it('reports a path longer than 1024 characters', () => {
    const root = tempDir();
    let dir = root;
    const seg = 'd'.repeat(200);
    for (let i = 0; i < 5; i++) dir = path.join(dir, seg);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'file-that-crosses-the-limit'), 'x');
    const r = scanTreeSync(root, { cache: false });
    expect(r.files).toEqual([]);
    expect(r.skipped).toHaveLength(1);
    expect(r.skipped[0]).toMatchObject({ reason: 'invalid-name', detail: expect.stringContaining('1024') as unknown });
  });
});

describe('exec bits', () => {
  it('records 0755 exactly when the owner-execute bit is set', async () => {
    const root = tempDir();
    writeTree(root, { a: 'x', b: 'x', c: 'x', d: 'x' });
    fs.chmodSync(path.join(root, 'a'), 0o755);
    fs.chmodSync(path.join(root, 'b'), 0o711);
    fs.chmodSync(path.join(root, 'c'), 0o655); // group/other exec only
    fs.chmodSync(path.join(root, 'd'), 0o600);
    const modes = (await snapshotRootDetailed(root, { cache: false })).snapshot.body.files.map((f) => `${f.path}:${f.mode}`);
    expect(modes).toEqual(['a:0755', 'b:0755', 'c:0644', 'd:0644']);
  });
});
