import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../support/cli.js';

const LOCK_MODULE = pathToFileURL(path.join(REPO_ROOT, 'dist', 'core', 'lock.js')).href;

// A real process that takes the lock with the built library, says "acquired", holds it for
// HOLD_MS (-1: until killed; EXIT_WHILE_HELD=n calls process.exit(n) instead), logs enter/exit lines to LOG, then releases it.
const HOLDER = `
import { acquireDirLock } from ${JSON.stringify(LOCK_MODULE)};
import { appendFileSync } from 'node:fs';
const env = process.env;
const hold = Number(env.HOLD_MS ?? '-1');
const log = (line) => { if (env.LOG) appendFileSync(env.LOG, line + '\\n'); };
try {
  const lock = await acquireDirLock(env.LOCK_PATH, {
    timeoutMs: Number(env.TIMEOUT_MS ?? '30000'),
    onStaleTakeover: (info) => log('takeover ' + process.pid + ' from ' + (info.previousOwner?.pid ?? 'none')),
  });
  log('enter ' + process.pid);
  process.stdout.write('acquired\\n');
  if (env.EXIT_WHILE_HELD) process.exit(Number(env.EXIT_WHILE_HELD));
  if (hold < 0) { setInterval(() => {}, 1 << 30); }
  else {
    await new Promise((r) => setTimeout(r, hold));
    log('exit ' + process.pid);
    await lock.release();
  }
} catch (e) {
  process.stderr.write(String(e.message) + '\\n');
  process.exitCode = e.exitCode ?? 1;
}
`;

export interface Holder {
  child: ChildProcess;
  acquired: Promise<void>;
  done: Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

const started = new Set<ChildProcess>();

/**
 * SIGKILLs every holder a test started that is still running (call from afterEach). A holder
 * that missed its test's signal would otherwise hold its lock forever and keep the test
 * worker, and so the whole run, from ending (seen once on Node 22 in session 16's CI rehearsal).
 */
export function killHolders(): void {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  started.clear();
}

export function startHolder(env: Record<string, string>): Holder {
  const child = spawn(process.execPath, ['--input-type=module', '-e', HOLDER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const acquired = new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('acquired')) resolve();
    });
    child.on('close', () => reject(new Error(`holder exited before acquiring: ${stderr}`)));
  });
  acquired.catch(() => undefined);
  const done = new Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('close', (status, signal) => resolve({ status, signal, stderr }));
  });
  return { child, acquired, done };
}

/** The pid of a process that has already exited (and, on a quiet machine, is not reused yet). */
export function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}
