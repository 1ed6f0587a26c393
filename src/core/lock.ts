import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { pidAlive } from './atomic-write.js';
import { CairnError, errnoCode } from './errors.js';

/**
 * A directory lock: `mkdir` is atomic and create-only on every POSIX file system (including
 * NFS, where flock is not trusted), so whoever creates the directory holds the lock.
 *
 * Inside the directory lives `owner.json`, the owner record (pid, host, start time, boot id),
 * so a lock whose owner died can be told apart from a live one and taken over.
 *
 * Takeover protocol (safe when several waiters find the same dead owner at once):
 *  1. a waiter reads the owner record and decides the owner is dead;
 *  2. it renames `owner.json` to a claim name of its own; rename is atomic, so of all waiters
 *     exactly one gets *that* record (the others see ENOENT and go back to waiting);
 *  3. it re-reads the claimed record: if its token is the dead owner's, the lock is now its own
 *     and it installs its record with link(2), which is create-only; if the token is someone
 *     else's (a live owner who took over in between), it puts the record back with link(2)
 *     and keeps waiting.
 * The directory itself is never removed during a takeover, so no third process can create a
 * fresh lock while the dead one is being replaced.
 *
 * Acquisition, so that no crash leaves a lock without a trace of who made it:
 *  1. the acquirer creates an intent file `<lock>.taking-<pid>-<token>` next to the lock
 *     directory, in the same parent (create-only);
 *  2. it creates the lock directory with mkdir (create-only: this is the mutual exclusion);
 *  3. it writes its record as `.owner-<pid>-<token>` inside and links it to `owner.json`
 *     (create-only, so a record is never overwritten);
 *  4. it removes its intent file.
 * Crashes between steps leave traces that say who was there: killed after 2 (a lock dir with no
 * record), the intent file names a dead pid, so the next waiter takes the lock over at once
 * instead of waiting `ownerlessStaleMs` (issue 20: a kill there blocked the task for 30 s);
 * killed in 3, the `.owner-` record names a dead pid (taken over at once); a waiter killed while
 * holding a claim `.claim-<pid>-<token>` has the record put back by the next waiter. Only a
 * directory with no trace at all (made by another tool, such as the upstream shell writer) has
 * to age `ownerlessStaleMs` before it is taken. Whoever takes a lock over removes the intent
 * files of dead acquirers of that lock.
 */

export const LOCK_OWNER_FILE = 'owner.json';

export interface LockOwner {
  /** Random per acquisition; identifies this holding of the lock. */
  token: string;
  pid: number;
  host: string;
  /** When the lock was taken (ISO 8601 UTC). */
  startedAt: string;
  /** Linux process start time in clock ticks since boot; tells a reused pid from the owner. */
  processStart?: number;
  /** Linux boot id; an owner from an earlier boot is dead whatever its pid says. */
  bootId?: string;
}

export interface StaleLockInfo {
  lockPath: string;
  /** The dead owner's record; undefined when the directory had no readable record. */
  previousOwner?: LockOwner;
  reason: string;
}

export interface AcquireLockOptions {
  /** How long to wait for a live owner, in milliseconds. 0 tries once. Default 60 000. */
  timeoutMs?: number;
  /** Told when a dead owner's lock was taken over (the CLI says so on stderr). */
  onStaleTakeover?: (info: StaleLockInfo) => void;
  /**
   * A lock directory without an owner record and without a trace of a cairn acquirer (made by
   * another tool) counts as abandoned once it is this old. Default 30 000. (One left by a cairn
   * acquirer killed between mkdir and its record is taken over at once: see the protocol above.)
   */
  ownerlessStaleMs?: number;
  /** Release the lock if the process gets SIGINT/SIGTERM/SIGHUP while holding it. Default true. */
  releaseOnSignal?: boolean;
  /** How messages name the lock when `lockPath` is a descriptor path (`/proc/self/fd/<n>/…`, see ContainedDir.at). */
  shownPath?: string;
  /** Message of the timeout error; default `lock timeout (<n>s) on <lockPath>`. */
  timeoutMessage?: (timeoutMs: number, lockPath: string) => string;
}

export interface DirLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Removes the lock if this holder still owns it; resolves true when it did. */
  release(): Promise<boolean>;
  releaseSync(): boolean;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_OWNERLESS_STALE_MS = 30_000;
// Short polling: contention costs milliseconds, not the upstream's 1 s sleeps.
const POLL_MIN_MS = 2;
const POLL_MAX_MS = 25;

let cachedBootId: string | null | undefined;

function bootId(): string | undefined {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId ?? undefined;
}

/** Field 22 of /proc/<pid>/stat (start time in ticks); undefined off Linux or when unreadable. */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses; fields resume after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[19]);
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

function newOwner(): LockOwner {
  const owner: LockOwner = {
    token: randomBytes(12).toString('hex'),
    pid: process.pid,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
  };
  const start = processStartTicks(process.pid);
  if (start !== undefined) owner.processStart = start;
  const boot = bootId();
  if (boot !== undefined) owner.bootId = boot;
  return owner;
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockOwner>;
    if (typeof v.token !== 'string' || typeof v.pid !== 'number' || typeof v.host !== 'string' || typeof v.startedAt !== 'string') return undefined;
    return v as LockOwner;
  } catch {
    return undefined;
  }
}

/** Why the owner is known to be dead, or undefined when it is (or may be) alive. */
export function ownerDeathReason(owner: LockOwner): string | undefined {
  // Another host's process cannot be checked from here: treat it as alive.
  if (owner.host !== os.hostname()) return undefined;
  const boot = bootId();
  if (owner.bootId !== undefined && boot !== undefined && owner.bootId !== boot) return 'it was taken before the last reboot';
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if (errnoCode(e) === 'ESRCH') return `process ${owner.pid} is gone`;
    return undefined; // EPERM: alive, someone else's
  }
  if (owner.processStart !== undefined) {
    const now = processStartTicks(owner.pid);
    if (now !== undefined && now !== owner.processStart) return `process ${owner.pid} is gone (the pid now belongs to another process)`;
  }
  return undefined;
}

type OwnerRead = { kind: 'owner'; owner: LockOwner } | { kind: 'ownerless' } | { kind: 'gone' } | { kind: 'foreign' };

async function readOwner(lockPath: string): Promise<OwnerRead> {
  let st: fs.Stats;
  try {
    st = await fsp.lstat(lockPath);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return { kind: 'gone' };
    throw e;
  }
  // A planted symlink or file is never taken over: writing through it could land outside the root.
  if (!st.isDirectory()) return { kind: 'foreign' };
  try {
    const owner = parseOwner(await fsp.readFile(path.join(lockPath, LOCK_OWNER_FILE), 'utf8'));
    return owner ? { kind: 'owner', owner } : { kind: 'ownerless' };
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'ownerless' };
    throw e;
  }
}

const PENDING_PREFIX = '.owner-';
const CLAIM_PREFIX = '.claim-';

/**
 * Looks into a lock directory that has no `owner.json`. Returns 'wait' while a live process is
 * between steps, 'retry' after putting back a record a dead waiter had claimed, or the records
 * of acquirers that died before installing them (empty when there is no trace of an owner).
 */
async function inspectOwnerless(lockPath: string): Promise<'wait' | 'retry' | LockOwner[]> {
  let names: string[];
  try {
    names = await fsp.readdir(lockPath);
  } catch {
    return 'retry';
  }
  const claims = names.filter((n) => n.startsWith(CLAIM_PREFIX));
  for (const name of claims) {
    const claimer = Number(name.slice(CLAIM_PREFIX.length).split('-')[0]);
    if (pidAlive(claimer)) continue;
    // A waiter died holding the owner record it had claimed: put it back (create-only, so
    // this is harmless even if someone installed a record meanwhile) and look again.
    const file = path.join(lockPath, name);
    await fsp.link(file, path.join(lockPath, LOCK_OWNER_FILE)).catch(() => undefined);
    await fsp.unlink(file).catch(() => undefined);
    return 'retry';
  }
  if (claims.length > 0) return 'wait'; // a live waiter is checking the record right now
  const pending: LockOwner[] = [];
  for (const name of names.filter((n) => n.startsWith(PENDING_PREFIX))) {
    const owner = parseOwner(await fsp.readFile(path.join(lockPath, name), 'utf8').catch(() => ''));
    if (owner) pending.push(owner);
  }
  return pending;
}

/** Writes `owner` into `lockPath/owner.json` create-only (link(2)); false if a record is already there. */
async function installOwner(lockPath: string, owner: LockOwner): Promise<boolean> {
  const tmp = path.join(lockPath, `${PENDING_PREFIX}${owner.pid}-${owner.token}`);
  await fsp.writeFile(tmp, `${JSON.stringify(owner)}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await fsp.link(tmp, path.join(lockPath, LOCK_OWNER_FILE));
    return true;
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') return false;
    throw e;
  } finally {
    await fsp.unlink(tmp).catch(() => undefined);
  }
}

/**
 * Takes over the lock at `lockPath` if its owner record is still `observed` (a dead owner's) or,
 * when `observed` is undefined, if the directory still has no owner record. Resolves true when
 * the caller now holds the lock under `mine`. Exported for tests of the takeover race.
 */
export async function takeOverLock(lockPath: string, observed: LockOwner | undefined, mine: LockOwner): Promise<boolean> {
  if (observed === undefined) {
    try {
      return await installOwner(lockPath, mine);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return false; // released meanwhile
      throw e;
    }
  }
  const ownerFile = path.join(lockPath, LOCK_OWNER_FILE);
  const claim = path.join(lockPath, `${CLAIM_PREFIX}${mine.pid}-${mine.token}`);
  try {
    await fsp.rename(ownerFile, claim);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return false; // another waiter was first
    throw e;
  }
  let claimed: LockOwner | undefined;
  try {
    claimed = parseOwner(await fsp.readFile(claim, 'utf8'));
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false; // the holder released and removed the directory
    throw e;
  }
  if (claimed?.token !== observed.token) {
    // We moved a live owner's record: put it back (create-only) and keep waiting.
    await fsp.link(claim, ownerFile).catch(() => undefined);
    await fsp.unlink(claim).catch(() => undefined);
    return false;
  }
  try {
    return await installOwner(lockPath, mine);
  } finally {
    await fsp.unlink(claim).catch(() => undefined);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Acquires the directory lock at `lockPath` (its parent must exist), waiting up to the timeout. */
export async function acquireDirLock(lockPath: string, options: AcquireLockOptions = {}): Promise<DirLock> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const ownerlessStaleMs = options.ownerlessStaleMs ?? DEFAULT_OWNERLESS_STALE_MS;
  const guardSignals = options.releaseOnSignal !== false;
  const deadline = Date.now() + timeoutMs;
  const traces: Traces = { intent: undefined, dir: false, held: undefined };
  // One guard for the whole acquisition, waits included. Guarding each attempt alone removed the
  // listeners as it ended, and a signal Node had taken but not yet dispatched was dropped with
  // them: the waiter went on and could take the lock and hold it with no end (session 16).
  const unguard = guardSignals ? onTerminationSignal(() => removeTraces(lockPath, traces)) : undefined;
  try {
    let pause = POLL_MIN_MS;
    for (;;) {
      const mine = newOwner();
      const got = await attempt(lockPath, mine, ownerlessStaleMs, options.onStaleTakeover, options.shownPath ?? lockPath, traces);
      if (got) {
        // The holding's guard is in place before the acquisition's goes (finally), so the listeners never lapse.
        const lock = holdLock(lockPath, mine, guardSignals);
        traces.held = undefined;
        return lock;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        const message = options.timeoutMessage?.(timeoutMs, lockPath) ?? `lock timeout (${formatSeconds(timeoutMs)}s) on ${lockPath}`;
        throw new CairnError('ERR_LOCK_TIMEOUT', message, { path: lockPath, exitCode: 3 });
      }
      // Jitter keeps waiters that started together from polling in lockstep.
      await sleep(Math.min(left, pause * (0.5 + Math.random())));
      pause = Math.min(POLL_MAX_MS, pause * 2);
    }
  } finally {
    unguard?.();
  }
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 10) / 100);
}

const INTENT_INFIX = '.taking-';

/** What the current attempt has left on disk so far, for the signal cleanup of its acquisition. */
interface Traces {
  /** Our intent file, from step 1 until step 4 removed it. */
  intent: string | undefined;
  /** The lock directory is ours from mkdir until our record is in it. */
  dir: boolean;
  /** Our record is in the lock: the lock is ours from then until its holding guards it. */
  held: LockOwner | undefined;
}

/**
 * A waiter stopped by a signal mid-attempt must not leave its intent behind, nor a lock
 * directory it made but put no record in yet (a lock with no trace waits out ownerlessStaleMs).
 */
function removeTraces(lockPath: string, traces: Traces): void {
  if (traces.intent !== undefined) fs.rmSync(traces.intent, { force: true });
  if (traces.dir) {
    try {
      fs.rmSync(lockPath, { recursive: true, force: true });
    } catch {
      // A record landing mid-removal names our dead pid: the next waiter takes it over at once.
    }
  }
  if (traces.held !== undefined) removeIfOwnedSync(lockPath, traces.held);
}

/** The intent file of step 1: next to the lock, named after it, the acquirer's pid and token. */
function intentPath(lockPath: string, owner: LockOwner): string {
  return `${lockPath}${INTENT_INFIX}${owner.pid}-${owner.token}`;
}

/** Intent files of acquirers of `lockPath` (their names and pids), read from the lock's parent. */
async function intentsOf(lockPath: string): Promise<{ name: string; pid: number }[]> {
  const prefix = `${path.basename(lockPath)}${INTENT_INFIX}`;
  const names = await fsp.readdir(path.dirname(lockPath)).catch(() => [] as string[]);
  return names.filter((n) => n.startsWith(prefix)).map((name) => ({ name, pid: Number(name.slice(prefix.length).split('-')[0]) }));
}

/** Intent files of dead acquirers of this lock are litter once the lock is held (ours goes in step 4). */
async function removeDeadIntents(lockPath: string): Promise<void> {
  for (const i of await intentsOf(lockPath)) {
    if (!pidAlive(i.pid)) await fsp.unlink(path.join(path.dirname(lockPath), i.name)).catch(() => undefined);
  }
}

/** One attempt at the protocol's steps; resolves true when the lock is ours. */
async function attempt(
  lockPath: string,
  mine: LockOwner,
  ownerlessStaleMs: number,
  onStale: AcquireLockOptions['onStaleTakeover'],
  shown: string,
  traces: Traces,
): Promise<boolean> {
  const intent = intentPath(lockPath, mine);
  // Steps 1 and 2 are synchronous: a termination signal is handled between event-loop turns, so
  // its cleanup then sees each of them done or not begun, never in flight on the thread pool
  // (an async create that lands after the cleanup ran would outlive the process).
  traces.intent = intent;
  fs.writeFileSync(intent, '', { flag: 'wx', mode: 0o600 }); // step 1
  try {
    fs.mkdirSync(lockPath, { mode: 0o700 }); // step 2
    traces.dir = true;
  } catch (e) {
    // Not ours: the intent goes at once, so a waiter's intent never looks like a pending acquirer for long.
    await fsp.unlink(intent).catch(() => undefined);
    traces.intent = undefined;
    if (errnoCode(e) !== 'EEXIST') throw e;
    // A file or a link where the lock directory goes is never a lock: waiting cannot help.
    const st = await fsp.lstat(lockPath).catch(() => undefined);
    if (st !== undefined && !st.isDirectory()) {
      const what = st.isSymbolicLink() ? 'a symbolic link' : 'not a directory';
      throw new CairnError('ERR_LOCK_INVALID', `${shown} is ${what}, so it is not a cairn lock; remove it and run the command again`, { path: shown, exitCode: 1 });
    }
    return tryTakeOverStale(lockPath, mine, ownerlessStaleMs, onStale, traces);
  }
  try {
    // mkdir's mode is masked by the umask; the lock dir is 0700 whatever the umask.
    await fsp.chmod(lockPath, 0o700);
    const installed = await installOwner(lockPath, mine);
    traces.dir = false; // ours with our record (its holding guards it from here), or someone else's
    if (installed) {
      traces.held = mine;
      await removeDeadIntents(lockPath); // a waiter killed in step 1 left one; it must not outlive us
      return true;
    }
    // Someone judged our ownerless directory abandoned and took it: it is theirs now.
    return false;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') {
      // Judged abandoned and removed by someone else: whatever is at lockPath from now is not ours
      // (the traces outlive this attempt, so a signal while waiting must not remove it).
      traces.dir = false;
      return false;
    }
    await fsp.rm(lockPath, { recursive: true, force: true }).catch(() => undefined);
    traces.dir = false;
    throw e;
  } finally {
    await fsp.unlink(intent).catch(() => undefined); // step 4
    traces.intent = undefined;
  }
}

async function tryTakeOverStale(
  lockPath: string,
  mine: LockOwner,
  ownerlessStaleMs: number,
  onStale: AcquireLockOptions['onStaleTakeover'],
  traces: Traces,
): Promise<boolean> {
  const seen = await readOwner(lockPath);
  if (seen.kind === 'gone' || seen.kind === 'foreign') return false;
  let reason: string | undefined;
  if (seen.kind === 'owner') {
    reason = ownerDeathReason(seen.owner);
  } else {
    const pending = await inspectOwnerless(lockPath);
    if (pending === 'wait' || pending === 'retry') return false;
    const st = await fsp.lstat(lockPath).catch(() => undefined);
    if (pending.length > 0) {
      // A writer killed between mkdir and installing its record left the record it was about to install.
      const deaths = pending.map(ownerDeathReason);
      if (deaths.every((d) => d !== undefined)) reason = `its owner died while taking it (${deaths[0]})`;
    } else {
      // No record inside: was it a cairn acquirer killed between mkdir and its record (step 2)?
      // A live intent is an acquirer between its steps (or a waiter about to find the lock taken): wait.
      const intents = await intentsOf(lockPath);
      const dead = intents.filter((i) => !pidAlive(i.pid));
      const anyLive = dead.length < intents.length;
      if (dead.length > 0 && !anyLive) {
        reason = `its owner (process ${dead[0]!.pid}) was killed before writing its owner record`;
      } else if (!anyLive && st && Date.now() - st.mtimeMs >= ownerlessStaleMs) {
        reason = `it has had no owner record for ${Math.round((Date.now() - st.mtimeMs) / 1000)}s`;
      }
    }
  }
  if (reason === undefined) return false;
  const previous = seen.kind === 'owner' ? seen.owner : undefined;
  if (!(await takeOverLock(lockPath, previous, mine))) return false;
  traces.held = mine;
  await removeDeadIntents(lockPath);
  const info: StaleLockInfo = { lockPath, reason };
  if (previous !== undefined) info.previousOwner = previous;
  onStale?.(info);
  return true;
}

function holdLock(lockPath: string, owner: LockOwner, releaseOnSignal: boolean): DirLock {
  let released = false;
  let unguard: (() => void) | undefined;
  const releaseSync = (): boolean => {
    if (released) return false;
    released = true;
    unguard?.();
    return removeIfOwnedSync(lockPath, owner);
  };
  if (releaseOnSignal) unguard = onTerminationSignal(() => void releaseSync());
  return {
    path: lockPath,
    owner,
    releaseSync,
    // The sync path is a handful of syscalls; one implementation keeps both exits identical.
    release: () => {
      try {
        return Promise.resolve(releaseSync());
      } catch (e) {
        return Promise.reject(e instanceof Error ? e : new Error(String(e)));
      }
    },
  };
}

function removeIfOwnedSync(lockPath: string, owner: LockOwner): boolean {
  let current: LockOwner | undefined;
  try {
    current = parseOwner(fs.readFileSync(path.join(lockPath, LOCK_OWNER_FILE), 'utf8'));
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOTDIR') return false;
    // ENOENT: the lock dir is gone, or a waiter is checking our record right now (it puts it back).
    if (code !== 'ENOENT') throw e;
    current = undefined;
  }
  if (current !== undefined && current.token !== owner.token) return false; // not ours: leave it
  // A waiter may put our record back between our unlink and rmdir; retry a few times.
  for (let attempt = 0; attempt < 50; attempt++) {
    let entries: string[];
    try {
      entries = fs.readdirSync(lockPath);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return true;
      throw e;
    }
    for (const name of entries) {
      try {
        fs.unlinkSync(path.join(lockPath, name));
      } catch {
        // vanished meanwhile
      }
    }
    try {
      fs.rmdirSync(lockPath);
      return true;
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOENT') return true;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Termination signals: while anything registered here is active, SIGINT/SIGTERM/SIGHUP (and a
// plain process.exit) run the cleanups synchronously and then end the process with 128 + signal
// number (130, 143, 129), as a shell would. When the host program has its own listeners for the
// signal, the decision to exit stays with them.
//
// Node takes a signal into its signal pipe at once but dispatches it only when the event loop
// polls, and a signal taken for a listener that is removed before that poll is dropped, not given
// back to the default action. So callers keep something registered for as long as a signal must
// not be missed (an acquisition from its first attempt, waits included, to its holding), and the
// listeners outlive the last cleanup: they go only after the loop has polled once more (two
// immediates apart: a check phase is followed by a poll phase before the next check phase). A
// signal they get with nothing registered was taken while something was: it ends the process as
// Node's default would have, by the signal itself, unless the host has listeners of its own.

const TERMINATION_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type TerminationSignal = (typeof TERMINATION_SIGNALS)[number];

const cleanups = new Set<() => void>();
const listeners = new Map<TerminationSignal, () => void>();
/** The deferred removal of the listeners, while one is scheduled. */
let pendingUninstall: NodeJS.Immediate | undefined;

function runCleanups(): void {
  for (const fn of [...cleanups]) {
    try {
      fn();
    } catch {
      // best effort: one failed cleanup must not keep the others from running
    }
  }
  cleanups.clear();
}

// A plain process.exit() while something is held still cleans up (the upstream EXIT trap).
const onExit = (): void => runCleanups();

function installListeners(): void {
  process.on('exit', onExit);
  for (const sig of TERMINATION_SIGNALS) {
    const listener = (): void => {
      const wasGuarding = cleanups.size > 0;
      runCleanups();
      uninstallListeners();
      if (process.listenerCount(sig) > 0) return;
      const code = 128 + (os.constants.signals[sig] ?? 0);
      if (wasGuarding) process.exit(code);
      // Taken while something was registered, dispatched after: with ours gone the default action
      // is back, so the signal ends the process as it would have, and the parent sees a death by
      // signal rather than an exit status (the exit is only for a signal that did not end us).
      process.kill(process.pid, sig);
      process.exit(code);
    };
    listeners.set(sig, listener);
    process.on(sig, listener);
  }
}

function uninstallListeners(): void {
  if (pendingUninstall !== undefined) clearImmediate(pendingUninstall);
  pendingUninstall = undefined;
  process.removeListener('exit', onExit);
  for (const [sig, listener] of listeners) process.removeListener(sig, listener);
  listeners.clear();
}

/**
 * Removes the listeners once the loop has polled for a signal taken until now. One immediate is
 * not enough: scheduled from an I/O callback (where most releases run) it runs in that same turn's
 * check phase, before any poll; the second runs a turn later, after that turn's poll.
 */
function uninstallAfterNextPoll(): void {
  if (pendingUninstall !== undefined) return;
  // Ref'd: a program whose work is done still turns the loop, so a signal taken meanwhile ends it.
  pendingUninstall = setImmediate(() => {
    pendingUninstall = setImmediate(uninstallListeners);
  });
}

/**
 * Runs `cleanup` (synchronously) if the process receives SIGINT/SIGTERM/SIGHUP before the
 * returned function is called. Used for locks and temp files.
 */
export function onTerminationSignal(cleanup: () => void): () => void {
  if (pendingUninstall !== undefined) clearImmediate(pendingUninstall);
  pendingUninstall = undefined;
  if (listeners.size === 0) installListeners();
  cleanups.add(cleanup);
  return () => {
    if (cleanups.delete(cleanup) && cleanups.size === 0) uninstallAfterNextPoll();
  };
}
