import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { call, connect, errorOf, listTree, makeTempDir, okText, removeDir, serverEnv, structured, write, type Connected } from './support.js';

interface Snapshot {
  apiVersion: string;
  kind: string;
  root: { kind: string };
  snapshotDigest: string;
  body: { files: Array<{ path: string; bytes: number; sha256?: string; mode: string; kind: string }>; truncated: boolean; counts: { files: number; bytes: number } };
}

interface Projection {
  snapshotDigest: string;
  counts: { files: number; bytes: number };
  truncated: boolean;
  paths: string[];
}

const validate = new Ajv2020({ strict: true }).compile(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'schemas', 'RepoSnapshot.schema.json'), 'utf8')) as object);

let tmp: string;
let project: string;
let second: string;
let outside: string;
let one: Connected;
let two: Connected;

/** The upstream test fixture (README, src/a.ts of 20 bytes, ignored and always-skipped files). */
function seedFixture(root: string): void {
  write(root, 'README.md', '# fixture\n');
  write(root, 'src/a.ts', 'export const a = 1;\n');
  write(root, 'src/deep/b.ts', 'export const b = 2;\n');
  write(root, 'src/z.log', 'log line\n');
  write(root, 'node_modules/dep/index.js', 'module.exports = 1;\n');
  write(root, '.git/HEAD', 'ref: refs/heads/main\n');
  // cairn skips its own .cairn/ where the seed skipped .axiom/ (spec/inventory.md).
  write(root, '.cairn/lock', '');
  write(root, '.gitignore', 'node_modules/\n*.log\n# a comment\n!keep.log\n');
}

beforeAll(async () => {
  tmp = makeTempDir();
  project = path.join(tmp, 'project');
  second = path.join(tmp, 'second');
  outside = path.join(tmp, 'outside');
  for (const d of [project, second, outside]) fs.mkdirSync(d);
  seedFixture(project);
  write(second, 'only-here.txt', 'second root\n');
  write(outside, 'secret.txt', 'not for the agent\n');
  const env = serverEnv(path.join(tmp, 'cache'));
  [one, two] = await Promise.all([connect(['--root', project], { env }), connect(['--root', project, '--root', second], { env })]);
});

afterAll(async () => {
  await Promise.all([one.close(), two.close()]);
  removeDir(tmp);
});

describe('the seed MCP behaviours', () => {
  it('snapshots the allowlisted root with include ["src/**"]: schema-valid structuredContent, right counts, the text projection with the same digest and paths', async () => {
    const result = await call(one.client, 'cairn_repo_snapshot', { include: ['src/**'] });
    const snap = structured<Snapshot>(result);
    expect(validate(snap), JSON.stringify(validate.errors)).toBe(true);
    expect(snap.body.files.map((f) => f.path)).toEqual(['src/a.ts', 'src/deep/b.ts']);
    expect(snap.body.counts).toEqual({ files: 2, bytes: 40 });
    expect(snap.body.files[0]).toMatchObject({ path: 'src/a.ts', bytes: 20, kind: 'file', mode: '0644' });
    expect(snap.body.files[0]?.sha256).toBe(createHash('sha256').update('export const a = 1;\n').digest('hex'));
    // snapshotDigest = sha256(JCS(body)), checked against the RFC 8785 oracle.
    expect(snap.snapshotDigest).toBe(`sha256:${createHash('sha256').update(canonicalize(snap.body) ?? '').digest('hex')}`);
    const text = okText<Projection>(result);
    expect(text).toEqual({ snapshotDigest: snap.snapshotDigest, counts: { files: 2, bytes: 40 }, truncated: false, paths: ['src/a.ts', 'src/deep/b.ts'] });
  });

  it('refuses a root outside the allowlist with ERR_ROOT_NOT_ALLOWED', async () => {
    const err = errorOf(await call(one.client, 'cairn_repo_snapshot', { root: outside }));
    expect(err.code).toBe('ERR_ROOT_NOT_ALLOWED');
    expect(err.path).toBe(outside);
    expect(JSON.stringify(err)).not.toContain('not for the agent');
  });

  it('refuses an escaping glob with ERR_CONTAINMENT', async () => {
    const err = errorOf(await call(one.client, 'cairn_repo_snapshot', { include: ['../x'] }));
    expect(err.code).toBe('ERR_CONTAINMENT');
    expect(err.details).toMatchObject({ glob: '../x' });
    for (const glob of ['/etc/*', '../**', 'src/../../x']) {
      expect(errorOf(await call(one.client, 'cairn_repo_snapshot', { exclude: [glob] })).code, glob).toBe('ERR_CONTAINMENT');
    }
  });
});

describe('the whole inventory', () => {
  it('skips .git/, .cairn/ and gitignored files, never records the absolute root, and is the same document on every call', async () => {
    const a = structured<Snapshot>(await call(one.client, 'cairn_repo_snapshot'));
    expect(a.body.files.map((f) => f.path)).toEqual(['.gitignore', 'README.md', 'src/a.ts', 'src/deep/b.ts']);
    expect(a.root).toEqual({ kind: 'relative' });
    expect(JSON.stringify(a)).not.toContain(project);
    const b = structured<Snapshot>(await call(one.client, 'cairn_repo_snapshot'));
    expect(b).toStrictEqual(a);
  });

  it('serves the same document under the seed name axiom_repo_snapshot', async () => {
    const cairn = structured<Snapshot>(await call(one.client, 'cairn_repo_snapshot', { include: ['src/**'] }));
    const axiom = structured<Snapshot>(await call(one.client, 'axiom_repo_snapshot', { include: ['src/**'] }));
    expect(axiom).toStrictEqual(cairn);
  });

  it('passes respectGitignore and withContentDigest through', async () => {
    const all = structured<Snapshot>(await call(one.client, 'cairn_repo_snapshot', { respectGitignore: false, withContentDigest: false }));
    const paths = all.body.files.map((f) => f.path);
    expect(paths).toContain('src/z.log');
    expect(paths).toContain('node_modules/dep/index.js');
    expect(paths.some((p) => p.startsWith('.git/') || p.startsWith('.cairn/'))).toBe(false);
    for (const f of all.body.files) expect(f.sha256).toBeUndefined();
  });

  it('truncates at maxFiles to a prefix of the full inventory, and says so in the text', async () => {
    const full = structured<Snapshot>(await call(one.client, 'cairn_repo_snapshot'));
    const result = await call(one.client, 'cairn_repo_snapshot', { maxFiles: 2 });
    const cut = structured<Snapshot>(result);
    expect(cut.body.truncated).toBe(true);
    expect(cut.body.files).toEqual(full.body.files.slice(0, 2));
    expect(okText<Projection>(result)).toMatchObject({ truncated: true, counts: { files: 2 }, paths: ['.gitignore', 'README.md'] });
  });

  it('lists only the first 20 paths in the text projection, all of them in structuredContent', async () => {
    const wide = path.join(project, 'wide');
    for (let i = 0; i < 25; i++) write(wide, `f${String(i).padStart(2, '0')}.txt`, `${i}\n`);
    try {
      const result = await call(one.client, 'cairn_repo_snapshot', { root: wide });
      expect(structured<Snapshot>(result).body.files).toHaveLength(25);
      const text = okText<Projection>(result);
      expect(text.paths).toEqual(Array.from({ length: 20 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`));
      expect(text.counts.files).toBe(25);
    } finally {
      removeDir(wide);
    }
  });

  it('writes nothing in the project it snapshots', async () => {
    const before = listTree(project);
    await call(one.client, 'cairn_repo_snapshot');
    await call(one.client, 'axiom_repo_snapshot', { include: ['src/**'] });
    expect(listTree(project)).toEqual(before);
  });
});

describe('root resolution', () => {
  it('needs a root when the server has two, with ERR_ROOT_REQUIRED', async () => {
    const err = errorOf(await call(two.client, 'cairn_repo_snapshot'));
    expect(err.code).toBe('ERR_ROOT_REQUIRED');
    expect(err.message).toContain('root');
  });

  it('snapshots either of two roots, or a directory inside one, when named', async () => {
    const s = structured<Snapshot>(await call(two.client, 'cairn_repo_snapshot', { root: second }));
    expect(s.body.files.map((f) => f.path)).toEqual(['only-here.txt']);
    const sub = structured<Snapshot>(await call(two.client, 'cairn_repo_snapshot', { root: path.join(project, 'src') }));
    expect(sub.body.files.map((f) => f.path)).toEqual(['a.ts', 'deep/b.ts', 'z.log']);
  });

  it('refuses a relative root, even one that names an allowed directory', async () => {
    for (const root of ['project', './project', 'src', '.']) {
      const err = errorOf(await call(one.client, 'cairn_repo_snapshot', { root }));
      expect(err.code, root).toBe('ERR_ROOT_NOT_ALLOWED');
      expect(err.message).toMatch(/absolute/);
    }
  });

  it('refuses a root that does not exist or is a file, and one that climbs out with ..', async () => {
    for (const root of [path.join(project, 'missing'), path.join(project, 'README.md'), `${project}/../outside`, '/']) {
      expect(errorOf(await call(one.client, 'cairn_repo_snapshot', { root })).code, root).toBe('ERR_ROOT_NOT_ALLOWED');
    }
  });
});

describe('input validation', () => {
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['followSymlinks: true', { followSymlinks: true }, 'followSymlinks'],
    ['maxFiles: 0', { maxFiles: 0 }, 'maxFiles'],
    ['maxFiles above the 50 000 cap', { maxFiles: 50_001 }, 'maxFiles'],
    ['a fractional maxFiles', { maxFiles: 1.5 }, 'maxFiles'],
    ['a negative maxBytes', { maxBytes: -1 }, 'maxBytes'],
    ['an empty include glob', { include: [''] }, 'include.0'],
    ['include as a string', { include: 'src/**' }, 'include'],
    ['a non-boolean respectGitignore', { respectGitignore: 'yes' }, 'respectGitignore'],
    ['an unknown argument', { maxfiles: 3 }, ''],
  ];
  for (const [what, args, field] of bad) {
    it(`rejects ${what} with ERR_INVALID_OPTION naming the field`, async () => {
      const err = errorOf(await call(one.client, 'cairn_repo_snapshot', args));
      expect(err.code).toBe('ERR_INVALID_OPTION');
      const issues = (err.details?.issues ?? []) as Array<{ path: string; message: string }>;
      expect(issues.length).toBeGreaterThan(0);
      if (field !== '') expect(issues.map((i) => i.path)).toContain(field);
      else expect(err.message).toContain('maxfiles');
    });
  }

  it('accepts the boundary values maxFiles 50 000 and maxBytes 0', async () => {
    const s = structured<Snapshot>(await call(one.client, 'cairn_repo_snapshot', { maxFiles: 50_000, maxBytes: 0 }));
    // maxBytes 0 keeps only leading zero-byte entries; the first file has bytes, so nothing.
    expect(s.body.counts.bytes).toBe(0);
    expect(s.body.truncated).toBe(true);
  });
});
