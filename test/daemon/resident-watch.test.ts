/**
 * Issue 21, the long-running path: a resident process's captures lean on a tree watcher (stat
 * rows of directories with no event are not looked at again; `git status` is not run again while
 * nothing changed). Every record must still be exactly what a process without that knowledge
 * finds: checked against a scan with no cache and git's own status after random edit sequences on
 * real files, with the watcher's events dropped on purpose, and with a real queue overflow.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { commitAll, git, makeRepo, makeTempDir, removeDir } from '../session/helpers.js';

// The built package: the watcher runs on a thread of its own, which loads its built module.
const dist = (rel: string): string => pathToFileURL(path.join(REPO_ROOT, 'dist', rel)).href;
type Watched = typeof import('../../src/daemon/watched-manager.js');
type Lib = typeof import('../../src/index.js');
type Git = typeof import('../../src/session/capture/git.js');
const watched = (await import(dist('daemon/watched-manager.js'))) as Watched;
const lib = (await import(dist('index.js'))) as Lib;
const gitLib = (await import(dist('session/capture/git.js'))) as Git;

const dirs: string[] = [];
let savedCache: string | undefined;
beforeAll(() => {
  savedCache = process.env.XDG_CACHE_HOME;
  const cache = makeTempDir('cairn-watch-cache-');
  dirs.push(cache);
  process.env.XDG_CACHE_HOME = cache;
});
afterEach(() => watched.closeResidents());
afterAll(() => {
  if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = savedCache;
  for (const d of dirs) removeDir(d);
});

/** The inotify watches this process holds (its worker threads' included): the `inotify wd:` lines of its inotify descriptors. */
function inotifyWatches(): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (the readdir's own descriptor)
    }
    if (target !== 'anon_inode:inotify') continue;
    n += fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length;
  }
  return n;
}

function repo(): string {
  const root = makeRepo();
  dirs.push(root);
  for (let d = 0; d < 4; d++) {
    fs.mkdirSync(path.join(root, `d${d}`, 'sub'), { recursive: true });
    for (let f = 0; f < 3; f++) fs.writeFileSync(path.join(root, `d${d}`, `f${f}.txt`), `${d}.${f}\n`);
    fs.writeFileSync(path.join(root, `d${d}`, 'sub', 'deep.txt'), `deep ${d}\n`);
  }
  fs.writeFileSync(path.join(root, '.gitignore'), 'ignored/\n');
  fs.mkdirSync(path.join(root, 'ignored'));
  fs.writeFileSync(path.join(root, 'ignored', 'x.txt'), 'x\n');
  commitAll(root, 'init');
  return root;
}

/** What a process without any watcher or memo finds: every file read (no stat cache), and git's status. */
function expected(root: string): { files: unknown[]; git: unknown } {
  const scan = lib.scanTreeSync(root, { cache: false, withContentDigest: true });
  return { files: scan.files.map((f) => ({ path: f.path, bytes: f.bytes, sha256: f.sha256, mode: f.mode, kind: f.kind })), git: gitLib.captureGitStatus(root) };
}

function actual(root: string, record: { inventory?: { digest: string }; git: unknown }): { files: unknown[]; git: unknown } {
  const store = new lib.SnapshotManager(root).inventoryStore();
  const files = store.get(record.inventory!.digest).map((f) => ({ path: f.path, bytes: f.bytes, sha256: f.sha256, mode: f.mode, kind: f.kind }));
  return { files, git: record.git };
}

/** The directories and files of the tree now (outside .git, .cairn), sorted. */
function listing(root: string): { dirs: string[]; files: string[] } {
  const out = { dirs: [] as string[], files: [] as string[] };
  const walk = (rel: string): void => {
    for (const d of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.name === '.git' || d.name === '.cairn') continue;
      if (d.isDirectory()) {
        out.dirs.push(r);
        walk(r);
      } else if (d.isFile()) out.files.push(r);
    }
  };
  walk('');
  out.dirs.sort();
  out.files.sort();
  return out;
}

const OP_KINDS = ['write', 'append', 'sameSize', 'delete', 'chmod', 'newDir', 'renameDir', 'dirToSymlink', 'removeDir', 'commit', 'ignoredFile', 'gitignore', 'stage', 'exclude', 'switchBranch', 'nestedGitignore', 'unstage', 'untrackCommitted', 'resetMixed', 'nestedRepo'] as const;
type Op = { kind: (typeof OP_KINDS)[number]; pick: number; text: string };

const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom(...OP_KINDS),
  pick: fc.nat(1000),
  text: fc.string({ minLength: 1, maxLength: 12 }),
});

let serial = 0;
function apply(root: string, op: Op): void {
  const { dirs: ds, files: fsList } = listing(root);
  const file = fsList.length > 0 ? fsList[op.pick % fsList.length]! : null;
  const dir = ds.length > 0 ? ds[op.pick % ds.length]! : null;
  const abs = (rel: string): string => path.join(root, rel);
  switch (op.kind) {
    case 'write':
      fs.writeFileSync(abs(dir === null ? `n${serial++}.txt` : `${dir}/n${serial++}.txt`), op.text);
      break;
    case 'append':
      if (file !== null) fs.appendFileSync(abs(file), op.text);
      break;
    case 'sameSize':
      // Same size, other bytes, at once: only the racy rule or an event can tell.
      if (file !== null) {
        const old = fs.readFileSync(abs(file));
        fs.writeFileSync(abs(file), Buffer.from(old.map((b) => (b === 0x41 ? 0x42 : 0x41))));
      }
      break;
    case 'delete':
      if (file !== null) fs.rmSync(abs(file));
      break;
    case 'chmod':
      if (file !== null) fs.chmodSync(abs(file), (fs.statSync(abs(file)).mode & 0o100) !== 0 ? 0o644 : 0o755);
      break;
    case 'newDir': {
      const d = `${dir ?? ''}/new${serial++}`.replace(/^\//, '');
      fs.mkdirSync(abs(`${d}/inner`), { recursive: true });
      fs.writeFileSync(abs(`${d}/inner/a.txt`), op.text);
      break;
    }
    case 'renameDir':
      if (dir !== null && dir !== 'ignored') fs.renameSync(abs(dir), abs(`${dir}-moved${serial++}`));
      break;
    case 'dirToSymlink':
      if (dir !== null && dir !== 'ignored') {
        fs.rmSync(abs(dir), { recursive: true });
        fs.symlinkSync('.', abs(dir));
      }
      break;
    case 'removeDir':
      if (dir !== null && dir !== 'ignored') fs.rmSync(abs(dir), { recursive: true });
      break;
    case 'commit':
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '--allow-empty', '-m', `c${serial++}`);
      break;
    case 'ignoredFile':
      fs.mkdirSync(abs('ignored'), { recursive: true });
      fs.writeFileSync(abs(`ignored/i${serial++}.txt`), op.text);
      break;
    case 'gitignore':
      fs.appendFileSync(abs('.gitignore'), op.pick % 2 === 0 ? `*.tmp\n` : `${dir ?? 'none'}/\n`);
      break;
    case 'nestedGitignore':
      // A rule in a subdirectory: what git says of its siblings changes with no event on them.
      if (dir !== null && dir !== 'ignored' && file !== null) fs.appendFileSync(abs(`${dir}/.gitignore`), `${path.posix.basename(file)}\n`);
      break;
    case 'stage':
      // The index moves (`git add` between captures): staged entries change with no event in the tree.
      if (file !== null) {
        try {
          git(root, 'add', '-f', '--', file);
        } catch {
          // (a path git refuses, such as one beyond a symbolic link: nothing staged)
        }
      }
      break;
    case 'exclude':
      fs.appendFileSync(abs('.git/info/exclude'), op.pick % 2 === 0 ? `*.txt\n` : `${dir ?? 'none'}/\n`);
      break;
    case 'unstage':
      // A name leaves the index with no event in the tree: the file is untracked now.
      if (file !== null) {
        try {
          git(root, 'rm', '-q', '--cached', '--', file);
        } catch {
          // (not tracked)
        }
      }
      break;
    case 'untrackCommitted':
      // The same, committed: HEAD no longer has it either, so no status line names it but the untracked one.
      if (dir !== null) {
        try {
          git(root, 'rm', '-q', '-r', '--cached', '--', dir);
        } catch {
          // (nothing tracked there)
        }
        git(root, 'commit', '-q', '--allow-empty', '-m', `u${serial++}`);
      }
      break;
    case 'resetMixed':
      // The last commit undone, its files kept: what it added is untracked again.
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '--allow-empty', '-m', `r${serial++}`);
      if (op.pick % 2 === 0) {
        fs.writeFileSync(abs(`added${serial++}.txt`), op.text);
        git(root, 'add', '-A');
        git(root, 'commit', '-q', '--allow-empty', '-m', `r${serial++}`); // (empty when an exclude rule ignores the file)
      }
      git(root, 'reset', '-q', 'HEAD~1');
      break;
    case 'nestedRepo':
      // A repository inside the tree: git lists it as one untracked entry, `dir/`.
      if (dir !== null && dir !== 'ignored') {
        const nested = abs(`${dir}/repo${serial++}`);
        fs.mkdirSync(nested, { recursive: true });
        git(nested, 'init', '-q');
        fs.writeFileSync(path.join(nested, 'n.txt'), op.text);
        // (with a commit, so the outer `git add -A` of later steps can take it as a gitlink)
        git(nested, '-c', 'user.name=t', '-c', 'user.email=t@cairn.invalid', 'commit', '-q', '--allow-empty', '-m', 'nested');
      }
      break;
    case 'switchBranch':
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '--allow-empty', '-m', `b${serial++}`);
      git(root, 'switch', '-q', op.pick % 2 === 0 ? '-c' : '-C', `br${serial++}`, op.pick % 3 === 0 ? 'HEAD~1' : 'HEAD');
      break;
  }
}

/**
 * git through a logging wrapper, first on PATH (`take` captures and says which git commands ran; the
 * caller puts `savedPath` back), and a committed project in a folder of its own, so that core.worktree can
 * move the work tree's top to that folder; its resident manager and git are the process's.
 */
function loggedGitProject(options: { completeDeferred?: boolean } = {}) {
  const shim = makeTempDir('cairn-watch-git-');
  dirs.push(shim);
  const log = path.join(shim, 'log');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  // (the index a status read goes to a log of its own: GIT_INDEX_FILE, or `-` for the real one)
  fs.writeFileSync(path.join(shim, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\ncase "$*" in *' status '*) printf '%s\\n' "\${GIT_INDEX_FILE:--}" >> '${log}.index';; esac\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
  const savedPath = process.env.PATH;
  process.env.PATH = `${shim}:${savedPath ?? ''}`;
  const outer = makeTempDir('cairn-watch-outer-');
  dirs.push(outer);
  const root = path.join(outer, 'proj');
  fs.mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.email', 't@cairn.invalid');
  git(root, 'config', 'user.name', 'cairn test');
  fs.mkdirSync(path.join(root, 'd0'));
  for (const f of ['a.txt', 'b.txt']) fs.writeFileSync(path.join(root, 'd0', f), `${f}\n`);
  commitAll(root, 'init');
  const manager = watched.residentManager(root, {}, { readyTimeoutMs: 10_000 });
  const resident = watched.residentGitFor(root, path.join(root, '.cairn'));
  const iter = makeTempDir('cairn-watch-iter-');
  dirs.push(iter);
  let n = 0;
  let lastIndexes: string[] = [];
  /** One capture: the git commands it ran (rev-parse, status), its record checked against a fresh process's. */
  const take = (what: string): string[] => {
    fs.writeFileSync(log, '');
    fs.writeFileSync(`${log}.index`, '');
    const record = manager.capturePreSnapshot(root, path.join(iter, String(n++)));
    if (options.completeDeferred === true) resident.completeDeferred(); // as the daemon does once it answered
    const ran = fs.readFileSync(log, 'utf8').split('\n').filter((l) => / (rev-parse|status) /.test(l));
    lastIndexes = fs.readFileSync(`${log}.index`, 'utf8').split('\n').filter((l) => l !== '');
    expect(actual(root, record), what).toEqual(expected(root));
    return ran;
  };
  /** The index each status run of the latest take's capture read (GIT_INDEX_FILE, or `-`). */
  const indexes = (): string[] => lastIndexes;
  return { outer, root, resident, take, savedPath, indexes };
}

describe('a resident capture leaning on the tree watcher', () => {
  it('takes the records a process without it takes, for random edit sequences on real files', () => {
    let trusted = 0;
    let reused = 0;
    let partial = 0;
    let tracked = 0;
    let assumed = 0;
    fc.assert(
      fc.property(fc.array(fc.array(opArb, { minLength: 0, maxLength: 3 }), { minLength: 3, maxLength: 8 }), (steps) => {
        const root = repo();
        const iterations = makeTempDir('cairn-watch-iter-');
        dirs.push(iterations);
        try {
          steps.forEach((ops, i) => {
            for (const op of ops) apply(root, op);
            const manager = watched.residentManager(root, {});
            const dir = path.join(iterations, String(Math.floor(i / 2)));
            const record = i % 2 === 0 ? manager.capturePreSnapshot(root, dir) : manager.capturePostSnapshot(root, dir);
            expect(actual(root, record)).toEqual(expected(root));
          });
          const counts = watched.residentGitFor(root, path.join(root, '.cairn')).counts;
          trusted += counts.trustedPasses;
          reused += counts.reused;
          partial += counts.partial;
          tracked += counts.tracked;
          assumed += counts.assumed;
        } finally {
          watched.closeResidents();
        }
      }),
      { numRuns: 24 },
    );
    // The property held where the watcher was relied on, not only where it was not.
    expect(trusted).toBeGreaterThan(0);
    expect(reused).toBeGreaterThan(0);
    expect(partial).toBeGreaterThan(0);
    expect(tracked).toBeGreaterThan(0);
    expect(assumed).toBeGreaterThan(0);
  });

  it('follows a directory replaced by a link to a directory outside the tree, and never what the link leads to', () => {
    const root = repo();
    const outside = makeTempDir('cairn-watch-outside-');
    dirs.push(outside);
    fs.writeFileSync(path.join(outside, 'o.txt'), 'outside\n');
    const manager = watched.residentManager(root, {}, { readyTimeoutMs: 10_000 });
    const iter = makeTempDir('cairn-watch-iter-');
    dirs.push(iter);
    const take = (name: string): void => {
      const record = manager.capturePreSnapshot(root, path.join(iter, name));
      expect(actual(root, record), name).toEqual(expected(root));
    };
    take('a');
    take('b');
    fs.rmSync(path.join(root, 'd1'), { recursive: true });
    fs.symlinkSync(outside, path.join(root, 'd1'));
    take('c');
    fs.writeFileSync(path.join(outside, 'o.txt'), 'outside, changed\n');
    fs.writeFileSync(path.join(outside, 'p.txt'), 'new outside\n');
    take('d');
    // The link goes back to being a directory, filled at once.
    fs.rmSync(path.join(root, 'd1'));
    fs.mkdirSync(path.join(root, 'd1'));
    fs.writeFileSync(path.join(root, 'd1', 'back.txt'), 'back\n');
    take('e');
    fs.appendFileSync(path.join(root, 'd1', 'back.txt'), 'more\n');
    take('f');
    expect(watched.residentGitFor(root, path.join(root, '.cairn')).counts.trustedPasses).toBeGreaterThan(0);
  });

  it('gives the MCP server\'s async captures (the resident worker) the records a fresh process takes, two callers at once included', async () => {
    const root = repo();
    const iter = makeTempDir('cairn-watch-iter-');
    dirs.push(iter);
    for (let i = 0; i < 4; i++) {
      if (i > 0) fs.appendFileSync(path.join(root, `d${i}`, 'f0.txt'), `turn ${i}\n`);
      if (i === 2) fs.mkdirSync(path.join(root, 'd0', 'made', 'deeper'), { recursive: true });
      if (i === 3) fs.writeFileSync(path.join(root, 'd0', 'made', 'deeper', 'x.txt'), 'x\n');
      const pre = await lib.capturePreSnapshotAsync(root, path.join(iter, String(i)));
      expect(actual(root, pre)).toEqual(expected(root));
      const post = await lib.capturePostSnapshotAsync(root, path.join(iter, String(i)));
      expect(actual(root, post)).toEqual(expected(root));
    }
    // Two callers at once: the second capture runs on a worker of its own (no watcher) and
    // rewrites the stat cache the resident one left; the captures after must not lean on it.
    for (let i = 0; i < 3; i++) {
      fs.appendFileSync(path.join(root, 'd2', 'sub', 'deep.txt'), `both ${i}\n`);
      const both = await Promise.all([lib.capturePreSnapshotAsync(root, path.join(iter, `x${i}`)), lib.capturePreSnapshotAsync(root, path.join(iter, `y${i}`))]);
      for (const record of both) expect(actual(root, record)).toEqual(expected(root));
      fs.appendFileSync(path.join(root, 'd3', 'f1.txt'), `after ${i}\n`);
      expect(actual(root, await lib.capturePreSnapshotAsync(root, path.join(iter, `z${i}`)))).toEqual(expected(root));
    }
  });

  it('sees in the next capture a change made while a capture was scanning (after it looked at that directory)', () => {
    const root = repo();
    const iter = makeTempDir('cairn-watch-iter-');
    dirs.push(iter);
    let during: (() => void) | null = null;
    const manager = watched.residentManager(root, { onProgress: (p) => { if (p.phase === 'done' && during !== null) { const f = during; during = null; f(); } } }, { readyTimeoutMs: 10_000 });
    const take = (name: string): void => {
      const record = manager.capturePreSnapshot(root, path.join(iter, name));
      expect(actual(root, record), name).toEqual(expected(root));
    };
    take('a');
    take('b');
    for (let i = 0; i < 4; i++) {
      // One change just before the capture, then another in the same directory once the scan has looked at it.
      fs.appendFileSync(path.join(root, 'd2', 'f0.txt'), `before ${i}\n`);
      during = () => fs.appendFileSync(path.join(root, 'd2', 'f1.txt'), `during ${i}\n`);
      manager.capturePreSnapshot(root, path.join(iter, `c${i}`));
      expect(during).toBeNull();
      take(`d${i}`);
    }
    expect(watched.residentGitFor(root, path.join(root, '.cairn')).counts.trustedPasses).toBeGreaterThan(2);
  });

  it('runs git status limited to the changed paths, on the tracked files only when the index, HEAD or a nested .gitignore moved, and whole when exclude or the root .gitignore moved', () => {
    const root = repo();
    const manager = watched.residentManager(root, {}, { readyTimeoutMs: 10_000 });
    const iter = makeTempDir('cairn-watch-iter-');
    dirs.push(iter);
    const resident = watched.residentGitFor(root, path.join(root, '.cairn'));
    let n = 0;
    const take = (expectRun: 'partial' | 'tracked' | 'whole', what: string): void => {
      const before = { ...resident.counts };
      const record = manager.capturePreSnapshot(root, path.join(iter, String(n++)));
    expect(actual(root, record), what).toEqual(expected(root));
      const after = resident.counts;
      // (decided before git ran, not by the record's check afterwards)
      const ran = { partial: after.partial - before.partial, tracked: after.tracked - before.tracked, whole: after.runs - before.runs, verifiedAgain: after.verifiedAgain - before.verifiedAgain };
      expect(ran, what).toEqual({ partial: 0, tracked: 0, whole: 0, verifiedAgain: 0, [expectRun]: 1 });
    };
    fs.symlinkSync('f1.txt', path.join(root, 'd0', 'link'));
    commitAll(root, 'a link');
    take('whole', 'first');
    take('whole', 'second (the first made cairn\'s directory, where the watcher\'s cookies go)');
    fs.appendFileSync(path.join(root, 'd0', 'f0.txt'), 'edit\n');
    take('partial', 'an edit');
    fs.appendFileSync(path.join(root, 'd0', 'f1.txt'), 'edit\n');
    take('partial', 'an edit of a file a link points to (the link\'s row moves, git\'s answer for it does not)');
    fs.mkdirSync(path.join(root, 'd1', 'fresh', 'deeper'), { recursive: true });
    fs.writeFileSync(path.join(root, 'd1', 'fresh', 'deeper', 'u.txt'), 'u\n');
    fs.rmSync(path.join(root, 'd2', 'f1.txt'));
    take('partial', 'a new untracked directory and a deletion');
    fs.chmodSync(path.join(root, 'd3', 'f2.txt'), 0o755);
    fs.renameSync(path.join(root, 'd2', 'sub'), path.join(root, 'd2', 'moved'));
    take('partial', 'chmod and a renamed directory');
    fs.writeFileSync(path.join(root, 'd0', 'f0.txt'), '0.0\n'); // back to HEAD's content
    fs.rmSync(path.join(root, 'd1', 'fresh'), { recursive: true });
    take('partial', 'an edit undone and the untracked directory removed');
    git(root, 'add', '--', 'd3/f2.txt');
    take('tracked', 'git add (the index)');
    fs.writeFileSync(path.join(root, 'd3', 'untracked.txt'), 'u\n');
    take('partial', 'a new untracked file');
    git(root, 'add', '--', 'd3/untracked.txt');
    take('tracked', 'the untracked file added (it leaves the held untracked list)');
    git(root, 'rm', '-q', '--cached', '--', 'd3/untracked.txt');
    take('tracked', 'and removed from the index again (untracked, with no event in the tree)');
    git(root, 'add', '--', 'd3/untracked.txt');
    git(root, 'commit', '-q', '-m', 'add');
    git(root, 'rm', '-q', '--cached', '--', 'd3/untracked.txt');
    git(root, 'commit', '-q', '-m', 'untrack');
    take('tracked', 'committed, then untracked and committed (no status line but the untracked one)');
    fs.appendFileSync(path.join(root, '.git', 'info', 'exclude'), 'moved/\n');
    take('whole', '.git/info/exclude');
    fs.writeFileSync(path.join(root, 'd1', '.gitignore'), 'f0.txt\nnew.txt\n');
    fs.writeFileSync(path.join(root, 'd1', 'new.txt'), 'ignored now\n');
    fs.writeFileSync(path.join(root, 'd1', 'sub', 'kept.txt'), 'untracked\n');
    take('tracked', 'a nested .gitignore (git lists its directory\'s untracked files again)');
    fs.writeFileSync(path.join(root, 'd1', '.gitignore'), 'f0.txt\n');
    take('tracked', 'the nested .gitignore edited, with no event on the file it ignored (untracked again)');
    fs.appendFileSync(path.join(root, '.gitignore'), 'kept.txt\n');
    take('whole', 'the root .gitignore');
    fs.appendFileSync(path.join(root, 'd3', 'f0.txt'), 'more\n');
    take('partial', 'an edit after those');
    git(root, 'switch', '-q', '-c', 'other');
    take('tracked', 'a branch switch (HEAD)');
    // (The directory first, so its watch is set before `.git` appears in it and the event names
    // it: a repository that appears whole may come as its directory's name alone, a tracked run
    // that test/daemon/untracked-plan.test.ts covers.)
    fs.mkdirSync(path.join(root, 'd0', 'nested'));
    fs.writeFileSync(path.join(root, 'd0', 'nested', 'n.txt'), 'n\n');
    take('partial', 'a new untracked directory');
    git(root, 'init', '-q', path.join(root, 'd0', 'nested'));
    take('whole', 'a nested repository');
    fs.writeFileSync(path.join(root, 'd0', 'nested', 'n.txt'), 'n2\n');
    take('tracked', 'an edit inside the nested repository (git lists it as one entry still)');
    git(root, 'config', 'core.ignoreCase', 'true');
    fs.appendFileSync(path.join(root, 'd3', 'f0.txt'), 'more\n');
    git(root, 'add', '--', 'd3/f0.txt');
    take('whole', 'core.ignoreCase set (git matches names as cairn does not)');
    fs.appendFileSync(path.join(root, 'd3', 'f0.txt'), 'more\n');
    git(root, 'add', '--', 'd3/f0.txt');
    take('whole', 'and still set');
  });

  it('hands a tracked run an index copy with the unchanged entries marked, and still sees what only the index or the held answer knows', () => {
    const { root, resident, take, savedPath, indexes } = loggedGitProject({ completeDeferred: true });
    try {
      fs.mkdirSync(path.join(root, 'd1'));
      for (let k = 0; k < 8; k++) fs.writeFileSync(path.join(root, 'd1', `f${k}.txt`), `f${k}\n`);
      commitAll(root, 'more');
      take('first');
      take('second');
      const viaCopy = (what: string): void => {
        const before = resident.counts.assumed;
        take(what);
        expect(resident.counts.assumed, what).toBe(before + 1);
        const read = indexes();
        expect(read.length, what).toBeGreaterThan(0);
        for (const file of read) expect(file, what).toMatch(new RegExp(`^/proc/${process.pid}/fd/[0-9]+$`));
      };
      // A file left modified, then the index moves: the held answer's modified file is looked at again.
      fs.appendFileSync(path.join(root, 'd0', 'a.txt'), 'left modified\n');
      take('a.txt modified');
      fs.appendFileSync(path.join(root, 'd1', 'f1.txt'), 'staged\n');
      git(root, 'add', '--', 'd1/f1.txt');
      viaCopy('f1 staged, a.txt still modified');
      // A commit: the committed entries are new in the index, the rest marked.
      commitAll(root, 'commit the edits');
      viaCopy('after a commit');
      // A mixed reset moves the index under files nobody touched: they are modified again, for git alone to say.
      git(root, 'reset', '-q', 'HEAD~1');
      viaCopy('after a mixed reset');
      git(root, 'add', '-A');
      viaCopy('all staged again');
      // An edit of a marked file's neighbour and a staged delete, in one capture.
      fs.appendFileSync(path.join(root, 'd1', 'f2.txt'), 'edit\n');
      git(root, 'rm', '-q', '--cached', '--', 'd1/f3.txt');
      viaCopy('an edit and a name gone from the index');
      // The copy is never left behind in cairn's directory.
      expect(fs.readdirSync(path.join(root, '.cairn')).filter((n) => n.includes('status-index'))).toEqual([]);
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('gives git the real index when a .gitattributes changed: git\'s view of files nobody touched moves', () => {
    const { root, resident, take, savedPath, indexes } = loggedGitProject({ completeDeferred: true });
    try {
      fs.mkdirSync(path.join(root, 'd1'));
      for (let k = 0; k < 4; k++) fs.writeFileSync(path.join(root, 'd1', `f${k}.txt`), `f${k}\r\n`);
      commitAll(root, 'more');
      take('first');
      take('second');
      // A rule that changes how git reads files nobody touched (line endings): every file is git's to look at.
      fs.writeFileSync(path.join(root, 'd1', '.gitattributes'), '*.txt text eol=lf\n');
      git(root, 'add', '--', 'd1/.gitattributes');
      const before = { ...resident.counts };
      take('a .gitattributes');
      expect(resident.counts.tracked).toBe(before.tracked + 1);
      expect(resident.counts.assumed).toBe(before.assumed);
      expect(indexes()).toEqual(['-']);
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('runs the whole status, not the tracked files\' one, when the root is below its work tree\'s top (the index names paths from that top)', () => {
    const { outer, root, resident, take, savedPath } = loggedGitProject({ completeDeferred: true });
    try {
      take('first');
      take('second');
      git(root, 'config', 'core.worktree', outer);
      take('core.worktree moved'); // every file is untracked now, and the index still names `d0/a.txt` from the old top
      fs.appendFileSync(path.join(root, 'd0', 'a.txt'), 'x\n');
      git(root, 'add', '--', 'd0/a.txt'); // (as `proj/d0/a.txt`)
      const before = resident.counts.tracked;
      take('a file staged below the top');
      expect(resident.counts.tracked).toBe(before);
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('runs only `git status` for a limited run (rev-parse\'s answer is the whole run\'s), and rev-parse again after a change in .git', () => {
    const { outer, root, resident, take, savedPath } = loggedGitProject();
    try {
      take('first');
      take('second');
      fs.appendFileSync(path.join(root, 'd0', 'a.txt'), 'edit\n');
      const before = resident.counts.partial;
      const limited = take('an edit');
      expect(resident.counts.partial).toBe(before + 1);
      expect(limited.filter((l) => l.includes(' rev-parse '))).toEqual([]);
      expect(limited.filter((l) => l.includes(' status ') && l.endsWith(' -- d0/a.txt'))).toHaveLength(1);
      // The work tree's top moves up a folder: rev-parse now says the root is `proj/` inside it,
      // so a status read with the held answer would name every path wrongly.
      git(root, 'config', 'core.worktree', outer);
      fs.appendFileSync(path.join(root, 'd0', 'b.txt'), 'edit\n');
      const whole = take('core.worktree moved');
      expect(whole.filter((l) => l.includes(' rev-parse '))).toHaveLength(1);
      expect(gitLib.captureGitStatus(root).untracked).toContain('d0/a.txt'); // the prefix mattered
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('reuses rev-parse\'s answer in a whole run after a commit, and runs it again once .git/config or HEAD moved', () => {
    const { outer, root, take, savedPath } = loggedGitProject({ completeDeferred: true });
    try {
      const revParses = (ran: string[]): number => ran.filter((l) => l.includes(' rev-parse ')).length;
      const wholeRuns = (ran: string[]): number => ran.filter((l) => l.includes(' status ') && l.endsWith(' -- .')).length;
      take('first');
      take('second');
      // A commit moves the index and a ref: the status runs whole, rev-parse's answer is kept.
      for (let round = 0; round < 2; round++) {
        fs.appendFileSync(path.join(root, 'd0', 'a.txt'), `edit ${round}\n`);
        commitAll(root, `round ${round}`);
        const afterCommit = take(`after commit ${round}`);
        expect(wholeRuns(afterCommit), `after commit ${round}`).toBe(1);
        expect(revParses(afterCommit), `after commit ${round}`).toBe(0);
      }
      // A branch switch rewrites HEAD: rev-parse runs again.
      git(root, 'checkout', '-q', '-b', 'side');
      const switched = take('branch switched');
      expect(wholeRuns(switched)).toBe(1);
      expect(revParses(switched)).toBe(1);
      // The work tree's top moves up a folder (.git/config): the held answer would name every path wrongly.
      git(root, 'config', 'core.worktree', outer);
      fs.appendFileSync(path.join(root, 'd0', 'b.txt'), 'edit\n');
      const moved = take('core.worktree moved');
      expect(revParses(moved)).toBe(1);
      expect(gitLib.captureGitStatus(root).untracked).toContain('d0/a.txt'); // the prefix mattered
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('lists git\'s configuration files again after a whole run answered: an empty include added to the global config, then edited, is seen', () => {
    const cfg = makeTempDir('cairn-watch-gitconfig-');
    dirs.push(cfg);
    const global = path.join(cfg, 'global');
    const included = path.join(cfg, 'included');
    fs.writeFileSync(global, '[user]\n\tname = cairn test\n');
    fs.writeFileSync(included, ''); // no entry: git's listing never names it as an origin, only the include does
    const saved = process.env.GIT_CONFIG_GLOBAL;
    process.env.GIT_CONFIG_GLOBAL = global;
    try {
      const root = repo();
      fs.writeFileSync(path.join(root, 'd0', 'loose.txt'), 'untracked\n');
      const manager = watched.residentManager(root, {}, { readyTimeoutMs: 10_000 });
      const resident = watched.residentGitFor(root, path.join(root, '.cairn'));
      const iter = makeTempDir('cairn-watch-iter-');
      dirs.push(iter);
      let n = 0;
      const take = (what: string): typeof resident.counts => {
        const before = { ...resident.counts };
        const record = manager.capturePreSnapshot(root, path.join(iter, String(n++)));
    expect(actual(root, record), what).toEqual(expected(root));
        resident.completeDeferred(); // as the daemon does once it answered
        return { ...resident.counts, runs: resident.counts.runs - before.runs, reused: resident.counts.reused - before.reused };
      };
      take('first');
      take('second');
      expect(take('nothing changed').reused, 'nothing changed').toBe(1);
      // The run after this keys on the files listed before the include existed; the listing after it names the include.
      fs.appendFileSync(global, `[include]\n\tpath = ${path.basename(included)}\n`); // relative: from the including file's directory
      expect(take('an include added').runs, 'an include added').toBe(1);
      // Outside the tree and not in the keyed files: only the new listing makes the next capture run git.
      fs.writeFileSync(path.join(cfg, 'excludes'), 'loose.txt\n');
      fs.appendFileSync(included, `[core]\n\texcludesFile = ${path.join(cfg, 'excludes')}\n`);
      expect(take('the included file edited').runs, 'the included file edited').toBe(1);
      expect(gitLib.captureGitStatus(root).untracked).not.toContain('d0/loose.txt'); // the edit mattered
      // That run's listing named the excludes file too (set by the edit): git once more, then reused.
      expect(take('nothing changed since').runs, 'nothing changed since').toBe(1);
      expect(take('nothing changed still').reused, 'nothing changed still').toBe(1);
    } finally {
      if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = saved;
    }
  });

  it('merges a limited status into the held one in git\'s byte order, at and below the named paths only', () => {
    const held = { branch: 'main', commit: 'c', staged: ['a/x', 'b'], unstaged: ['a', 'a/y', 'a-b', 'z'], untracked: ['a/new/u', 'ab', '\u00e9', '\u{1f600}'] };
    const limited = { branch: 'main', commit: 'c', staged: [], unstaged: ['a/z', 'a-b'], untracked: ['a/w', '\uff10'] };
    expect(watched.mergeStatus(held, limited, new Set(['a', 'a-b']))).toEqual({ branch: 'main', commit: 'c', staged: ['b'], unstaged: ['a-b', 'a/z', 'z'], untracked: ['a/w', 'ab', '\u00e9', '\uff10', '\u{1f600}'] });
  });

  it('relies on nothing once events are dropped as an overflowing queue drops them', () => {
    const root = repo();
    const manager = watched.residentManager(root, {}, { drop: 'overflow', readyTimeoutMs: 10_000 });
    const iter = makeTempDir('cairn-watch-iter-');
    dirs.push(iter);
    manager.capturePreSnapshot(root, path.join(iter, 'a'));
    const before = { ...watched.residentGitFor(root, path.join(root, '.cairn')).counts };
    fs.appendFileSync(path.join(root, 'd1', 'f1.txt'), 'changed\n');
    fs.mkdirSync(path.join(root, 'd2', 'fresh'));
    fs.writeFileSync(path.join(root, 'd2', 'fresh', 'n.txt'), 'n\n');
    const record = manager.capturePreSnapshot(root, path.join(iter, 'b'));
    expect(actual(root, record)).toEqual(expected(root));
    const after = watched.residentGitFor(root, path.join(root, '.cairn')).counts;
    expect(after.trustedPasses).toBe(before.trustedPasses); // the pass looked at every row
    expect(after.runs).toBe(before.runs + 1); // and git ran, on the whole tree
    expect(after.partial).toBe(before.partial);
  });

  it('serves two consumers of one tree from one inotify watch set, each taking every changed directory itself', async () => {
    const root = repo();
    const cairnDir = path.join(root, '.cairn');
    fs.mkdirSync(cairnDir, { recursive: true }); // where the watch's cookies go
    const before = inotifyWatches();
    const a = new watched.ResidentGit(root, cairnDir, { readyTimeoutMs: 10_000 });
    const b = new watched.ResidentGit(root, cairnDir, { readyTimeoutMs: 10_000 });
    try {
      expect(a.watcher()).not.toBeNull();
      const one = inotifyWatches() - before;
      expect(one).toBeGreaterThanOrEqual(9); // the root and its 8 directories
      expect(b.watcher()).not.toBeNull();
      expect(inotifyWatches() - before, 'the second consumer adds no watch').toBe(one);
      // Whether each of d1, d2 is vouched for as unchanged since the consumer's last scan (which then ends).
      const seen = (r: typeof a): boolean[] => {
        const known = r.scanOptions({}).knownUnchanged!;
        const out = ['d1', 'd2'].map((d) => known.dir(d));
        known.onCacheState(null);
        return out;
      };
      seen(a); // the directories named while the set was built
      seen(b);
      expect([seen(a), seen(b)]).toEqual([[true, true], [true, true]]);
      fs.appendFileSync(path.join(root, 'd1', 'f0.txt'), 'x\n');
      // a takes the watch's news first; b still gets every name of its own.
      expect(seen(a)).toEqual([false, true]);
      expect(seen(b)).toEqual([false, true]);
      expect([seen(a), seen(b)]).toEqual([[true, true], [true, true]]);
      a.close();
      expect(inotifyWatches() - before, 'the watch stays while a consumer does').toBe(one);
      expect(b.watcher()!.mark()).not.toBeNull();
    } finally {
      a.close();
      b.close();
    }
    // The watcher's thread ends on its own time once told to (Worker.terminate).
    for (let polls = 0; polls < 400 && inotifyWatches() > before; polls++) await new Promise((r) => setTimeout(r, 25));
    expect(inotifyWatches(), 'the last consumer closed the watch').toBeLessThanOrEqual(before);
  });

  it('notices a real inotify queue overflow (the kernel drops events; libuv hides the notice) and looks at everything', async () => {
    const root = repo();
    const manager = watched.residentManager(root, {}, { readyTimeoutMs: 10_000 });
    const iter = makeTempDir('cairn-watch-iter-');
    dirs.push(iter);
    manager.capturePreSnapshot(root, path.join(iter, 'a'));
    manager.capturePreSnapshot(root, path.join(iter, 'b'));
    const resident = watched.residentGitFor(root, path.join(root, '.cairn'));
    const watch = resident.watcher()!;
    expect(watch).not.toBeNull();
    const doubts = watch.stats().doubts;
    // Keep the watcher's thread from reading while more events than its queue holds are made.
    const queue = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
    const stalls = watch.stats().stalls;
    const release = await watch.stall(60_000);
    const a = path.join(root, 'd0', 'f0.txt');
    const b = path.join(root, 'd3', 'f2.txt');
    for (let i = 0; i < queue + 1000; i++) fs.appendFileSync(i % 2 === 0 ? a : b, 'x'); // alternating: no two equal events in a row to merge
    // The overflow is past; this edit's event is lost with the rest.
    fs.writeFileSync(path.join(root, 'd2', 'f1.txt'), 'after the overflow\n');
    release();
    while (watch.stats().stalls < stalls + 1) await new Promise((r) => setTimeout(r, 50));
    const record = manager.capturePreSnapshot(root, path.join(iter, 'c'));
    expect(watch.stats().doubts).toBeGreaterThan(doubts);
    expect(actual(root, record)).toEqual(expected(root));
  });
});
