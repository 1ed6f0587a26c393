import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/jcs.js';
import { snapshotRoot } from '../../src/inventory/index.js';
import { cleanupTempDirs, tempDir, writeTree } from './helpers.js';

afterAll(cleanupTempDirs);

const entries = async (root: string) => new Map((await snapshotRoot(root, { cache: false })).body.files.map((f) => [f.path, f]));

describe('symlinks', () => {
  it('hashes links to in-root files (also through chains), never follows links into directories, survives loops', async () => {
    const root = tempDir();
    writeTree(root, { 'dir/file.txt': 'content', 'dir/sub/deep.txt': 'deep' });
    fs.symlinkSync('dir/file.txt', path.join(root, 'one'));
    fs.symlinkSync('one', path.join(root, 'two')); // chain: two -> one -> dir/file.txt
    fs.symlinkSync('dir', path.join(root, 'dirlink')); // to a directory
    fs.symlinkSync('loop-b', path.join(root, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(root, 'loop-b'));
    fs.symlinkSync('.', path.join(root, 'dir/self')); // would loop forever if followed
    const e = await entries(root);
    const sha = sha256Hex('content');
    expect(e.get('one')).toEqual({ path: 'one', bytes: 7, sha256: sha, mode: '0644', kind: 'symlink' });
    expect(e.get('two')).toEqual({ path: 'two', bytes: 7, sha256: sha, mode: '0644', kind: 'symlink' });
    expect(e.get('dirlink')).toEqual({ path: 'dirlink', bytes: 0, mode: '0644', kind: 'symlink' });
    expect(e.get('dir/self')).toEqual({ path: 'dir/self', bytes: 0, mode: '0644', kind: 'symlink' });
    expect(e.get('loop-a')).toEqual({ path: 'loop-a', bytes: 0, mode: '0644', kind: 'symlink' });
    expect([...e.keys()].filter((p) => p.startsWith('dirlink/'))).toEqual([]);
    expect([...e.keys()].sort()).toEqual(['dir/file.txt', 'dir/self', 'dir/sub/deep.txt', 'dirlink', 'loop-a', 'loop-b', 'one', 'two'].sort());
  });

  it('does not disclose a link that leaves the root through a relative path', async () => {
    const outer = tempDir();
    writeTree(outer, { 'secret.txt': 'SECRET', 'root/a': 'a' });
    const root = path.join(outer, 'root');
    fs.symlinkSync('../secret.txt', path.join(root, 'up'));
    const e = await entries(root);
    expect(e.get('up')).toEqual({ path: 'up', bytes: 0, mode: '0644', kind: 'symlink' });
  });

  it('realpaths a root that is itself a symlink, so in-root links are still recognised as inside', async () => {
    const real = tempDir();
    writeTree(real, { 'a.txt': 'aaa' });
    fs.symlinkSync('a.txt', path.join(real, 'alias'));
    const holder = tempDir();
    const viaLink = path.join(holder, 'link-to-root');
    fs.symlinkSync(real, viaLink);
    const direct = await snapshotRoot(real, { cache: false });
    const linked = await snapshotRoot(viaLink, { cache: false });
    expect(linked).toEqual(direct);
    expect(linked.body.files.find((f) => f.path === 'alias')!.sha256).toBe(sha256Hex('aaa'));
  });

  it('takes the mode of the target for an in-root link', async () => {
    const root = tempDir();
    writeTree(root, { 'bin/tool': '#!/bin/sh\n' });
    fs.chmodSync(path.join(root, 'bin/tool'), 0o755);
    fs.symlinkSync('bin/tool', path.join(root, 'tool'));
    expect((await entries(root)).get('tool')).toMatchObject({ mode: '0755', kind: 'symlink', bytes: 10 });
  });
});
