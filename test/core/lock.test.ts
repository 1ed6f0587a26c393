import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CairnError } from '../../src/core/errors.js';
import { LOCK_OWNER_FILE, acquireDirLock, ownerDeathReason, takeOverLock, type LockOwner, type StaleLockInfo } from '../../src/core/lock.js';
import { REPO_ROOT } from '../support/cli.js';
import { deadPid, killHolders, runSelfSignalledHolder, startHolder, startSignalledWaiter } from './lock-support.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

let dir: string;
let lockPath: string;

beforeAll(() => {
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'core', 'lock.js'))) throw new Error('run `npm run build` first: the multi-process tests use dist/core/lock.js');
});
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-lock-'));
  lockPath = path.join(dir, '.lock.TUNE-0001');
});
afterEach(() => {
  killHolders();
  fs.rmSync(dir, { recursive: true, force: true });
});

function readOwnerFile(): LockOwner {
  return JSON.parse(fs.readFileSync(path.join(lockPath, LOCK_OWNER_FILE), 'utf8')) as LockOwner;
}

/** Plants a lock directory with the given owner record, as a crashed holder would leave it. */
function plantLock(owner: Partial<LockOwner>): LockOwner {
  const full: LockOwner = { token: 'dead0000', pid: deadPid(), host: os.hostname(), startedAt: new Date(0).toISOString(), ...owner };
  fs.mkdirSync(lockPath, { mode: 0o700 });
  fs.writeFileSync(path.join(lockPath, LOCK_OWNER_FILE), JSON.stringify(full));
  return full;
}

describe('acquire and release', () => {
  it('creates the lock dir with mode 0700 and an owner record; release removes it', async () => {
    const oldUmask = process.umask(0o022);
    try {
      const lock = await acquireDirLock(lockPath, { timeoutMs: 0 });
      expect(fs.statSync(lockPath).mode & 0o777).toBe(0o700);
      const owner = readOwnerFile();
      expect(owner).toMatchObject({ pid: process.pid, host: os.hostname(), token: lock.owner.token });
      expect(Date.parse(owner.startedAt)).not.toBeNaN();
      if (fs.existsSync('/proc/sys/kernel/random/boot_id')) expect(owner.bootId).toBe(fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      expect(await lock.release()).toBe(true);
      expect(fs.existsSync(lockPath)).toBe(false);
      expect(await lock.release()).toBe(false); // idempotent
    } finally {
      process.umask(oldUmask);
    }
  });

  it('a held lock makes a 0-timeout acquire fail at once with ERR_LOCK_TIMEOUT (exit 3)', async () => {
    const lock = await acquireDirLock(lockPath, { timeoutMs: 0 });
    const err = await acquireDirLock(lockPath, { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CairnError);
    expect(err).toMatchObject({ code: 'ERR_LOCK_TIMEOUT', exitCode: 3, message: `lock timeout (0s) on ${lockPath}` });
    expect(readOwnerFile().token).toBe(lock.owner.token);
    await lock.release();
  });

  it('a waiter gets the lock once the live owner releases it', async () => {
    const first = await acquireDirLock(lockPath, { timeoutMs: 0 });
    const second = acquireDirLock(lockPath, { timeoutMs: 20_000 });
    setTimeout(() => void first.release(), 50);
    const lock = await second;
    expect(readOwnerFile().token).toBe(lock.owner.token);
    await lock.release();
  });

  it('release leaves alone a lock that is no longer ours', async () => {
    const lock = await acquireDirLock(lockPath, { timeoutMs: 0 });
    const other = { ...lock.owner, token: 'someone-else' };
    fs.writeFileSync(path.join(lockPath, LOCK_OWNER_FILE), JSON.stringify(other));
    expect(await lock.release()).toBe(false);
    expect(readOwnerFile().token).toBe('someone-else');
  });
});

describe('stale locks', () => {
  it('a dead owner on this host is taken over, and the caller is told who it was', async () => {
    const dead = plantLock({});
    const seen: StaleLockInfo[] = [];
    const lock = await acquireDirLock(lockPath, { timeoutMs: 0, onStaleTakeover: (i) => seen.push(i) });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.previousOwner?.pid).toBe(dead.pid);
    expect(seen[0]?.reason).toContain('is gone');
    expect(readOwnerFile().token).toBe(lock.owner.token);
    expect(fs.readdirSync(lockPath)).toEqual([LOCK_OWNER_FILE]);
    await lock.release();
  });

  it('an owner from an earlier boot is dead whatever its pid says', () => {
    const owner: LockOwner = { token: 't', pid: process.pid, host: os.hostname(), startedAt: '', bootId: 'another-boot' };
    if (fs.existsSync('/proc/sys/kernel/random/boot_id')) expect(ownerDeathReason(owner)).toContain('reboot');
  });

  it('a reused pid (same pid, other start time) is recognised as a dead owner', () => {
    const owner: LockOwner = { token: 't', pid: process.pid, host: os.hostname(), startedAt: '', processStart: 1 };
    if (fs.existsSync(`/proc/${process.pid}/stat`)) expect(ownerDeathReason(owner)).toContain('another process');
    expect(ownerDeathReason({ ...owner, processStart: undefined })).toBeUndefined();
  });

  it('a live owner is waited for, never taken over', async () => {
    plantLock({ pid: process.pid });
    await expect(acquireDirLock(lockPath, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'ERR_LOCK_TIMEOUT' });
    expect(readOwnerFile().token).toBe('dead0000');
  });

  it('an owner on another host is treated as alive', async () => {
    plantLock({ host: `not-${os.hostname()}` });
    await expect(acquireDirLock(lockPath, { timeoutMs: 50 })).rejects.toMatchObject({ exitCode: 3 });
  });

  it('an ownerless lock dir (another tool, or a crash right after mkdir) is waited for while fresh, taken over once old', async () => {
    fs.mkdirSync(lockPath);
    await expect(acquireDirLock(lockPath, { timeoutMs: 50 })).rejects.toMatchObject({ exitCode: 3 });
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lockPath, old, old);
    const seen: StaleLockInfo[] = [];
    const lock = await acquireDirLock(lockPath, { timeoutMs: 0, onStaleTakeover: (i) => seen.push(i) });
    expect(seen[0]?.previousOwner).toBeUndefined();
    expect(seen[0]?.reason).toContain('no owner record');
    await lock.release();
  });

  it('a lock dir left by an acquirer killed between mkdir and writing its record does not block: taken over at once', async () => {
    // A real process does steps 1 and 2 of the protocol (intent file, mkdir) and is SIGKILLed.
    const script = `const fs=require('fs');fs.writeFileSync(process.argv[1]+'.taking-'+process.pid+'-k1ll','');fs.mkdirSync(process.argv[1]);process.kill(process.pid,'SIGKILL')`;
    const child = spawnSync(process.execPath, ['-e', script, lockPath]);
    expect(child.signal).toBe('SIGKILL');
    expect(fs.readdirSync(lockPath)).toEqual([]); // ownerless and fresh: before, a 30 s wait
    const seen: StaleLockInfo[] = [];
    const lock = await acquireDirLock(lockPath, { timeoutMs: 0, onStaleTakeover: (i) => seen.push(i) });
    expect(seen[0]?.reason).toContain('killed before writing its owner record');
    expect(readOwnerFile().token).toBe(lock.owner.token);
    expect(fs.readdirSync(dir).filter((n) => n.includes('.taking-'))).toEqual([]); // the dead intent is cleaned
    expect(await lock.release()).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('an ownerless lock dir with a live acquirer\'s intent is waited for (it is between mkdir and its record)', async () => {
    fs.mkdirSync(lockPath);
    fs.writeFileSync(`${lockPath}.taking-${process.pid}-busy`, '');
    await expect(acquireDirLock(lockPath, { timeoutMs: 30 })).rejects.toMatchObject({ exitCode: 3 });
    expect(fs.readdirSync(lockPath)).toEqual([]);
  });

  it('a lock whose owner died between mkdir and installing its record is taken over at once', async () => {
    fs.mkdirSync(lockPath);
    const dead: LockOwner = { token: 'half', pid: deadPid(), host: os.hostname(), startedAt: new Date().toISOString() };
    fs.writeFileSync(path.join(lockPath, `.owner-${dead.pid}-half`), JSON.stringify(dead));
    const seen: StaleLockInfo[] = [];
    const lock = await acquireDirLock(lockPath, { timeoutMs: 0, onStaleTakeover: (i) => seen.push(i) });
    expect(seen[0]?.reason).toContain('died while taking it');
    await lock.release();
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('a record claimed by a waiter that then died is put back, so its owner keeps the lock', async () => {
    const live = await acquireDirLock(lockPath, { timeoutMs: 0 });
    // A waiter with a stale view moved the live record aside and was killed before putting it back.
    fs.renameSync(path.join(lockPath, LOCK_OWNER_FILE), path.join(lockPath, `.claim-${deadPid()}-gone`));
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lockPath, old, old); // old enough to look abandoned if the claim were ignored
    await expect(acquireDirLock(lockPath, { timeoutMs: 50 })).rejects.toMatchObject({ exitCode: 3 });
    expect(readOwnerFile().token).toBe(live.owner.token);
    expect(await live.release()).toBe(true);
  });

  it('a record claimed by a live waiter is not taken over, however old the directory', async () => {
    plantLock({});
    fs.renameSync(path.join(lockPath, LOCK_OWNER_FILE), path.join(lockPath, `.claim-${process.pid}-busy`));
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lockPath, old, old);
    await expect(acquireDirLock(lockPath, { timeoutMs: 30 })).rejects.toMatchObject({ exitCode: 3 });
    expect(fs.readdirSync(lockPath)).toEqual([`.claim-${process.pid}-busy`]);
  });

  it('a pending record of a live process is waited for', async () => {
    fs.mkdirSync(lockPath);
    const live: LockOwner = { token: 'live', pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
    fs.writeFileSync(path.join(lockPath, `.owner-${live.pid}-live`), JSON.stringify(live));
    await expect(acquireDirLock(lockPath, { timeoutMs: 30 })).rejects.toMatchObject({ exitCode: 3 });
  });

  it('a symlink or file at the lock path is never taken over or written through, and is refused at once (not a timeout)', async () => {
    const target = path.join(dir, 'target');
    fs.mkdirSync(target);
    fs.symlinkSync(target, lockPath);
    const old = new Date(Date.now() - 60_000);
    fs.lutimesSync(lockPath, old, old);
    await expect(acquireDirLock(lockPath, { timeoutMs: 60_000 })).rejects.toMatchObject({ code: 'ERR_LOCK_INVALID', exitCode: 1 });
    expect(fs.readdirSync(target)).toEqual([]);
    fs.rmSync(lockPath);
    fs.writeFileSync(lockPath, 'x');
    await expect(acquireDirLock(lockPath, { timeoutMs: 60_000 })).rejects.toMatchObject({ code: 'ERR_LOCK_INVALID', exitCode: 1 });
  });

  it('a waiter holding a stale view cannot steal the lock a live owner just took: the record is put back', async () => {
    const dead = plantLock({});
    const winner = await acquireDirLock(lockPath, { timeoutMs: 0 }); // took over the dead owner
    // A slower waiter read the dead owner before the takeover and now tries the same takeover.
    const late: LockOwner = { token: 'late', pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
    expect(await takeOverLock(lockPath, dead, late)).toBe(false);
    expect(readOwnerFile().token).toBe(winner.owner.token);
    expect(fs.readdirSync(lockPath)).toEqual([LOCK_OWNER_FILE]);
    expect(await winner.release()).toBe(true);
  });

  it('of two waiters taking over the same dead owner, exactly one wins', async () => {
    const dead = plantLock({});
    const a: LockOwner = { token: 'aaaa', pid: process.pid, host: os.hostname(), startedAt: '' };
    const b: LockOwner = { token: 'bbbb', pid: process.pid, host: os.hostname(), startedAt: '' };
    const results = await Promise.all([takeOverLock(lockPath, dead, a), takeOverLock(lockPath, dead, b)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect([a.token, b.token]).toContain(readOwnerFile().token);
    expect(fs.readdirSync(lockPath)).toEqual([LOCK_OWNER_FILE]);
  });
});

describe('multi-process', () => {
  it('8 processes racing for one lock (starting from a dead owner) never overlap, and exactly one takes over', async () => {
    plantLock({});
    const log = path.join(dir, 'log');
    const holders = Array.from({ length: 8 }, () => startHolder({ LOCK_PATH: lockPath, HOLD_MS: '15', LOG: log, TIMEOUT_MS: '30000' }));
    const results = await Promise.all(holders.map((h) => h.done));
    for (const r of results) expect(r.status, r.stderr).toBe(0);
    const lines = fs.readFileSync(log, 'utf8').trim().split('\n');
    const takeovers = lines.filter((l) => l.startsWith('takeover'));
    expect(takeovers).toHaveLength(1);
    const events = lines.filter((l) => !l.startsWith('takeover'));
    expect(events).toHaveLength(16);
    // Strictly alternating enter/exit of the same process: no two holders at once.
    for (let i = 0; i < events.length; i += 2) {
      const [enter, exit] = [events[i] ?? '', events[i + 1] ?? ''];
      expect(enter.startsWith('enter ')).toBe(true);
      expect(exit).toBe(enter.replace('enter', 'exit'));
    }
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('a SIGKILLed holder leaves its lock behind, and the next acquirer takes it over', async () => {
    const holder = startHolder({ LOCK_PATH: lockPath, HOLD_MS: '-1' });
    await holder.acquired;
    const victimPid = holder.child.pid;
    holder.child.kill('SIGKILL');
    await holder.done;
    expect(readOwnerFile().pid).toBe(victimPid);
    const seen: StaleLockInfo[] = [];
    const lock = await acquireDirLock(lockPath, { timeoutMs: 5_000, onStaleTakeover: (i) => seen.push(i) });
    expect(seen[0]?.previousOwner?.pid).toBe(victimPid);
    await lock.release();
  });

  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    it(`${signal} to a holder releases the lock and exits ${code}`, async () => {
      const holder = startHolder({ LOCK_PATH: lockPath, HOLD_MS: '-1' });
      await holder.acquired;
      holder.child.kill(signal);
      const r = await holder.done;
      expect(r.status).toBe(code);
      expect(fs.existsSync(lockPath)).toBe(false);
    });
  }

  // A signal is taken at once but dispatched only when the loop polls: one taken while the lock
  // was held must still end the process after a release in the same turn (session 17's open bug).
  for (const hold of ['sync', 'async'] as const) {
    it(`a ${hold} holder that gets SIGTERM and releases in the same turn still ends by the signal`, async () => {
      const marker = path.join(dir, 'went-on');
      const r = await runSelfSignalledHolder({ LOCK_PATH: lockPath, MARKER: marker, HOLD: hold });
      expect(r.signal, `${r.status}/${r.signal} ${r.stderr}`).toBe('SIGTERM');
      expect(fs.existsSync(marker)).toBe(false);
      expect(fs.existsSync(lockPath)).toBe(false);
    });
  }

  it('a program with its own SIGTERM listener keeps the decision after a release in the same turn', async () => {
    const marker = path.join(dir, 'went-on');
    const r = await runSelfSignalledHolder({ LOCK_PATH: lockPath, MARKER: marker, HOLD: 'sync', HOST_LISTENER: '1' });
    expect(r.stdout).toContain('host saw SIGTERM');
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(marker)).toBe(true);
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('an acquirer that gets SIGTERM in the attempt that makes it give up still ends by the signal', async () => {
    const holder = startHolder({ LOCK_PATH: lockPath, HOLD_MS: '-1' });
    await holder.acquired;
    const token = readOwnerFile().token;
    // TIMEOUT_MS=0 tries once: the owner check is its last call before the timeout error.
    const waiter = startSignalledWaiter({ LOCK_PATH: lockPath, TIMEOUT_MS: '0', KILL_AT: 'owner-check', KILL_ATTEMPT: '1' });
    const r = await waiter.done;
    expect(r.stdout).not.toMatch(/acquired|survived/);
    expect(r.status === 143 || r.signal === 'SIGTERM', `${r.status}/${r.signal} ${r.stdout}`).toBe(true);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith(`${path.basename(lockPath)}.`))).toEqual([]);
    expect(readOwnerFile().token).toBe(token);
    holder.child.kill('SIGTERM');
    expect((await holder.done).status).toBe(143);
  });

  it('process.exit() while holding still releases the lock', async () => {
    const holder = startHolder({ LOCK_PATH: lockPath, EXIT_WHILE_HELD: '5' });
    const r = await holder.done;
    expect(r.status).toBe(5);
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('acquirers killed with SIGTERM at random moments leave no intent file and no lock without a record', async () => {
    const parent = path.dirname(lockPath);
    const litter = () => fs.readdirSync(parent).filter((n) => n.startsWith(`${path.basename(lockPath)}.`));
    for (let round = 0; round < 12; round++) {
      // Even rounds wait on a held lock; odd rounds race for a free one.
      const holder = round % 2 === 0 ? startHolder({ LOCK_PATH: lockPath, HOLD_MS: '-1' }) : undefined;
      if (holder) await holder.acquired;
      const acquirer = startHolder({ LOCK_PATH: lockPath, HOLD_MS: '-1', TIMEOUT_MS: '30000' });
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 250)));
      acquirer.child.kill('SIGTERM');
      await acquirer.done;
      expect(litter()).toEqual([]);
      // A lock directory left behind always says whose it is, so no one waits out the ownerless grace.
      if (fs.existsSync(lockPath)) expect(fs.existsSync(path.join(lockPath, 'owner.json'))).toBe(true);
      if (holder) {
        holder.child.kill('SIGTERM');
        await holder.done;
      }
      fs.rmSync(lockPath, { recursive: true, force: true });
    }
  }, WHOLE_PROCESS_BUDGET_MS);

  it('a waiter sent SIGTERM at any moment of its wait ends with 143 and never takes the lock', async () => {
    const holder = startHolder({ LOCK_PATH: lockPath, HOLD_MS: '-1' });
    await holder.acquired;
    const token = readOwnerFile().token;
    const parent = path.dirname(lockPath);
    const litter = () => fs.readdirSync(parent).filter((n) => n.startsWith(`${path.basename(lockPath)}.`));
    const ended = (r: { status: number | null; signal: NodeJS.Signals | null; stdout: string }, moment: string) => {
      expect(r.stdout, moment).not.toMatch(/acquired|survived/);
      expect(r.status === 143 || r.signal === 'SIGTERM', `${moment}: ${r.status}/${r.signal}`).toBe(true);
      expect(litter(), moment).toEqual([]);
    };
    // Sent by the waiter itself at a chosen call of a chosen attempt: the owner check is the last
    // call of a failed attempt, where a signal taken just before the attempt ended was lost.
    for (const point of ['intent', 'mkdir', 'owner-check']) {
      for (const n of [1, 2, 3, 5]) {
        const waiter = startSignalledWaiter({ LOCK_PATH: lockPath, KILL_AT: point, KILL_ATTEMPT: String(n), GIVE_UP_AFTER: String(n + 3) });
        ended(await waiter.done, `${point} of attempt ${n}`);
      }
    }
    // Sent from outside once the waiter says it is on attempt n: wherever that lands in its loop.
    for (let n = 1; n <= 6; n++) {
      const waiter = startSignalledWaiter({ LOCK_PATH: lockPath, GIVE_UP_AFTER: String(n + 200) });
      await waiter.attempt(n);
      waiter.child.kill('SIGTERM');
      ended(await waiter.done, `from outside after attempt ${n}`);
    }
    expect(readOwnerFile().token).toBe(token);
    holder.child.kill('SIGTERM');
    expect((await holder.done).status).toBe(143);
  });

  it('an acquirer sent SIGTERM as it takes a free lock releases it and ends with 143', async () => {
    for (let round = 0; round < 6; round++) {
      const acquirer = startSignalledWaiter({ LOCK_PATH: lockPath, KILL_AT: 'taken', KILL_ATTEMPT: '1' });
      const r = await acquirer.done;
      expect(r.stdout, `round ${round}`).not.toContain('survived');
      expect(r.status === 143 || r.signal === 'SIGTERM', `round ${round}: ${r.status}/${r.signal}`).toBe(true);
      expect(fs.existsSync(lockPath), `round ${round}`).toBe(false);
    }
  });

  it('a waiter killed with SIGTERM releases nothing it does not own', async () => {
    const holder = startHolder({ LOCK_PATH: lockPath, HOLD_MS: '-1' });
    await holder.acquired;
    const token = readOwnerFile().token;
    const waiter = startHolder({ LOCK_PATH: lockPath, HOLD_MS: '0', TIMEOUT_MS: '30000' });
    await new Promise((r) => setTimeout(r, 300)); // let it poll a while
    waiter.child.kill('SIGTERM');
    const w = await waiter.done;
    expect(w.status === 143 || w.signal === 'SIGTERM').toBe(true);
    expect(readOwnerFile().token).toBe(token);
    holder.child.kill('SIGTERM');
    expect((await holder.done).status).toBe(143);
    expect(fs.existsSync(lockPath)).toBe(false);
  });
});
