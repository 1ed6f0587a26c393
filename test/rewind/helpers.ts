import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SnapshotManager, createNextIterationDir } from '../../src/session/index.js';

/** One path of a tree as restore must rebuild it: type, bytes (base64), exec bit, link target. */
export type TreeShape = Record<string, string>;

/** Every file and link under root except `.git/` and `.cairn/` (and `skip`), with content and exec bit. */
export function shapeOf(root: string, skip: (rel: string) => boolean = () => false): TreeShape {
  const out: TreeShape = {};
  const walk = (dirAbs: string, rel: string): void => {
    for (const e of fs.readdirSync(dirAbs, { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (rel === '' && (e.name === '.git' || e.name === '.cairn')) continue;
      if (skip(r)) continue;
      const abs = path.join(dirAbs, e.name);
      const st = fs.lstatSync(abs);
      if (st.isSymbolicLink()) out[r] = `link:${fs.readlinkSync(abs)}`;
      else if (st.isDirectory()) walk(abs, r);
      else out[r] = `file:${(st.mode & 0o100) !== 0 ? 'x' : '-'}:${fs.readFileSync(abs).toString('base64')}`;
    }
  };
  walk(root, '');
  return out;
}

/** mtimes (ns) of every file under root except .git/.cairn. */
export function mtimesOf(root: string): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  const walk = (dirAbs: string, rel: string): void => {
    for (const e of fs.readdirSync(dirAbs, { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (rel === '' && (e.name === '.git' || e.name === '.cairn')) continue;
      const abs = path.join(dirAbs, e.name);
      if (e.isDirectory()) walk(abs, r);
      else out[r] = fs.lstatSync(abs, { bigint: true }).mtimeNs;
    }
  };
  walk(root, '');
  return out;
}

export function pre(root: string): string {
  const dir = createNextIterationDir(root);
  new SnapshotManager(root).capturePreSnapshot(root, dir);
  return dir;
}

export function post(root: string, dir: string): void {
  new SnapshotManager(root).capturePostSnapshot(root, dir);
}

export const CLI = path.resolve('dist/bin/cairn.js');

/** Runs the built CLI; returns exit status, stdout, stderr. */
export function cairn(root: string, args: string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--root', root], { cwd: root, encoding: 'utf8', env: { ...process.env } });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function gitIn(root: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' });
}
