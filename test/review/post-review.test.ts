/**
 * The review `session post` keeps is built from what the post has just captured (its records,
 * the inventories' last walk, the bytes it stored): it must be the review computed again from the
 * iteration on disk, byte for byte, as `session diff` computes it when no review was kept.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { commitAll, trackedDirs, useTempCacheHome, write } from '../session/helpers.js';
import { SnapshotManager } from '../../src/session/index.js';
import { capturedBytes } from '../../src/content/capture.js';
import { REVIEW_FILE, buildReview, loadIteration, reviewFinishedIteration } from '../../src/review/index.js';
import { everyChangeIteration } from './fixture.js';

useTempCacheHome();
const { repo, dir: scratch } = trackedDirs();

const fromDisk = (root: string, dir: string): string => `${JSON.stringify(buildReview(root, loadIteration(root, dir)))}\n`;

describe('the review kept at post', () => {
  it('is the review computed again from the iteration on disk, byte for byte (every kind of change)', () => {
    const cli = (args: string[], cwd: string) => runCli(args, { cwd, env: { XDG_CACHE_HOME: scratch('cairn-cache-') } });
    const { root } = everyChangeIteration(repo, cli);
    const dir = path.join(root, '.cairn', 'iterations', '001');
    expect(fs.readFileSync(path.join(dir, REVIEW_FILE), 'utf8')).toBe(fromDisk(root, dir));
  });

  it('diffs the bytes the post capture stored without reading them back, and says the same', () => {
    const root = repo();
    const body = (n: number): string => Array.from({ length: 60 }, (_, i) => `line ${n}.${i}\n`).join('');
    for (let n = 0; n < 20; n++) write(root, `src/f${n}.txt`, body(n));
    write(root, 'bin.dat', Buffer.from([0, 1, 2]));
    commitAll(root, 'init');
    const dir = path.join(root, '.cairn', 'iterations', '001');
    const manager = new SnapshotManager(root);
    const pre = manager.capturePreSnapshot(root, dir);
    for (let n = 0; n < 10; n++) fs.appendFileSync(path.join(root, `src/f${n}.txt`), `appended ${n}\n`);
    fs.renameSync(path.join(root, 'src/f10.txt'), path.join(root, 'src/moved.txt'));
    fs.rmSync(path.join(root, 'src/f11.txt'));
    write(root, 'src/new.txt', 'new\n');
    write(root, 'bin.dat', Buffer.from([0, 1, 3]));
    const post = manager.capturePostSnapshot(root, dir);
    const diff = manager.calculateDiff(pre, post);
    // the capture kept both sides of an edited file: the pre side from git, the post side from disk
    const kept = capturedBytes(post.content);
    const after = fs.readFileSync(path.join(root, 'src/f0.txt'));
    expect([...kept.values()].some((b) => b.equals(Buffer.from(body(0))))).toBe(true);
    expect([...kept.values()].some((b) => b.equals(after))).toBe(true);
    const held = reviewFinishedIteration(root, dir, { pre, post, diff });
    expect(held?.files).toHaveLength(14);
    const saved = fs.readFileSync(path.join(dir, REVIEW_FILE), 'utf8');
    expect(saved).toBe(`${JSON.stringify(held)}\n`);
    expect(saved).toBe(fromDisk(root, dir));
    // records read back from disk are not the capture's: their bytes come from the store
    expect(capturedBytes(loadIteration(root, dir).post?.content).size).toBe(0);
  });
});
