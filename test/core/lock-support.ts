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

// A real process that tries to take the lock and counts its attempts by the intent file each one
// creates (step 1 of the protocol), printing "waiting <n>". Moments to be signalled are chosen by
// work, through the fs calls the built library already makes (node:fs is patched before the
// library loads; syncBuiltinESMExports carries the patch into its `import * as fs`):
//   KILL_AT=intent|mkdir|owner-check|taken and KILL_ATTEMPT=n: the process sends itself SIGTERM
//   in attempt n at step 1, at the mkdir that finds the lock held, at the liveness check of the
//   owner (the last call of a failed attempt, just before it returns), or once the intent file of
//   an attempt that took the lock is removed (the last call before the lock is held).
//   GIVE_UP_AFTER=n: a process still running at attempt n prints "survived" and exits 99, so a
//   signal that was lost ends the test by work instead of leaving a waiter polling forever.
//   TIMEOUT_MS: how long it waits (default 600 000; 0 tries once); it prints "gave up <code>" when
//   the acquisition fails, and goes on as a holder would.
// It prints "acquired" if it ever gets the lock; a signal already taken is handled within an
// event-loop turn or two, so one still running 50 turns later prints "survived" and exits 99.
const SIGNALLED_WAITER = `
import { syncBuiltinESMExports } from 'node:module';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
const env = process.env;
const killAt = env.KILL_AT ?? '';
const killAttempt = Number(env.KILL_ATTEMPT ?? '0');
const giveUpAfter = Number(env.GIVE_UP_AFTER ?? '0');
const say = (line) => fs.writeSync(1, line + '\\n');
const isIntent = (p) => String(p).includes('.taking-');
let attempts = 0;
const killHere = (point) => {
  if (point === killAt && attempts === killAttempt) process.kill(process.pid, 'SIGTERM');
};
const { writeFileSync, mkdirSync, readFileSync } = fs;
const unlink = fsp.unlink;
fs.writeFileSync = function (file, ...rest) {
  if (isIntent(file)) {
    attempts++;
    if (giveUpAfter > 0 && attempts >= giveUpAfter) { say('survived'); process.exit(99); }
    say('waiting ' + attempts);
    killHere('intent');
  }
  return writeFileSync.call(this, file, ...rest);
};
fs.mkdirSync = function (dir, ...rest) {
  if (String(dir) === env.LOCK_PATH) {
    try { return mkdirSync.call(this, dir, ...rest); } finally { killHere('mkdir'); }
  }
  return mkdirSync.call(this, dir, ...rest);
};
fs.readFileSync = function (file, ...rest) {
  if (/^\\/proc\\/\\d+\\/stat$/.test(String(file)) && String(file) !== '/proc/' + process.pid + '/stat') killHere('owner-check');
  return readFileSync.call(this, file, ...rest);
};
fsp.unlink = async function (file, ...rest) {
  const r = await unlink.call(this, file, ...rest);
  if (isIntent(file)) killHere('taken');
  return r;
};
syncBuiltinESMExports();
const { acquireDirLock } = await import(${JSON.stringify(LOCK_MODULE)});
try {
  await acquireDirLock(env.LOCK_PATH, { timeoutMs: Number(env.TIMEOUT_MS ?? '600000') });
  say('acquired');
} catch (e) {
  say('gave up ' + e.code);
}
for (let turn = 0; turn < 50; turn++) await new Promise((r) => setImmediate(r));
say('survived');
process.exit(99);
`;

export interface SignalledWaiter {
  child: ChildProcess;
  /** Resolves once the waiter has printed "waiting <n>". */
  attempt(n: number): Promise<void>;
  done: Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

export function startSignalledWaiter(env: Record<string, string>): SignalledWaiter {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SIGNALLED_WAITER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let stdout = '';
  let stderr = '';
  const waits: { n: number; resolve: () => void }[] = [];
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const w of waits) if (stdout.includes(`waiting ${w.n}\n`)) w.resolve();
  });
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
  const attempt = (n: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (stdout.includes(`waiting ${n}\n`)) return resolve();
      waits.push({ n, resolve });
      void done.then((r) => reject(new Error(`waiter ended before attempt ${n}: ${r.stdout}${r.stderr}`)));
    });
  return { child, attempt, done };
}

// A real process that takes the lock, sends itself SIGTERM while holding it (so the signal is
// certainly taken before the release), releases it, and goes on: 50 turns of the event loop later
// it writes MARKER and ends with 0, which only a process that lost the signal gets to do.
//   HOLD=sync: signal and release in one synchronous stretch, as the CLI holds a lock across
//   synchronous work (the loop does not turn in between);
//   HOLD=async: an await while holding, then the signal and `await lock.release()` in one turn.
//   HOST_LISTENER=1: the program has a SIGTERM listener of its own, which prints "host saw SIGTERM".
const SELF_SIGNALLED_HOLDER = `
import { writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
const env = process.env;
const { acquireDirLock } = await import(${JSON.stringify(LOCK_MODULE)});
if (env.HOST_LISTENER) process.on('SIGTERM', () => writeFileSync(1, 'host saw SIGTERM\\n'));
const lock = await acquireDirLock(env.LOCK_PATH, { timeoutMs: 0 });
if (env.HOLD === 'async') {
  await writeFile(env.MARKER + '.work', 'done while holding');
  process.kill(process.pid, 'SIGTERM');
  await lock.release();
} else {
  process.kill(process.pid, 'SIGTERM');
  lock.releaseSync();
}
for (let turn = 0; turn < 50; turn++) await new Promise((r) => setImmediate(r));
writeFileSync(env.MARKER, 'went on after the signal');
`;

/** Runs SELF_SIGNALLED_HOLDER to its end: how it ended and what it printed. */
export function runSelfSignalledHolder(env: Record<string, string>): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SELF_SIGNALLED_HOLDER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr })));
}
