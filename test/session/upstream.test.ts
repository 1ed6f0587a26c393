/**
 * The 23 behaviours of upstream's own suite (AIWG test/unit/ralph-external/snapshot-manager.test.ts),
 * reproduced against real git in fresh temp repositories.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SnapshotManager } from '../../src/session/index.js';
import type { PostSnapshot, PreSnapshot } from '../../src/session/index.js';
import { commitAll, git, makeRepo, removeDir, seedIterationDir, write, useTempCacheHome } from './helpers.js';

useTempCacheHome();

let root: string;
let iterationDir: string;
let manager: SnapshotManager;

beforeEach(() => {
  root = makeRepo();
  iterationDir = seedIterationDir(root);
  manager = new SnapshotManager(root);
});
afterEach(() => removeDir(root));

describe('capturePreSnapshot', () => {
  it('captures timestamp, git, key files and state dir', () => {
    write(root, 'package.json', '{"name":"x"}');
    write(root, 'CLAUDE.md', '# claude');
    const pre = manager.capturePreSnapshot(root, iterationDir);
    expect(pre.timestamp).toBeDefined();
    expect(pre.git).toBeDefined();
    expect(pre.keyFiles).toBeDefined();
    expect(pre.aiwg).toBeDefined();
  });

  it('records branch and a real commit after the first commit', () => {
    write(root, 'package.json', '{}');
    commitAll(root, 'init');
    const pre = manager.capturePreSnapshot(root, iterationDir);
    expect(pre.git.branch).toBe('main');
    expect(pre.git.commit).not.toBe('unknown');
    expect(pre.git.commit).toBe(git(root, 'rev-parse', 'HEAD').trim());
  });

  it('snapshots each present key file with hash and size', () => {
    write(root, 'package.json', '{"name":"x"}');
    write(root, 'CLAUDE.md', '# c');
    write(root, 'CHANGELOG.md', '# log');
    const pre = manager.capturePreSnapshot(root, iterationDir);
    expect(pre.keyFiles).toHaveLength(3);
    const pkg = pre.keyFiles.find((f) => f.path === 'package.json');
    expect(pkg?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(pkg?.size).toBeGreaterThan(0);
  });

  it('lists the files of the .aiwg state directory', () => {
    write(root, '.aiwg/requirements/user-stories.md', '# stories');
    write(root, '.aiwg/requirements/use-cases.md', '# cases');
    const pre = manager.capturePreSnapshot(root, iterationDir);
    expect(pre.aiwg.files.length).toBeGreaterThan(0);
    expect(pre.aiwg.files.some((f) => f.path.includes('user-stories.md'))).toBe(true);
  });

  it('reads the internal Ralph state from .aiwg/ralph/current-loop.json', () => {
    write(root, '.aiwg/ralph/current-loop.json', JSON.stringify({ currentPhase: 'elaboration', iteration: 3 }));
    const pre = manager.capturePreSnapshot(root, iterationDir);
    expect(pre.aiwg.ralphState?.currentPhase).toBe('elaboration');
  });

  it('saves pre-snapshot.json in the iteration directory', () => {
    manager.capturePreSnapshot(root, iterationDir);
    const file = path.join(iterationDir, 'pre-snapshot.json');
    expect(fs.existsSync(file)).toBe(true);
    expect((JSON.parse(fs.readFileSync(file, 'utf8')) as PreSnapshot).timestamp).toBeDefined();
  });
});

describe('capturePostSnapshot', () => {
  beforeEach(() => {
    write(root, 'package.json', '{"name":"test"}');
    commitAll(root, 'initial');
    manager.capturePreSnapshot(root, iterationDir);
  });

  it("throws 'Pre-snapshot not found' without a pre-snapshot", () => {
    const missing = seedIterationDir(root, '999');
    expect(() => manager.capturePostSnapshot(root, missing)).toThrow('Pre-snapshot not found');
  });

  it('returns all six documented fields', () => {
    const post = manager.capturePostSnapshot(root, iterationDir);
    for (const key of ['timestamp', 'git', 'fileDiffs', 'commits', 'aiwg', 'tests'] as const) expect(post[key]).toBeDefined();
  });

  it('reports a new committed file as added', () => {
    write(root, 'new-file.ts', 'export const x = 1;\n');
    commitAll(root, 'add new file');
    const post = manager.capturePostSnapshot(root, iterationDir);
    expect(post.fileDiffs).toContainEqual({ path: 'new-file.ts', status: 'added' });
  });

  it('reports a modified committed file with its diff', () => {
    write(root, 'package.json', '{"name":"test","version":"2.0.0"}');
    commitAll(root, 'bump');
    const post = manager.capturePostSnapshot(root, iterationDir);
    const entry = post.fileDiffs.find((d) => d.path === 'package.json');
    expect(entry?.status).toBe('modified');
    expect(entry?.diff).toBeDefined();
    expect(entry?.diff).toContain('+{"name":"test","version":"2.0.0"}');
  });

  it('lists the commits made, newest first', () => {
    write(root, 'a.txt', 'a');
    commitAll(root, 'first commit');
    write(root, 'b.txt', 'b');
    commitAll(root, 'second commit');
    const post = manager.capturePostSnapshot(root, iterationDir);
    expect(post.commits).toHaveLength(2);
    expect(post.commits[0]).toContain('second commit');
    expect(post.commits[1]).toContain('first commit');
  });

  it('finds test-results.json', () => {
    write(root, 'test-results.json', JSON.stringify({ numTotalTests: 10, numPassedTests: 8, numFailedTests: 2, numPendingTests: 0 }));
    const post = manager.capturePostSnapshot(root, iterationDir);
    expect(post.tests.found).toBe(true);
    const summary = post.tests.summary as { total: number; passed: number };
    expect(summary.total).toBe(10);
    expect(summary.passed).toBe(8);
  });

  it('saves post-snapshot.json', () => {
    manager.capturePostSnapshot(root, iterationDir);
    const file = path.join(iterationDir, 'post-snapshot.json');
    expect(fs.existsSync(file)).toBe(true);
    expect((JSON.parse(fs.readFileSync(file, 'utf8')) as PostSnapshot).timestamp).toBeDefined();
  });
});

const gitState = { branch: 'main', commit: 'abc123', staged: [], unstaged: [], untracked: [] };

function handPre(overrides: Partial<PreSnapshot> = {}): PreSnapshot {
  return { timestamp: '2026-01-01T10:00:00.000Z', git: gitState, keyFiles: [], aiwg: { files: [], ralphState: null }, ...overrides };
}

function handPost(overrides: Partial<PostSnapshot> = {}): PostSnapshot {
  return {
    timestamp: '2026-01-01T11:00:00.000Z',
    git: { ...gitState, commit: 'def456' },
    fileDiffs: [],
    commits: [],
    aiwg: { files: [], ralphState: null },
    tests: { found: false },
    ...overrides,
  };
}

describe('calculateDiff', () => {
  it('computes duration, added and modified files and commit count', () => {
    const diff = manager.calculateDiff(
      handPre(),
      handPost({
        fileDiffs: [
          { path: 'new-file.ts', status: 'added' },
          { path: 'existing.ts', status: 'modified', diff: '...' },
        ],
        commits: ['def456 second', 'abc999 first'],
      }),
    );
    expect(diff.duration).toContain('1h');
    expect(diff.durationMs).toBeGreaterThan(3_000_000);
    expect(diff.filesAdded).toContain('new-file.ts');
    expect(diff.filesModified).toContain('existing.ts');
    expect(diff.commitCount).toBe(2);
  });

  it('reports a created state-dir artifact', () => {
    const file = { path: '.aiwg/requirements/user-stories.md', hash: 'a'.repeat(64), size: 10, mtime: '2026-01-01T10:30:00.000Z' };
    const diff = manager.calculateDiff(handPre(), handPost({ aiwg: { files: [file], ralphState: null } }));
    expect(diff.aiwgArtifactsCreated).toHaveLength(1);
  });

  it('reports an updated state-dir artifact', () => {
    const before = { path: '.aiwg/requirements/user-stories.md', hash: 'a'.repeat(64), size: 10, mtime: '2026-01-01T10:00:00.000Z' };
    const after = { ...before, hash: 'b'.repeat(64) };
    const diff = manager.calculateDiff(handPre({ aiwg: { files: [before], ralphState: null } }), handPost({ aiwg: { files: [after], ralphState: null } }));
    expect(diff.aiwgArtifactsUpdated).toHaveLength(1);
  });

  it('carries the test summary', () => {
    const diff = manager.calculateDiff(handPre(), handPost({ tests: { found: true, file: 'x', summary: { type: 'jest', total: 20, passed: 18, failed: 2, skipped: 0 } } }));
    expect(diff.hasTests).toBe(true);
    expect(diff.testSummary?.passed).toBe(18);
  });
});

describe('parseTestOutput', () => {
  it('parses Jest JSON', () => {
    const summary = manager.parseTestOutput(JSON.stringify({ numTotalTests: 15, numPassedTests: 13, numFailedTests: 2, numPendingTests: 0 })) as { type: string; total: number; passed: number };
    expect(summary.type).toBe('jest');
    expect(summary.total).toBe(15);
    expect(summary.passed).toBe(13);
  });

  it('parses the "Tests: X passed, X total" text pattern', () => {
    const summary = manager.parseTestOutput('Tests: 10 passed, 10 total\nTime: 5.2s') as { type: string; snippet: string };
    expect(summary.type).toBe('text');
    expect(summary.snippet).toContain('10 passed');
  });

  it('returns null for text without test output', () => {
    expect(manager.parseTestOutput('just some random log output')).toBeNull();
  });
});

describe('formatDuration', () => {
  it('formats seconds', () => expect(manager.formatDuration(45000)).toBe('45s'));
  it('formats minutes and seconds', () => expect(manager.formatDuration(135000)).toBe('2m 15s'));
  it('formats hours and minutes', () => expect(manager.formatDuration(7380000)).toBe('2h 3m'));
});
