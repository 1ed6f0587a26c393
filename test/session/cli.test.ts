/** `cairn session pre|post|report|prune` through the built CLI (run `npm run build` first). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorJson, runCli } from '../support/cli.js';
import { commitAll, git, write, trackedDirs } from './helpers.js';
import type { SnapshotDiff } from '../../src/session/index.js';

const { repo, dir: scratch } = trackedDirs();

function cli(args: string[], cwd: string) {
  const cache = scratch('cairn-cache-');
  return runCli(args, { cwd, env: { XDG_CACHE_HOME: cache } });
}

describe('cairn session pre', () => {
  it('creates numbered iteration directories 001, 002 and prints each', () => {
    const root = repo();
    const first = cli(['session', 'pre'], root);
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe(path.join(root, '.cairn', 'iterations', '001'));
    const second = cli(['session', 'pre', '--root', root], scratch());
    expect(second.stdout.trim()).toBe(path.join(root, '.cairn', 'iterations', '002'));
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations', '002', 'pre-snapshot.json'))).toBe(true);
  });

  it('prints one JSON document with --json and honours --iteration-dir and --state-dir', () => {
    const root = repo();
    write(root, '.agent/notes.md', 'n');
    const r = cli(['session', 'pre', '--iteration-dir', 'custom/it', '--state-dir', '.agent', '--json'], root);
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as { iterationDir: string; pre: { stateDir: string; aiwg: { files: { path: string }[] } } };
    expect(doc.iterationDir).toBe(path.join(root, 'custom', 'it'));
    expect(doc.pre.stateDir).toBe('.agent');
    expect(doc.pre.aiwg.files.map((f) => f.path)).toEqual(['.agent/notes.md']);
  });

  it('exits 2 with a clear error for a root that does not exist', () => {
    const r = cli(['session', 'pre', '--root', '/definitely/not/here'], scratch());
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stderr) as { code: string }).toMatchObject({ code: 'ERR_ROOT_NOT_FOUND' });
    expect(r.stdout).toBe('');
  });
});

describe('cairn session post', () => {
  it('reports uncommitted, untracked and committed work and saves the record to the store', () => {
    const root = repo();
    write(root, 'src/app.ts', 'export const v = 1;\n');
    write(root, 'package.json', '{"name":"demo"}');
    commitAll(root, 'init');
    expect(cli(['session', 'pre'], root).status).toBe(0);

    write(root, 'src/app.ts', 'export const v = 2;\n');
    write(root, 'notes/by-bash.txt', 'made by a shell\n');
    write(root, 'src/feature.ts', 'export {};\n');
    git(root, 'add', 'src/feature.ts');
    git(root, 'commit', '-q', '-m', 'add feature');

    const r = cli(['session', 'post'], root);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('notes/by-bash.txt');
    expect(r.stdout).toContain('src/app.ts');
    expect(r.stdout).toMatch(/Commits \(1\)\n\s+[0-9a-f]{12} add feature/);
    expect(r.stderr).toMatch(/iteration record saved to the store \(session default/);

    const storeDir = path.join(root, '.cairn', 'store', 'default', 'scopes', 'agent', 'iterations', 'snapshots');
    const latest = JSON.parse(fs.readFileSync(path.join(storeDir, 'snapshot_latest.json'), 'utf8')) as { data: { diff: SnapshotDiff; pre: unknown; post: unknown } };
    expect(latest.data.diff.filesAdded).toEqual(['notes/by-bash.txt', 'src/feature.ts']);
    expect(latest.data.pre).toBeDefined();
    expect(latest.data.post).toBeDefined();
    expect(fs.readdirSync(path.join(storeDir, 'immutable_history'))).toHaveLength(1);

    const listed = cli(['store', 'list', '--session', 'default', '--json'], root);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain('iterations');
  });

  it('prints exactly the SnapshotDiff with --json and uses --session', () => {
    const root = repo();
    commitAll(root, 'init');
    cli(['session', 'pre'], root);
    write(root, 'new.txt', 'n');
    const r = cli(['session', 'post', '--json', '--session', 'agent-7'], root);
    expect(r.status).toBe(0);
    const diff = JSON.parse(r.stdout) as SnapshotDiff; // the spec: `--json` prints the SnapshotDiff
    expect(diff.filesAdded).toEqual(['new.txt']);
    expect(diff.filesSource).toBe('working-tree');
    expect(fs.existsSync(path.join(root, '.cairn', 'store', 'agent-7', 'scopes', 'agent', 'iterations', 'snapshots', 'snapshot_latest.json'))).toBe(true);
  });

  it('saves nothing with --no-store, and rejects a bad --session with exit 2', () => {
    const root = repo();
    cli(['session', 'pre'], root);
    expect(cli(['session', 'post', '--no-store'], root).status).toBe(0);
    expect(fs.existsSync(path.join(root, '.cairn', 'store'))).toBe(false);
    const bad = cli(['session', 'post', '--session', 'Bad Id'], root);
    expect(bad.status).toBe(2);
  });

  it('exits 2 before taking the post-snapshot when the store URL is not usable, so the iteration can still be finished', () => {
    const root = repo();
    cli(['session', 'pre'], root);
    const r = cli(['session', 'post', '--store', 'gopher://nowhere'], root);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('gopher');
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations', '001', 'post-snapshot.json'))).toBe(false);
    expect(cli(['session', 'post'], root).status).toBe(0);
  });

  it('prints a store failure as the JSON error document every command prints, exit 1', () => {
    const root = repo();
    expect(cli(['session', 'pre'], root).status).toBe(0);
    const inTheWay = path.join(scratch('cairn-store-'), 'plain-file');
    fs.writeFileSync(inTheWay, 'not a directory');
    const r = cli(['session', 'post', '--store', inTheWay], root);
    expect(r.status).toBe(1);
    const err = errorJson(r.stderr);
    expect(err.code).toBe('ERR_IO');
    expect(err.message).toContain('Failed to write file');
  });

  it('fails with a clear message when no pre-snapshot exists', () => {
    const root = repo();
    const r = cli(['session', 'post'], root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('cairn session pre');
    const explicit = cli(['session', 'post', '--iteration-dir', 'nowhere'], root);
    expect(explicit.status).toBe(1);
    expect(explicit.stderr).toContain('Pre-snapshot not found - cannot capture post-snapshot');
  });
});

describe('cairn session report', () => {
  it('re-renders the latest iteration, or a given one, as text or JSON', () => {
    const root = repo();
    commitAll(root, 'init');
    cli(['session', 'pre'], root);
    write(root, 'a.txt', 'a');
    const post = cli(['session', 'post', '--json', '--no-store'], root);
    const report = cli(['session', 'report', '--json'], root);
    expect(report.status).toBe(0);
    const { iterationDir: _dir, saved: _saved, ...postDiff } = JSON.parse(post.stdout) as { iterationDir: string; saved: unknown };
    expect(JSON.parse(report.stdout)).toEqual(postDiff);
    const text = cli(['session', 'report', path.join(root, '.cairn', 'iterations', '001')], scratch());
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/Files changed \(working tree, committed or not\): 1, \+1 -0\n {2}A {2}a\.txt {2}\+1\n/);
  });
});

describe('cairn session prune', () => {
  it('keeps the newest iterations and collects inventories only they referenced', () => {
    const root = repo();
    for (let i = 0; i < 3; i++) {
      write(root, `file${i}.txt`, String(i));
      cli(['session', 'pre'], root);
      cli(['session', 'post', '--no-store'], root);
    }
    const r = cli(['session', 'prune', '--keep-last', '1', '--grace-minutes', '0', '--json'], root);
    expect(r.status).toBe(0);
    const result = JSON.parse(r.stdout) as { iterationsDeleted: string[]; inventories: { deleted: number } };
    expect(result.iterationsDeleted.map((d) => path.basename(d))).toEqual(['001', '002']);
    expect(result.inventories.deleted).toBeGreaterThan(0);
    expect(fs.readdirSync(path.join(root, '.cairn', 'iterations'))).toEqual(['003']);
    expect(cli(['session', 'report', '--json'], root).status).toBe(0);
  });
});

describe('help', () => {
  it('explains the flow', () => {
    const r = cli(['session', '--help'], scratch());
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('cairn session pre');
    expect(r.stdout).toContain('cairn session post');
  });
});
