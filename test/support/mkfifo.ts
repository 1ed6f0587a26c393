import { spawnSync } from 'node:child_process';

/** Creates a named pipe (Node has no mkfifo of its own). */
export function mkfifo(file: string): void {
  const r = spawnSync('mkfifo', [file]);
  if (r.status !== 0) throw new Error(`mkfifo ${file} failed: ${String(r.stderr)}`);
}
