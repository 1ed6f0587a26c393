import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isTempName, removeStaleTemps, removeStaleTempsIn, tempSiblingName, writeFileAtomic, writeFileAtomicSync, writeFileInBackground } from '../../src/core/atomic-write.js';
import { withContainedDir } from '../../src/core/contained-dir.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';
import { mkfifo } from '../support/mkfifo.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

const ATOMIC_WRITE_MODULE = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/core/atomic-write.ts')).href;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-atomic-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

type Writer = typeof writeFileAtomic;
const syncAsAsync: Writer = (target, data, options) => Promise.resolve(writeFileAtomicSync(target, data, options));
const WRITERS: Array<[string, Writer]> = [
  ['writeFileAtomic', writeFileAtomic],
  ['writeFileAtomicSync', syncAsAsync],
];

function errorCode(run: () => unknown): Promise<string | undefined> {
  return Promise.resolve()
    .then(run)
    .then(
      () => undefined,
      (e: unknown) => (e as NodeJS.ErrnoException).code,
    );
}

describe.each(WRITERS)('%s', (_name, write) => {
  it('writes the content, replacing what was there, and leaves no temp file', async () => {
    const target = path.join(dir, 'out.json');
    await write(target, 'first');
    await write(target, new Uint8Array([0x73, 0x65, 0x63, 0x6f, 0x6e, 0x64]));
    expect(fs.readFileSync(target, 'utf8')).toBe('second');
    expect(fs.readdirSync(dir)).toEqual(['out.json']);
  });

  it('applies the requested mode exactly, whatever the umask', async () => {
    const a = path.join(dir, 'private');
    const b = path.join(dir, 'script');
    await write(a, 'x', { mode: 0o600 });
    await write(b, 'x', { mode: 0o755 });
    expect(fs.statSync(a).mode & 0o777).toBe(0o600);
    expect(fs.statSync(b).mode & 0o777).toBe(0o755);
  });

  it('creates with the default mode of a normal file when none is given', async () => {
    const target = path.join(dir, 'plain');
    await write(target, 'x');
    const umask = process.umask();
    expect(fs.statSync(target).mode & 0o777).toBe(0o666 & ~umask);
  });

  it('freeOldLater replaces a file, a symlink (never written through) or a FIFO the same way, and keeps no descriptor once settled', async () => {
    const openFds = () => fs.readdirSync('/proc/self/fd').length;
    const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
    await settle();
    const fdsBefore = openFds();
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious');
    const target = path.join(dir, 'out.json');
    const big = Buffer.alloc(4 << 20, 0x61);
    await write(target, big, { freeOldLater: true });
    await write(target, 'second', { freeOldLater: true });
    expect(fs.readFileSync(target, 'utf8')).toBe('second');
    fs.rmSync(target);
    fs.symlinkSync(victim, target);
    await write(target, 'third', { freeOldLater: true, fsync: false, unlinkFirst: true });
    expect(fs.lstatSync(target).isFile()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('third');
    fs.rmSync(target);
    mkfifo(target); // opened to be held: must not block
    await write(target, 'fourth', { freeOldLater: true });
    expect(fs.readFileSync(target, 'utf8')).toBe('fourth');
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
    expect(fs.readdirSync(dir).sort()).toEqual(['out.json', 'victim.txt']);
    await settle();
    expect(openFds()).toBe(fdsBefore);
  });

  it('unlinkFirst (for caches) replaces a file or a symlink the same way, never writing through the link', async () => {
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious');
    const target = path.join(dir, 'cache');
    await write(target, 'old', { fsync: false, unlinkFirst: true });
    await write(target, 'new', { fsync: false, unlinkFirst: true, mode: 0o600 });
    expect(fs.readFileSync(target, 'utf8')).toBe('new');
    expect(fs.statSync(target).mode & 0o777).toBe(0o600);
    fs.rmSync(target);
    fs.symlinkSync(victim, target);
    await write(target, 'newer', { fsync: false, unlinkFirst: true });
    expect(fs.lstatSync(target).isFile()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('newer');
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
    expect(fs.readdirSync(dir).sort()).toEqual(['cache', 'victim.txt']);
  });

  it('replaces a symlink at the target and leaves the link target untouched', async () => {
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious');
    const target = path.join(dir, 'link');
    fs.symlinkSync(victim, target);
    await write(target, 'new');
    expect(fs.lstatSync(target).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(target, 'utf8')).toBe('new');
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
  });

  it('exclusive creates a missing target but fails with EEXIST on an existing one, changing nothing', async () => {
    const target = path.join(dir, 'once');
    await write(target, 'first', { exclusive: true });
    expect(await errorCode(() => write(target, 'second', { exclusive: true }))).toBe('EEXIST');
    expect(fs.readFileSync(target, 'utf8')).toBe('first');
    expect(fs.readdirSync(dir)).toEqual(['once']);
  });

  it('exclusive also refuses a dangling symlink at the target', async () => {
    const target = path.join(dir, 'dangling');
    fs.symlinkSync(path.join(dir, 'nowhere'), target);
    expect(await errorCode(() => write(target, 'x', { exclusive: true }))).toBe('EEXIST');
    expect(fs.existsSync(path.join(dir, 'nowhere'))).toBe(false);
  });

  it('fails with ENOENT for a missing parent unless mkdir is set', async () => {
    const target = path.join(dir, 'a', 'b', 'c.txt');
    expect(await errorCode(() => write(target, 'x'))).toBe('ENOENT');
    await write(target, 'x', { mkdir: true });
    expect(fs.readFileSync(target, 'utf8')).toBe('x');
  });

  it('cleans up its temp file when the final rename fails', async () => {
    const target = path.join(dir, 'is-a-dir');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'inside'), '');
    expect(await errorCode(() => write(target, 'x'))).toMatch(/^(EISDIR|ENOTEMPTY|EEXIST)$/);
    expect(fs.readdirSync(dir)).toEqual(['is-a-dir']);
  });

  it('writes a target whose name uses the whole 255-byte NAME_MAX', async () => {
    for (const name of ['n'.repeat(255), 'é'.repeat(127), `${'😀'.repeat(63)}abc`]) {
      const target = path.join(dir, name);
      await write(target, name);
      expect(fs.readFileSync(target, 'utf8')).toBe(name);
    }
    expect(fs.readdirSync(dir).filter(isTempName)).toEqual([]);
  });

  it('works with fsync turned off', async () => {
    const target = path.join(dir, 'cache');
    await write(target, 'fast', { fsync: false });
    expect(fs.readFileSync(target, 'utf8')).toBe('fast');
  });
});

describe('writeFileInBackground', () => {
  const tempsIn = (d: string): string[] => fs.readdirSync(d).filter(isTempName);

  it('publishes the head, written on the thread pool, then the tail, in place of the old file, with the mode asked', async () => {
    const target = path.join(dir, 'cache');
    fs.writeFileSync(target, 'old');
    const big = Buffer.alloc(3 << 20, 0x61);
    const w = writeFileInBackground(target, [Buffer.from('head:'), big, Buffer.alloc(0), Buffer.from(':bulk')], 0o600);
    expect(fs.readFileSync(target, 'utf8')).toBe('old'); // nothing moves before finish
    await w.finish([Buffer.from(':tail')]);
    const got = fs.readFileSync(target);
    expect(got.length).toBe(5 + big.length + 5 + 5);
    expect(got.subarray(0, 5).toString()).toBe('head:');
    expect(got.subarray(5, 5 + big.length).equals(big)).toBe(true);
    expect(got.subarray(5 + big.length).toString()).toBe(':bulk:tail');
    expect(fs.statSync(target).mode & 0o777).toBe(0o600);
    expect(tempsIn(dir)).toEqual([]);
  });

  it('abort leaves the old file as it was and no temp file, even with the head still being written', async () => {
    const target = path.join(dir, 'cache');
    fs.writeFileSync(target, 'old');
    const w = writeFileInBackground(target, [Buffer.alloc(8 << 20, 1)], 0o600);
    w.abort();
    expect(tempsIn(dir)).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    expect(fs.readFileSync(target, 'utf8')).toBe('old');
    await expect(w.finish([])).rejects.toThrow(/already finished or aborted/);
  });

  it('fails at the start where the temp file cannot be made (missing directory), touching nothing', () => {
    expect(() => writeFileInBackground(path.join(dir, 'missing', 'cache'), [Buffer.from('x')], 0o600)).toThrow(/ENOENT/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a finish that cannot publish (the target is a directory) rejects and leaves no temp file', async () => {
    const target = path.join(dir, 'cache');
    fs.mkdirSync(path.join(target, 'inside'), { recursive: true });
    const w = writeFileInBackground(target, [Buffer.from('x')], 0o600);
    await expect(w.finish([Buffer.from('y')])).rejects.toThrow();
    expect(tempsIn(dir)).toEqual([]);
    expect(fs.statSync(target).isDirectory()).toBe(true);
  });
});

// ---- several processes at once ----

const CHILD_SOURCE = `
import { writeFileAtomic, writeFileAtomicSync } from ${JSON.stringify(ATOMIC_WRITE_MODULE)};
const [target, id, size, iterations, how] = process.argv.slice(2);
const header = Buffer.from('payload-' + id + '\\n');
const payload = Buffer.alloc(Number(size), 97 + (Number(id) % 26));
header.copy(payload);
let n = 0;
try {
  for (; how === 'forever' || n < Number(iterations); n++) {
    if (how === 'sync' || how === 'forever') writeFileAtomicSync(target, payload);
    else if (how === 'exclusive') writeFileAtomicSync(target, payload, { exclusive: true });
    else await writeFileAtomic(target, payload);
    if (how === 'forever' && n === 0) process.stdout.write('wrote\\n');
  }
} catch (e) {
  process.stdout.write(String(e.code));
  process.exit(e.code === 'EEXIST' ? 3 : 1);
}
`;

/** The id of the writer whose whole payload `data` is, or throws if it is not one whole payload. */
function wholePayloadId(data: Buffer, size: number): number {
  const newline = data.indexOf(0x0a);
  const match = /^payload-(\d+)$/.exec(data.subarray(0, Math.max(newline, 0)).toString());
  if (!match || data.length !== size) throw new Error(`torn file: ${data.length} bytes, header ${JSON.stringify(data.subarray(0, 20).toString())}`);
  const id = Number(match[1]);
  const fill = 97 + (id % 26);
  for (let i = newline + 1; i < data.length; i++) {
    if (data[i] !== fill) throw new Error(`torn file: byte ${i} of payload ${id} is ${data[i]}`);
  }
  return id;
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function startChild(script: string, args: string[]): { done: Promise<{ code: number | null; stdout: string }>; kill: () => void; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && code !== 3 && child.signalCode === null) reject(new Error(`writer exited ${code}: ${stderr}`));
      else resolve({ code, stdout });
    });
  });
  return { done, kill: () => child.kill('SIGKILL'), output: () => stdout };
}

type Sweep = (dir: string, names: readonly string[], options?: { onlyMine?: boolean; minAgeMs?: number }) => void;

// Both forms of the sweep: a directory by path, and one cairn holds (reached without following a link).
describe.each<[string, Sweep]>([
  ['removeStaleTemps', removeStaleTemps],
  ['removeStaleTempsIn', (at, names, options) => withContainedDir(at, [], {}, (held) => removeStaleTempsIn(held!, names, options))],
])('%s', (_name, sweep) => {
  /** A temp sibling of `name` as if made by process `pid`. */
  const plant = (name: string, pid: number): string => {
    const tmp = tempSiblingName(path.join(dir, name)).replace(`-tmp-${process.pid}-`, `-tmp-${pid}-`);
    fs.writeFileSync(tmp, 'partial');
    return path.basename(tmp);
  };

  /** Sets a file's mtime `seconds` back. */
  const age = (name: string, seconds: number): void => {
    const then = new Date(Date.now() - seconds * 1000);
    fs.utimesSync(path.join(dir, name), then, then);
  };

  it("removes a dead writer's temp files of the named files only: never a live writer's, this process's (unless asked), or a name not of that form", async () => {
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.once('exit', r));
    const alive = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      fs.writeFileSync(path.join(dir, 'a.cache'), 'published');
      const deadTemps = [plant('a.cache', dead.pid!), plant('a.render', dead.pid!)];
      const liveTemp = plant('a.cache', alive.pid!);
      const otherFile = plant('b.cache', dead.pid!);
      const mine = plant('a.cache', process.pid);
      // A user's file that only starts like a temp name.
      const lookalike = '.a.cache.cairn-tmp-notes.txt';
      fs.writeFileSync(path.join(dir, lookalike), 'keep me');
      sweep(dir, ['a.cache', 'a.render']);
      expect(fs.readdirSync(dir).sort()).toEqual(['a.cache', liveTemp, otherFile, mine, lookalike].sort());
      sweep(dir, ['a.cache', 'a.render'], { onlyMine: true }); // this process's own, as a writer cleaning up after itself
      expect(fs.readdirSync(dir).sort()).toEqual(['a.cache', liveTemp, otherFile, lookalike].sort());
      expect(deadTemps.every((t) => !fs.existsSync(path.join(dir, t)))).toBe(true);
    } finally {
      alive.kill('SIGKILL');
    }
  });

  it('with minAgeMs, leaves a dead-looking writer its time (another host or pid namespace looks dead by pid)', () => {
    const dead = 2 ** 22 + 777; // above Linux's default pid_max: no such process
    const young = plant('c.cache', dead);
    const old = plant('c.render', dead);
    age(old, 120);
    sweep(dir, ['c.cache', 'c.render'], { minAgeMs: 60_000 });
    expect(fs.readdirSync(dir)).toEqual([young]);
  });

  it('sweeps the temp of a name long enough to be shortened in it', () => {
    const long = `${'é'.repeat(100)}.cache`; // 205 bytes: the temp name keeps only a head of it
    const dead = 2 ** 22 + 12345; // above Linux's pid_max default: no such process
    const tmp = plant(long, dead);
    expect(tmp.length).toBeLessThan(long.length);
    sweep(dir, [long]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('concurrent writers in separate processes', () => {
  it('8 processes writing big distinct payloads to one target: readers and the end state only ever see one whole payload', async () => {
    const script = path.join(dir, 'writer.mts');
    fs.writeFileSync(script, CHILD_SOURCE);
    const target = path.join(dir, 'shared.bin');
    const size = 2 * 1024 * 1024;
    const children = Array.from({ length: 8 }, (_, id) => startChild(script, [target, String(id), String(size), '6', id % 2 === 0 ? 'sync' : 'async']));
    let reads = 0;
    const seen = new Set<number>();
    let running = true;
    const allDone = Promise.all(children.map((c) => c.done)).finally(() => (running = false));
    while (running) {
      const data = readIfPresent(target);
      if (data) {
        seen.add(wholePayloadId(data, size));
        reads++;
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    await allDone;
    const finalId = wholePayloadId(fs.readFileSync(target), size);
    expect(finalId).toBeGreaterThanOrEqual(0);
    expect(finalId).toBeLessThan(8);
    expect(reads).toBeGreaterThan(0);
    expect(seen.size).toBeGreaterThan(0);
    expect(fs.readdirSync(dir).filter(isTempName)).toEqual([]);
  }, WHOLE_PROCESS_BUDGET_MS);

  it('8 processes racing to create the same file exclusively: exactly one wins', async () => {
    const script = path.join(dir, 'writer.mts');
    fs.writeFileSync(script, CHILD_SOURCE);
    const target = path.join(dir, 'lock.bin');
    const results = await Promise.all(Array.from({ length: 8 }, (_, id) => startChild(script, [target, String(id), '65536', '1', 'exclusive']).done));
    expect(results.filter((r) => r.code === 0)).toHaveLength(1);
    expect(results.filter((r) => r.code === 3 && r.stdout === 'EEXIST')).toHaveLength(7);
    const winner = results.findIndex((r) => r.code === 0);
    expect(wholePayloadId(fs.readFileSync(target), 65536)).toBe(winner);
    expect(fs.readdirSync(dir).filter(isTempName)).toEqual([]);
  }, WHOLE_PROCESS_BUDGET_MS);

  it('a writer killed with SIGKILL mid-write leaves the target whole (at worst a recognisable temp file)', async () => {
    const script = path.join(dir, 'writer.mts');
    fs.writeFileSync(script, CHILD_SOURCE);
    const target = path.join(dir, 'killed.bin');
    const size = 16 * 1024 * 1024;
    const child = startChild(script, [target, '5', String(size), '0', 'forever']);
    // Wait for the first complete write, then let it start more before the kill.
    while (!child.output().includes('wrote')) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 30));
    child.kill();
    await child.done;
    expect(wholePayloadId(fs.readFileSync(target), size)).toBe(5);
    for (const name of fs.readdirSync(dir)) {
      expect(['writer.mts', 'killed.bin'].includes(name) || isTempName(name)).toBe(true);
    }
    // What the dead writer left is swept; the published file stays.
    removeStaleTemps(dir, ['killed.bin']);
    expect(fs.readdirSync(dir).sort()).toEqual(['killed.bin', 'writer.mts']);
  }, WHOLE_PROCESS_BUDGET_MS);
});
