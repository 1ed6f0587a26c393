import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs/promises';

/** Mounts a tmpfs of `size` at `dir` (root only). False when this machine does not allow it. */
export function mountTmpfs(dir: string, size: string): boolean {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0;
}

export function unmount(dir: string): void {
  spawnSync('umount', [dir]);
}

/** Whether a tmpfs can be mounted here (probed once in a scratch directory). */
export async function canMountTmpfs(scratch: string): Promise<boolean> {
  await fs.mkdir(scratch, { recursive: true });
  const ok = mountTmpfs(scratch, '64k');
  if (ok) unmount(scratch);
  await fs.rm(scratch, { recursive: true, force: true });
  return ok;
}

/** Every file below `dir` with its content, to prove a directory was not touched. */
export async function treeOf(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = `${entry.parentPath}/${entry.name}`;
    const rel = full.slice(dir.length + 1);
    if (entry.isFile()) out[rel] = await fs.readFile(full, 'utf8');
    else if (entry.isSymbolicLink()) out[rel] = `-> ${await fs.readlink(full)}`;
    else out[rel] = '<dir>';
  }
  return out;
}
