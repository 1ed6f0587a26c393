// `cairn snapshot` and `cairn snapshot-diff` through the built CLI (run `npm run build` first).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepoSnapshotSchema, makeRepoSnapshot, type RepoSnapshot } from '../../src/inventory/index.js';
import { spawn, spawnSync } from 'node:child_process';
import { CLI, errorJson, runCli } from '../support/cli.js';
import { cleanupTempDirs, tempDir, writeTree } from '../inventory/helpers.js';

const validate = new Ajv2020({ strict: true }).compile(RepoSnapshotSchema);
let root: string;
let work: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  root = tempDir();
  work = tempDir('cairn-cli-');
  env = { XDG_CACHE_HOME: path.join(work, 'xdg') };
  writeTree(root, { '.gitignore': '*.log\n', 'a.txt': 'alpha\n', 'src/b.ts': 'export {};\n', 'x.log': 'log', 'bad ': 'trailing space' });
});
afterAll(cleanupTempDirs);

const cli = (args: string[], cwd = work) => runCli(args, { cwd, env });

describe('cairn snapshot', () => {
  it('prints the snapshot (schema-valid, 2-space JSON) and a one-line skipped count on stderr', () => {
    const r = cli(['snapshot', '--root', root]);
    expect(r.status).toBe(0);
    const snap = JSON.parse(r.stdout) as RepoSnapshot;
    expect(validate(snap)).toBe(true);
    expect(r.stdout).toBe(`${JSON.stringify(snap, null, 2)}\n`);
    expect(snap.body.files.map((f) => f.path)).toEqual(['.gitignore', 'a.txt', 'src/b.ts']);
    expect(r.stderr).toBe('cairn: 1 path skipped (1 invalid-name); --verbose lists them\n');
  });

  it('with -o naming a FIFO writes the document into it and leaves it a FIFO (never renamed over, as /dev/null must not be)', async () => {
    const dir = tempDir('cairn-cli-fifo-');
    const fifo = path.join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const expected = cli(['snapshot', '--root', root]).stdout;
    // The executable (its snapshot lane) and the full CLI (dist/bin/main.mjs run as the process).
    for (const bin of [CLI, path.join(path.dirname(CLI), 'main.mjs')]) {
      const got = path.join(dir, 'got.json');
      const reader = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', fifo, got], { stdio: 'ignore' });
      const readerDone = new Promise<void>((resolve) => reader.on('close', () => resolve()));
      const r = spawnSync(process.execPath, [bin, 'snapshot', '--root', root, '-o', fifo], { cwd: work, env: { ...process.env, CI: '1', ...env }, encoding: 'utf8', timeout: 60_000 });
      await readerDone;
      expect(r.status, r.stderr).toBe(0);
      expect(fs.readFileSync(got, 'utf8')).toBe(expected);
      expect(JSON.parse(r.stdout)).toMatchObject({ out: fifo, snapshotDigest: (JSON.parse(expected) as RepoSnapshot).snapshotDigest });
      expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
      expect(fs.readdirSync(dir).sort()).toEqual(['got.json', 'pipe']); // no temp file left beside it
    }
  });

  it('with -o writes the snapshot file and prints the one-line summary {snapshotDigest, files, bytes, truncated, out}', () => {
    const r = cli(['snapshot', '--root', root, '-o', 'snap.json']);
    expect(r.status).toBe(0);
    const written = fs.readFileSync(path.join(work, 'snap.json'), 'utf8');
    const snap = JSON.parse(written) as RepoSnapshot;
    expect(written).toBe(`${JSON.stringify(snap, null, 2)}\n`);
    expect(JSON.parse(r.stdout)).toEqual({ snapshotDigest: snap.snapshotDigest, files: 3, bytes: snap.body.counts.bytes, truncated: false, out: path.join(work, 'snap.json') });
    expect(r.stdout.split('\n')).toEqual([expect.stringMatching(/^\{"snapshotDigest":.*\}$/), '']); // the seed's "one-line summary"
  });

  it('with -o naming a directory exits 2 (ERR_USAGE) before writing anything, and a missing directory is ERR_IO in words', () => {
    const parent = tempDir('cairn-out-');
    fs.mkdirSync(path.join(parent, 'out'));
    const r = cli(['snapshot', '--root', root, '-o', path.join(parent, 'out')]);
    expect(r.status).toBe(2);
    expect(errorJson(r.stderr)).toMatchObject({ code: 'ERR_USAGE', path: path.join(parent, 'out') });
    expect(fs.readdirSync(parent)).toEqual(['out']);
    expect(fs.readdirSync(path.join(parent, 'out'))).toEqual([]);
    const missing = cli(['snapshot', '--root', root, '-o', path.join(parent, 'no', 'x.json')]);
    expect(missing.status).toBe(1);
    const error = errorJson(missing.stderr);
    expect(error.code).toBe('ERR_IO');
    expect(error.message).toContain(`the directory ${path.join(parent, 'no')} does not exist`);
    expect(error.message).not.toContain('cairn-tmp');
  });

  it('resolves a relative --root and honours --include/--exclude (repeatable), --no-gitignore, --no-digest, --max-files', () => {
    const rel = path.relative(work, root);
    const inc = JSON.parse(cli(['snapshot', '--root', rel, '--include', 'src/**', '--include', '*.txt']).stdout) as RepoSnapshot;
    expect(inc.body.files.map((f) => f.path)).toEqual(['a.txt', 'src/b.ts']);
    const exc = JSON.parse(cli(['snapshot', '--root', root, '--exclude', 'src', '--exclude', '.gitignore']).stdout) as RepoSnapshot;
    expect(exc.body.files.map((f) => f.path)).toEqual(['a.txt']);
    const all = JSON.parse(cli(['snapshot', '--root', root, '--no-gitignore', '--no-digest']).stdout) as RepoSnapshot;
    expect(all.body.files.map((f) => f.path)).toEqual(['.gitignore', 'a.txt', 'src/b.ts', 'x.log']);
    expect(all.body.files.some((f) => 'sha256' in f)).toBe(false);
    const capped = JSON.parse(cli(['snapshot', '--root', root, '--max-files', '1']).stdout) as RepoSnapshot;
    expect(capped.body).toMatchObject({ truncated: true, counts: { files: 1 } });
  });

  it('gives the same snapshot whatever --jobs is, and rejects a non-integer --jobs', () => {
    const base = cli(['snapshot', '--root', root, '--no-cache']).stdout;
    expect(cli(['snapshot', '--root', root, '--no-cache', '--jobs', '0']).stdout).toBe(base);
    expect(cli(['snapshot', '--root', root, '--no-cache', '--jobs', '3']).stdout).toBe(base);
    expect(cli(['snapshot', '--root', root, '--jobs', 'two']).status).toBe(2);
  });

  it('lists skipped paths with --verbose', () => {
    const r = cli(['snapshot', '--root', root, '--verbose', '-o', 'v.json']);
    expect(r.stderr).toContain('cairn: skipped "bad ": invalid-name (segment ends with a space)');
    expect(r.stderr).toContain('1 path skipped (1 invalid-name)\n');
  });

  it('exits 2 on usage errors: missing --root, non-integer limits, unknown flags', () => {
    expect(cli(['snapshot']).status).toBe(2);
    expect(cli(['snapshot', '--root', root, '--max-files', 'abc']).status).toBe(2);
    expect(cli(['snapshot', '--root', root, '--max-bytes', '-1']).status).toBe(2);
    expect(cli(['snapshot', '--root', root, '--bogus']).status).toBe(2);
  });

  it.each([
    [['--max-files', '0'], 'ERR_INVALID_OPTION'],
    [['--include', '../**'], 'ERR_CONTAINMENT'],
    [['--exclude', '/etc/*'], 'ERR_CONTAINMENT'],
  ])('prints {code, message, details} on stderr and exits 2 for %j', (extra, code) => {
    const r = cli(['snapshot', '--root', root, ...extra]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(errorJson(r.stderr)).toMatchObject({ code, message: expect.any(String) as unknown });
  });

  it('reports a missing root and a file root with their codes (exit 2)', () => {
    const missing = cli(['snapshot', '--root', path.join(root, 'nope')]);
    expect(missing.status).toBe(2);
    expect(errorJson(missing.stderr)).toMatchObject({ code: 'ERR_ROOT_NOT_FOUND', path: path.join(root, 'nope') });
    const file = cli(['snapshot', '--root', path.join(root, 'a.txt')]);
    expect(file.status).toBe(2);
    expect(errorJson(file.stderr).code).toBe('ERR_ROOT_NOT_DIR');
  });

  it('keeps its stat cache in --cache-dir, and none at all with --no-cache', async () => {
    const tree = tempDir();
    writeTree(tree, { a: 'a' });
    await new Promise((r) => setTimeout(r, 2100)); // past the racy margin, so the entry is cacheable
    const cacheDir = path.join(work, 'c1');
    expect(cli(['snapshot', '--root', tree, '--cache-dir', cacheDir, '-o', 'c1.json']).status).toBe(0);
    expect(fs.readdirSync(cacheDir).filter((f) => f.endsWith('.cache'))).toHaveLength(1);
    const xdgBefore = fs.existsSync(env.XDG_CACHE_HOME!) ? fs.readdirSync(env.XDG_CACHE_HOME!, { recursive: true }).length : 0;
    expect(cli(['snapshot', '--root', tree, '--no-cache', '-o', 'c2.json']).status).toBe(0);
    const xdgAfter = fs.existsSync(env.XDG_CACHE_HOME!) ? fs.readdirSync(env.XDG_CACHE_HOME!, { recursive: true }).length : 0;
    expect(xdgAfter).toBe(xdgBefore);
    expect(fs.readFileSync(path.join(work, 'c1.json'), 'utf8')).toBe(fs.readFileSync(path.join(work, 'c2.json'), 'utf8'));
  });

  it('--help explains the command with examples', () => {
    const r = cli(['snapshot', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--root <dir>');
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain('--no-cache');
  });
});

describe('cairn snapshot-diff', () => {
  let before: string;
  let after: string;
  beforeAll(() => {
    const tree = tempDir();
    writeTree(tree, { a: 'a', b: 'b' });
    before = path.join(work, 'before.json');
    after = path.join(work, 'after.json');
    expect(cli(['snapshot', '--root', tree, '-o', before]).status).toBe(0);
    fs.writeFileSync(path.join(tree, 'b'), 'bb');
    fs.writeFileSync(path.join(tree, 'c'), 'c');
    expect(cli(['snapshot', '--root', tree, '-o', after]).status).toBe(0);
  });

  it('prints the diff and exits 0; --exit-code exits 1 on differences and 0 without', () => {
    const r = cli(['snapshot-diff', before, after]);
    expect(r.status).toBe(0);
    const d = JSON.parse(r.stdout) as { added: string[]; removed: string[]; changed: { path: string }[] };
    expect(d.added).toEqual(['c']);
    expect(d.removed).toEqual([]);
    expect(d.changed.map((c) => c.path)).toEqual(['b']);
    expect(cli(['snapshot-diff', before, after, '--exit-code']).status).toBe(1);
    const same = cli(['snapshot-diff', before, before, '--exit-code']);
    expect(same.status).toBe(0);
    expect(JSON.parse(same.stdout)).toEqual({ added: [], removed: [], changed: [] });
  });

  it('rejects an invalid document (ERR_INVALID_SNAPSHOT) and a tampered one (ERR_DIGEST_MISMATCH) with exit 2', () => {
    const bad = path.join(work, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ apiVersion: 'axiom.dev/v2', kind: 'Manifest' }));
    const r1 = cli(['snapshot-diff', bad, after]);
    expect(r1.status).toBe(2);
    expect(errorJson(r1.stderr)).toMatchObject({ code: 'ERR_INVALID_SNAPSHOT', path: bad });
    const tampered = path.join(work, 'tampered.json');
    const doc = JSON.parse(fs.readFileSync(before, 'utf8')) as RepoSnapshot;
    doc.body.files[0]!.bytes += 1;
    fs.writeFileSync(tampered, JSON.stringify(doc));
    const r2 = cli(['snapshot-diff', before, tampered]);
    expect(r2.status).toBe(2);
    expect(errorJson(r2.stderr).code).toBe('ERR_DIGEST_MISMATCH');
    const notJson = path.join(work, 'notjson.json');
    fs.writeFileSync(notJson, '{');
    expect(errorJson(cli(['snapshot-diff', notJson, after]).stderr).code).toBe('ERR_INVALID_SNAPSHOT');
    expect(cli(['snapshot-diff', path.join(work, 'missing.json'), after]).status).toBe(2);
    expect(cli(['snapshot-diff', before]).status).toBe(2);
  });

  it('rejects a document whose entry path escapes the root (../x), even with a recomputed digest, with exit 2', () => {
    const escaping = path.join(work, 'escaping.json');
    const doc = JSON.parse(fs.readFileSync(before, 'utf8')) as RepoSnapshot;
    doc.body.files[0]!.path = '../outside';
    doc.snapshotDigest = makeRepoSnapshot(doc.body).snapshotDigest;
    fs.writeFileSync(escaping, JSON.stringify(doc));
    const r = cli(['snapshot-diff', before, escaping]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(errorJson(r.stderr)).toMatchObject({ code: 'ERR_INVALID_SNAPSHOT', path: escaping });
  });
});

describe('cairn writing into a pipe its reader closes early', () => {
  it('ends quietly with its own exit code when the reader stops (`| head`): no EPIPE stack trace', () => {
    const big = tempDir();
    const files: Record<string, string> = {};
    for (let i = 0; i < 1500; i++) files[`d${i % 30}/file-${i}.txt`] = `${i}\n`;
    writeTree(big, files);
    // More than a pipe holds (~200 KB of JSON), so the write meets the closed pipe.
    const r = spawnSync('bash', ['-c', 'set -o pipefail; "$0" "$1" snapshot --root "$2" --no-cache 2>"$3" | head -c 100 >/dev/null', process.execPath, CLI, big, path.join(work, 'epipe-stderr')], { encoding: 'utf8', env: { ...process.env, CI: '1' } });
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(work, 'epipe-stderr'), 'utf8')).toBe('');
  });
});
