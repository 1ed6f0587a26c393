/** Iterations the review tests share. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import type { CliResult } from '../support/cli.js';
import { commitAll, git, write } from '../session/helpers.js';

/** A repository with one finished iteration that exercises every kind of change. */
export function everyChangeIteration(repo: () => string, cli: (args: string[], cwd: string) => CliResult, beforePost?: (root: string) => void): { root: string; preCommit: string } {
  const root = repo();
  write(root, 'a.txt', 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n');
  write(root, 'tool.sh', '#!/bin/sh\necho hi\n');
  write(root, 'data.bin', Buffer.from([0, 1, 2, 3]));
  write(root, 'old/moved.txt', Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(''));
  write(root, 'same/kept.txt', 'identical content moves\n');
  write(root, 'gone.txt', 'bye\n');
  write(root, 'with space.txt', 'x\n');
  fs.symlinkSync('a.txt', path.join(root, 'link'));
  commitAll(root, 'init');
  const preCommit = git(root, 'rev-parse', 'HEAD').trim();
  expect(cli(['session', 'pre'], root).status).toBe(0);

  write(root, 'a.txt', 'one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n');
  fs.chmodSync(path.join(root, 'tool.sh'), 0o755);
  write(root, 'data.bin', Buffer.from([0, 1, 2, 4, 5]));
  fs.mkdirSync(path.join(root, 'new'));
  fs.renameSync(path.join(root, 'old/moved.txt'), path.join(root, 'new/moved.txt'));
  write(root, 'new/moved.txt', fs.readFileSync(path.join(root, 'new/moved.txt'), 'utf8').replace('line 7\n', 'line seven\n'));
  fs.renameSync(path.join(root, 'same/kept.txt'), path.join(root, 'same/renamed.txt'));
  fs.rmSync(path.join(root, 'gone.txt'));
  fs.rmSync(path.join(root, 'link'));
  write(root, 'link', 'a file now\n');
  commitAll(root, 'agent work');
  write(root, 'untracked.txt', 'made by bash\n');
  write(root, 'no-newline.txt', 'last line');
  write(root, 'with space.txt', 'x\ny\n');
  beforePost?.(root);
  const post = cli(['session', 'post', '--no-store'], root);
  expect(post.status).toBe(0);
  // git's view of the same change: the post tree staged, compared with the pre commit
  git(root, 'add', '-A');
  return { root, preCommit };
}

