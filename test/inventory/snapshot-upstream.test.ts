// The upstream suite (axiom packages/mcp/src/snapshot.test.ts, 9 cases), reproduced against cairn.
// Difference by design: cairn always skips `.cairn/` as well as upstream's `.axiom/`; case 9 (MCP
// harness) is covered here at the library level; the MCP tool has its own tests.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import canonicalizeOracle from 'canonicalize';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/jcs.js';
import { RepoSnapshotSchema, diffSnapshots, snapshotRoot, type RepoSnapshotOptions } from '../../src/inventory/index.js';
import { cleanupTempDirs, tempDir, writeTree } from './helpers.js';

const ajv = new Ajv2020({ strict: true });
const validate = ajv.compile(RepoSnapshotSchema);

const A_TS = 'export const a = 1;\n'; // 20 bytes

function fixture(): string {
  const root = tempDir();
  writeTree(root, {
    'README.md': '# readme\n',
    'src/a.ts': A_TS,
    'src/deep/b.ts': 'export const b = 2;\n',
    'src/z.log': 'log line\n',
    'node_modules/dep/index.js': 'module.exports = 1;\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.axiom/lock': 'x',
    '.cairn/lock': 'x',
    '.gitignore': 'node_modules/\n*.log\n# a comment\n!keep.log\n',
  });
  return root;
}

const snap = (root: string, o: RepoSnapshotOptions = {}) => snapshotRoot(root, { cache: false, ...o });

let root: string;
beforeEach(() => {
  root = fixture();
});
afterAll(cleanupTempDirs);

describe('snapshotRoot (upstream cases)', () => {
  it('1. inventories the tree: schema-valid, exact paths, entry shape, counts, digest, no absolute root', async () => {
    const s = await snap(root);
    expect(validate(s), JSON.stringify(validate.errors)).toBe(true);
    expect(s.body.files.map((f) => f.path)).toEqual(['.gitignore', 'README.md', 'src/a.ts', 'src/deep/b.ts']);
    const a = s.body.files.find((f) => f.path === 'src/a.ts')!;
    expect(a).toMatchObject({ bytes: 20, kind: 'file', mode: '0644' });
    expect(a.sha256).toMatch(/^[a-f0-9]{64}$/);
    expect(a.sha256).toBe(sha256Hex(A_TS));
    const total = s.body.files.reduce((n, f) => n + f.bytes, 0);
    expect(s.body.counts).toEqual({ files: 4, bytes: total });
    expect(s.body.truncated).toBe(false);
    expect(s.snapshotDigest).toBe(`sha256:${sha256Hex(canonicalizeOracle(s.body)!)}`);
    expect(JSON.stringify(s)).not.toContain(root);
  });

  it('2. is deterministic; adding a file and editing one each change the digest', async () => {
    const first = await snap(root);
    expect(await snap(root)).toStrictEqual(first);
    fs.writeFileSync(path.join(root, 'src/c.ts'), 'c');
    const added = await snap(root);
    expect(added.snapshotDigest).not.toBe(first.snapshotDigest);
    fs.writeFileSync(path.join(root, 'src/a.ts'), A_TS.replace('1', '2'));
    const edited = await snap(root);
    expect(edited.snapshotDigest).not.toBe(added.snapshotDigest);
    expect(edited.body.counts.files).toBe(added.body.counts.files);
  });

  it('3. respectGitignore: false includes ignored files but never .git/, .axiom/ or .cairn/', async () => {
    const paths = (await snap(root, { respectGitignore: false })).body.files.map((f) => f.path);
    expect(paths).toContain('src/z.log');
    expect(paths).toContain('node_modules/dep/index.js');
    expect(paths.some((p) => p.startsWith('.git/') || p.startsWith('.axiom/') || p.startsWith('.cairn/'))).toBe(false);
  });

  it('4. include keeps matching files (without digests on request); exclude drops them', async () => {
    const inc = await snap(root, { include: ['src/**'], withContentDigest: false });
    expect(inc.body.files.map((f) => f.path)).toEqual(['src/a.ts', 'src/deep/b.ts']);
    expect(inc.body.files.every((f) => f.sha256 === undefined && !('sha256' in f))).toBe(true);
    const exc = await snap(root, { exclude: ['src/deep/**', '*.md'] });
    expect(exc.body.files.map((f) => f.path)).toEqual(['.gitignore', 'src/a.ts']);
  });

  it('5. caps: maxFiles gives a truncated prefix; maxBytes bounds the byte count', async () => {
    const full = await snap(root);
    const two = await snap(root, { maxFiles: 2 });
    expect(two.body.truncated).toBe(true);
    expect(two.body.files).toEqual(full.body.files.slice(0, 2));
    expect(two.body.counts.files).toBe(2);
    const small = await snap(root, { maxBytes: 10 });
    expect(small.body.truncated).toBe(true);
    expect(small.body.counts.bytes).toBeLessThanOrEqual(10);
  });

  it('6. rejects escaping globs (ERR_CONTAINMENT) and followSymlinks (ERR_UNSUPPORTED_OP)', async () => {
    await expect(snap(root, { include: ['../**'] })).rejects.toMatchObject({ code: 'ERR_CONTAINMENT' });
    await expect(snap(root, { exclude: ['/etc/*'] })).rejects.toMatchObject({ code: 'ERR_CONTAINMENT' });
    await expect(snap(root, { followSymlinks: true })).rejects.toMatchObject({ code: 'ERR_UNSUPPORTED_OP' });
  });

  it('7. symlinks and mode: exec bit, inside link hashed, outside and dangling links not', async () => {
    const outside = tempDir();
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'TOP-SECRET-CONTENT');
    fs.chmodSync(path.join(root, 'src/a.ts'), 0o755);
    fs.symlinkSync('src/a.ts', path.join(root, 'alias'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'leak'));
    fs.symlinkSync('missing', path.join(root, 'dangling'));
    const s = await snap(root);
    const by = new Map(s.body.files.map((f) => [f.path, f]));
    const a = by.get('src/a.ts')!;
    expect(a.mode).toBe('0755');
    expect(by.get('alias')).toEqual({ path: 'alias', bytes: a.bytes, sha256: a.sha256, mode: '0755', kind: 'symlink' });
    expect(by.get('leak')).toEqual({ path: 'leak', bytes: 0, mode: '0644', kind: 'symlink' });
    expect(by.get('dangling')).toEqual({ path: 'dangling', bytes: 0, mode: '0644', kind: 'symlink' });
    expect(JSON.stringify(s)).not.toContain('TOP-SECRET');
  });
});

describe('diffSnapshots (upstream case)', () => {
  it('8. reports added (code-point order), removed, and changed with both digests; diff(a,a) is empty', async () => {
    const a = await snap(root);
    fs.writeFileSync(path.join(root, 'src/a.ts'), 'changed content\n');
    fs.writeFileSync(path.join(root, 'new.txt'), 'n');
    fs.writeFileSync(path.join(root, 'Z.txt'), 'z');
    fs.rmSync(path.join(root, 'README.md'));
    const b = await snap(root);
    const d = diffSnapshots(a, b);
    expect(d.added).toEqual(['Z.txt', 'new.txt']);
    expect(d.removed).toEqual(['README.md']);
    const shaOf = (s: typeof a, p: string) => s.body.files.find((f) => f.path === p)!.sha256;
    expect(d.changed).toEqual([{ path: 'src/a.ts', from: shaOf(a, 'src/a.ts'), to: shaOf(b, 'src/a.ts') }]);
    expect(diffSnapshots(a, a)).toEqual({ added: [], removed: [], changed: [] });
  });
});

describe('library equivalent of the upstream MCP case', () => {
  it('9. include src/** gives 2 schema-valid files; a bad include is ERR_CONTAINMENT; a missing root is ERR_ROOT_NOT_FOUND', async () => {
    const s = await snap(root, { include: ['src/**'] });
    expect(validate(s)).toBe(true);
    expect(s.body.counts.files).toBe(2);
    expect(s.body.files.map((f) => f.path)).toEqual(['src/a.ts', 'src/deep/b.ts']);
    await expect(snap(root, { include: ['../x'] })).rejects.toMatchObject({ code: 'ERR_CONTAINMENT' });
    await expect(snap(path.join(root, 'nope'))).rejects.toMatchObject({ code: 'ERR_ROOT_NOT_FOUND' });
    await expect(snap(path.join(root, 'README.md'))).rejects.toMatchObject({ code: 'ERR_ROOT_NOT_DIR' });
  });
});
