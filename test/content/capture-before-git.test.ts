/**
 * Post copies the bytes of the paths the iteration changed before it waits for git's status
 * (content/capture.ts, copyPostContent), and pre finds git's dirty paths in the inventory by a
 * binary search when the inventory is in a scan's order. Neither may change what is kept or
 * recorded: every changed path's two sides must come back, the record must name the post side's
 * commit in git and no commit outside it, the baseline must move outside git only, and a lookup
 * must find exactly what a map of every entry finds, whatever the entries' order.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entryFinder } from '../../src/content/capture.js';
import { openIteration } from '../../src/content/index.js';
import { SnapshotManager, createNextIterationDir } from '../../src/session/index.js';
import type { InventoryEntry } from '../../src/session/inventory-store/inventory-store.js';
import type { PostSnapshot, PreSnapshot } from '../../src/session/types.js';
import { commitAll, git, trackedDirs, useTempCacheHome } from '../session/helpers.js';

useTempCacheHome();
const { repo, dir: tempDir } = trackedDirs();

type Op = { kind: 'write' | 'append' | 'delete' | 'commit' | 'stage'; pick: number; text: string };
const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom('write', 'append', 'delete', 'commit', 'stage'),
  pick: fc.nat(1000),
  text: fc.string({ minLength: 1, maxLength: 10 }),
});

/** Applies `op` to the tree and to `state` (path → bytes, what the tree holds now). */
function apply(root: string, inGit: boolean, state: Map<string, string>, op: Op, serial: number): void {
  const paths = [...state.keys()].sort();
  const pick = paths.length > 0 ? paths[op.pick % paths.length]! : null;
  if (op.kind === 'write' || pick === null) {
    const rel = `d${op.pick % 3}/n${serial}.txt`;
    fs.mkdirSync(path.join(root, path.dirname(rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), op.text);
    state.set(rel, op.text);
  } else if (op.kind === 'append') {
    fs.appendFileSync(path.join(root, pick), op.text);
    state.set(pick, state.get(pick)! + op.text);
  } else if (op.kind === 'delete') {
    fs.rmSync(path.join(root, pick));
    state.delete(pick);
  } else if (op.kind === 'commit' && inGit) {
    commitAll(root, `c${serial}`);
  } else if (op.kind === 'stage' && inGit) {
    git(root, 'add', '-A');
  }
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

describe('post content copied before git answers', () => {
  it('keeps both sides of every changed path and records the post side\'s commit, in git and outside it, for random edit sequences', () => {
    let checkedPaths = 0;
    fc.assert(
      fc.property(fc.boolean(), fc.array(fc.array(opArb, { minLength: 1, maxLength: 5 }), { minLength: 2, maxLength: 5 }), (inGit, iterations) => {
        const root = inGit ? repo() : tempDir();
        const state = new Map<string, string>();
        let serial = 0;
        for (let i = 0; i < 3; i++) apply(root, inGit, state, { kind: 'write', pick: i, text: `seed ${i}\n` }, serial++);
        if (inGit) commitAll(root, 'init');
        for (const ops of iterations) {
          const dir = createNextIterationDir(root);
          const pre = new SnapshotManager(root).capturePreSnapshot(root, dir);
          const before = new Map(state);
          for (const op of ops) apply(root, inGit, state, op, serial++);
          const post = new SnapshotManager(root).capturePostSnapshot(root, dir);
          expect(readJson<PreSnapshot>(path.join(dir, 'pre-snapshot.json')).inventory).toEqual(pre.inventory);
          expect(readJson<PostSnapshot>(path.join(dir, 'post-snapshot.json'))).toEqual(post);
          // The record: the post side's commit in git (it is what restores the untouched paths), none outside.
          if (inGit) expect(post.content?.gitCommit).toBe(post.git.commit);
          else expect(post.content?.gitCommit).toBeUndefined();
          const baseline = path.join(root, '.cairn', 'content', 'baseline.json');
          if (inGit) expect(fs.existsSync(baseline)).toBe(false);
          else expect(readJson<{ digest: string }>(baseline).digest).toBe(post.inventory?.digest);
          expect(post.content?.notRestorable).toBeUndefined();
          expect(post.content?.preNotRestorable).toBeUndefined();
          // The bytes: both sides of every path the iteration changed come back as they were.
          const changed = post.workingTree!;
          const iteration = openIteration(root, path.basename(dir));
          for (const p of [...changed.added, ...changed.modified, ...changed.deleted]) {
            expect(iteration.read('pre', p)?.bytes?.toString('utf8') ?? null, `pre ${p}`).toBe(before.get(p) ?? null);
            expect(iteration.read('post', p)?.bytes?.toString('utf8') ?? null, `post ${p}`).toBe(state.get(p) ?? null);
            checkedPaths++;
          }
        }
      }),
      { numRuns: 15 },
    );
    expect(checkedPaths).toBeGreaterThan(15);
  });
});

describe("pre's lookup of git's dirty paths in the inventory", () => {
  const entry = (p: string): InventoryEntry => ({ path: p, bytes: p.length, sha256: 'a'.repeat(64), mode: '0644', kind: 'file' });
  const pathArb = fc.array(fc.constantFrom('a', 'b', 'B', '-', '.', '/', 'é', 'z', '\u{1F600}', ' '), { minLength: 1, maxLength: 6 }).map((cs) => cs.join(''));

  it('finds what a map of every entry finds, for entries in a scan\'s order, shuffled, or with names appended after it', () => {
    fc.assert(
      fc.property(fc.uniqueArray(pathArb, { maxLength: 40 }), fc.array(pathArb, { maxLength: 20 }), fc.constantFrom('sorted', 'shuffled', 'appended'), fc.nat(), (paths, extra, order, seed) => {
        const sorted = [...paths].sort();
        let files: string[];
        if (order === 'sorted') files = sorted;
        else if (order === 'shuffled') files = sorted.map((p, i) => ({ p, k: (i * 7919 + seed) % 104729 })).sort((a, b) => a.k - b.k).map((x) => x.p);
        else files = [...sorted.slice(1), ...sorted.slice(0, 1)]; // a recovered name after the scan's entries
        const entries = files.map(entry);
        const map = new Map(entries.map((e) => [e.path, e]));
        const find = entryFinder(entries);
        for (const p of [...paths, ...extra]) expect(find(p)).toBe(map.get(p));
      }),
      { numRuns: 500 },
    );
  });
});
