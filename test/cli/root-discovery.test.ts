/**
 * Root discovery (spec rewind.md): without --root, every command finds the project as git finds
 * its work tree: the nearest directory holding .git, else the nearest holding .cairn/, else the
 * current directory. The default store follows the root. (`cairn snapshot` keeps the seed's
 * required --root, and `stage write` its seven required flags.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findProjectRoot } from '../../src/core/root.js';
import { runCli } from '../support/cli.js';
import { commitAll, git, trackedDirs, write } from '../session/helpers.js';

const { repo, dir: scratch } = trackedDirs();

function cli(args: string[], cwd: string) {
  return runCli(args, { cwd, env: { XDG_CACHE_HOME: scratch('cairn-cache-'), CAIRN_STORE: '' } });
}

/** Nothing above the scratch directories may look like a project, or the outside-git cases prove nothing. */
function assertNoProjectAbove(dir: string): void {
  for (let d = path.dirname(dir); d !== path.dirname(d); d = path.dirname(d)) {
    expect(fs.existsSync(path.join(d, '.git')), `${d}/.git`).toBe(false);
    expect(fs.existsSync(path.join(d, '.cairn')), `${d}/.cairn`).toBe(false);
  }
}

describe('findProjectRoot', () => {
  it('walks up to the directory holding .git, passing a nearer .cairn/ by', () => {
    const root = repo();
    const deep = path.join(root, 'a', 'b', 'c');
    fs.mkdirSync(path.join(root, 'a', '.cairn'), { recursive: true });
    fs.mkdirSync(deep, { recursive: true });
    expect(findProjectRoot(deep)).toEqual({ root, reason: 'git' });
    expect(findProjectRoot(root)).toEqual({ root, reason: 'git' });
  });

  it('takes a .git file (a worktree or a submodule) as git does', () => {
    const main = repo();
    write(main, 'f.txt', 'x');
    commitAll(main, 'init');
    const wt = path.join(scratch(), 'wt');
    git(main, 'worktree', 'add', '-q', wt);
    expect(fs.statSync(path.join(wt, '.git')).isFile()).toBe(true);
    fs.mkdirSync(path.join(wt, 'sub'));
    expect(findProjectRoot(path.join(wt, 'sub'))).toEqual({ root: wt, reason: 'git' });
  });

  it('outside git takes the nearest directory holding .cairn/, else the start directory', () => {
    const top = scratch();
    assertNoProjectAbove(top);
    const deep = path.join(top, 'p', 'x', 'y');
    fs.mkdirSync(deep, { recursive: true });
    expect(findProjectRoot(deep)).toEqual({ root: deep, reason: 'cwd' });
    fs.mkdirSync(path.join(top, 'p', '.cairn'));
    expect(findProjectRoot(deep)).toEqual({ root: path.join(top, 'p'), reason: 'cairn' });
    // a .cairn that is a file is not a project marker
    fs.writeFileSync(path.join(top, 'p', 'x', '.cairn'), '');
    expect(findProjectRoot(deep).root).toBe(path.join(top, 'p'));
  });
});

describe('commands run from a subdirectory', () => {
  it('session pre and post from a subdirectory use the repository root, one .cairn/ and its store', () => {
    const root = repo();
    write(root, 'src/lib/a.ts', 'a\n');
    commitAll(root, 'init');
    const sub = path.join(root, 'src', 'lib');

    const pre = cli(['session', 'pre'], sub);
    expect(pre.status).toBe(0);
    expect(pre.stdout.trim()).toBe(path.join(root, '.cairn', 'iterations', '001'));
    expect(fs.existsSync(path.join(sub, '.cairn'))).toBe(false);

    write(root, 'src/lib/a.ts', 'b\n');
    write(root, 'top.txt', 'new\n');
    const post = cli(['session', 'post', '--json'], sub);
    expect(post.status).toBe(0);
    const diff = JSON.parse(post.stdout) as { filesAdded: string[]; filesModified: string[] };
    expect(diff.filesAdded).toEqual(['top.txt']);
    expect(diff.filesModified).toEqual(['src/lib/a.ts']);
    expect(fs.existsSync(path.join(root, '.cairn', 'store', 'default'))).toBe(true);
    expect(fs.existsSync(path.join(sub, '.cairn'))).toBe(false);

    const listed = cli(['store', 'list', '--json'], sub);
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ store: path.join('..', '..', '.cairn', 'store'), sessions: ['default'] });
    const report = cli(['session', 'report'], sub);
    expect(report.status).toBe(0);
    expect(report.stdout).toContain('top.txt');
  });

  it('--root wins over discovery, and a relative --store stays relative to the current directory', () => {
    const root = repo();
    const other = repo();
    const sub = path.join(root, 'deep');
    fs.mkdirSync(sub);
    expect(cli(['session', 'pre', '--root', other], sub).stdout.trim()).toBe(path.join(other, '.cairn', 'iterations', '001'));
    const post = cli(['session', 'post', '--root', other, '--store', 'here-store'], sub);
    expect(post.status).toBe(0);
    expect(fs.existsSync(path.join(sub, 'here-store', 'default'))).toBe(true);
    expect(fs.existsSync(path.join(root, '.cairn'))).toBe(false);
  });

  it('outside git, a subdirectory of a directory holding .cairn/ records into that .cairn/', () => {
    const top = scratch();
    assertNoProjectAbove(top);
    expect(cli(['session', 'pre'], top).status).toBe(0); // makes top/.cairn
    const sub = path.join(top, 'nested', 'dir');
    fs.mkdirSync(sub, { recursive: true });
    write(top, 'nested/new.txt', 'n');
    const post = cli(['session', 'post', '--json'], sub);
    expect(post.status).toBe(0);
    expect((JSON.parse(post.stdout) as { filesAdded: string[] }).filesAdded).toEqual(['nested/new.txt']);
    expect(fs.existsSync(path.join(sub, '.cairn'))).toBe(false);
  });
});
