/**
 * The pack table (src/content/pack-table.ts): a fresh process takes the packs it lists as the same
 * files from it and reads only the other headers, and it never answers differently from reading
 * every header. "A fresh process" here is a store whose directory was moved (the process's memory
 * of its packs is by path; the packs keep their inodes), or a child process.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ContentStore, sha256Of } from '../../src/content/index.js';
import { PackTable } from '../../src/content/pack-table.js';
import { REPO_ROOT } from '../support/cli.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';
import { trackedDirs } from '../session/helpers.js';

vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS });

const { dir: tempDir } = trackedDirs();
const STORE_URL = new URL(`file://${path.join(REPO_ROOT, 'dist', 'content', 'store.js')}`).href;

function item(text: string): { sha256: string; bytes: Buffer } {
  const bytes = Buffer.from(text);
  return { sha256: sha256Of(bytes), bytes };
}

/** Deterministic random numbers (mulberry32): a failure names its seed. */
function random(seed: number): (n: number) => number {
  let a = seed;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

function packsOf(dir: string): string[] {
  return fs.readdirSync(path.join(dir, 'packs')).filter((n) => n.endsWith('.pack')).sort();
}

/** A store over `dir` that no process has looked at: `dir` moved to a new name first. */
function fresh(dir: string, next: string): { store: ContentStore; dir: string } {
  fs.renameSync(dir, next);
  return { store: new ContentStore(next), dir: next };
}

/** The plain answer: a copy of the store without its table, every header read. */
function plain(dir: string, scratch: string): ContentStore {
  fs.cpSync(dir, scratch, { recursive: true });
  fs.rmSync(path.join(scratch, 'pack-table'), { force: true });
  return new ContentStore(scratch);
}

describe('pack table', () => {
  it('answers has and get exactly as reading every header does, across puts, foreign packs, deletions, replacements, gc and damage', () => {
    for (const seed of [1, 2, 3]) {
      const next = random(seed);
      const base = tempDir();
      const elsewhere = path.join(base, 'elsewhere');
      let dir = path.join(base, 's0');
      let moves = 0;
      let foreign = 0;
      let tableUsed = 0;
      const all: Array<{ sha256: string; bytes: Buffer }> = [];
      const newItems = (): Array<{ sha256: string; bytes: Buffer }> => {
        const items = Array.from({ length: 1 + next(4) }, () => (all.length > 0 && next(4) === 0 ? all[next(all.length)]! : item(`seed ${seed} object ${all.length} ${next(1e9)}\n`)));
        for (const i of items) if (!all.some((a) => a.sha256 === i.sha256)) all.push(i);
        return items;
      };
      /** A pack made in another store, renamed in as a writer does (may repeat stored objects). */
      const foreignPack = (): string => {
        const other = path.join(elsewhere, String(foreign++));
        return path.join(other, 'packs', new ContentStore(other).put(newItems()).pack!);
      };
      for (let step = 0; step < 120; step++) {
        const op = next(10);
        const packs = fs.existsSync(path.join(dir, 'packs')) ? packsOf(dir) : [];
        if (op <= 3 || packs.length === 0) for (let k = next(4); k >= 0; k--) new ContentStore(dir).put(newItems());
        else if (op === 4) {
          const pack = foreignPack();
          fs.renameSync(pack, path.join(dir, 'packs', path.basename(pack)));
        }
        else if (op === 5) fs.unlinkSync(path.join(dir, 'packs', packs[next(packs.length)]!));
        else if (op === 6) fs.renameSync(foreignPack(), path.join(dir, 'packs', packs[next(packs.length)]!));
        else if (op === 7) new ContentStore(dir).gc(new Set(all.filter(() => next(3) > 0).map((i) => i.sha256)), { graceMs: -1 });
        else if (op === 8 && fs.existsSync(path.join(dir, 'pack-table'))) {
          const table = fs.readFileSync(path.join(dir, 'pack-table'));
          const damage = next(3);
          if (damage === 0) {
            const at = next(table.length);
            table[at] = table[at]! ^ (1 << next(8));
          }
          fs.writeFileSync(path.join(dir, 'pack-table'), damage === 1 ? table.subarray(0, next(table.length)) : damage === 2 ? Buffer.from('not a table') : table);
        } else fs.rmSync(path.join(dir, 'pack-table'), { force: true });
        const tableBytes = fs.existsSync(path.join(dir, 'pack-table')) ? fs.readFileSync(path.join(dir, 'pack-table')) : null;
        if (tableBytes !== null && PackTable.decode(tableBytes) !== null) tableUsed++;
        moves++;
        const reader = fresh(dir, path.join(base, `s${moves}`));
        dir = reader.dir;
        const expected = plain(dir, path.join(base, `plain${moves}`));
        for (const i of all) {
          const where = `seed ${seed} step ${step} op ${op} ${i.sha256}`;
          expect(reader.store.has(i.sha256), where).toBe(expected.has(i.sha256));
          if (expected.has(i.sha256)) expect(reader.store.get(i.sha256).equals(i.bytes), where).toBe(true);
        }
        fs.rmSync(path.join(base, `plain${moves}`), { recursive: true });
      }
      expect(tableUsed).toBeGreaterThan(20); // the table was there to be trusted (or not) in many steps
    }
  });

  it('is written once enough headers were read, then serves the packs it lists without reading their headers', () => {
    const base = tempDir();
    let dir = path.join(base, 'a');
    const items = Array.from({ length: 20 }, (_, i) => item(`pack ${i}\n`));
    for (const i of items) new ContentStore(dir).put([i]);
    expect(fs.existsSync(path.join(dir, 'pack-table'))).toBe(false); // its own puts teach this process; nothing learned from headers
    dir = fresh(dir, path.join(base, 'b')).dir;
    new ContentStore(dir).has(items[0]!.sha256);
    const table = PackTable.decode(fs.readFileSync(path.join(dir, 'pack-table')));
    expect(table?.packs.map((p) => p.name).sort()).toEqual(packsOf(dir));
    // Wipe one pack's header in place (same file, same size): only the table still knows its objects.
    const wiped = path.join(dir, 'packs', packsOf(dir)[0]!);
    const fd = fs.openSync(wiped, 'r+');
    fs.writeSync(fd, Buffer.alloc(8), 0, 8, 0);
    fs.closeSync(fd);
    const reader = fresh(dir, path.join(base, 'c')).store;
    expect(items.every((i) => reader.has(i.sha256))).toBe(true);
    const headersOnly = plain(path.join(base, 'c'), path.join(base, 'plain'));
    expect(items.filter((i) => !headersOnly.has(i.sha256))).toHaveLength(1);
  });

  it('ignores a table that is a link or a directory, and replaces a link with a whole table of its own', () => {
    const base = tempDir();
    let dir = path.join(base, 'a');
    const items = Array.from({ length: 20 }, (_, i) => item(`object ${i}\n`));
    for (const i of items) new ContentStore(dir).put([i]);
    // A link at the table's name: not read through, and replaced by a file (the target untouched).
    const target = path.join(base, 'target');
    fs.writeFileSync(target, 'outside');
    fs.symlinkSync(target, path.join(dir, 'pack-table'));
    dir = fresh(dir, path.join(base, 'b')).dir;
    expect(items.every((i) => new ContentStore(dir).has(i.sha256))).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('outside');
    expect(fs.lstatSync(path.join(dir, 'pack-table')).isFile()).toBe(true);
    // A directory at its name: ignored, the store still answers.
    fs.rmSync(path.join(dir, 'pack-table'));
    fs.mkdirSync(path.join(dir, 'pack-table'));
    const reader = fresh(dir, path.join(base, 'c'));
    dir = reader.dir;
    expect(items.every((i) => reader.store.has(i.sha256))).toBe(true);
  });

  it('stays whole or is ignored while processes put packs and rewrite it at once, one of them killed mid-write', async () => {
    const dir = path.join(tempDir(), 'content');
    const run = (args: string[]): { child: ReturnType<typeof spawn>; done: Promise<{ code: number | null; out: string; err: string }> } => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, ...args], { env: { ...process.env, STORE_URL, STORE_DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      return { child, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err }))) };
    };
    new ContentStore(dir).put([item('first\n')]);
    const writers = [0, 1, 2].map((w) => run(['put', String(w), '40']));
    // The victim only rewrites the table (every header read again each round) until it is killed.
    const victim = run(['rewrite', '9', '100000']);
    const firstDone = await Promise.race(writers.map((w) => w.done));
    victim.child.kill('SIGKILL');
    const results = await Promise.all(writers.map((w) => w.done));
    await victim.done;
    expect(firstDone.err).toBe('');
    const stored: string[] = [];
    for (const r of results) {
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      stored.push(...(JSON.parse(r.out) as string[]));
    }
    expect(stored.length).toBe(3 * 40 * 3);
    const table = fs.existsSync(path.join(dir, 'pack-table')) ? PackTable.decode(fs.readFileSync(path.join(dir, 'pack-table'))) : null;
    if (fs.existsSync(path.join(dir, 'pack-table'))) expect(table).not.toBeNull(); // renamed in whole, never torn
    const moved = `${dir}-moved`;
    fs.renameSync(dir, moved);
    const reader = new ContentStore(moved);
    expect(stored.filter((sha) => !reader.has(sha))).toEqual([]);
    for (const sha of stored.slice(0, 30)) expect(sha256Of(reader.get(sha))).toBe(sha);
  });
});

/**
 * `put W N`: N rounds, each in a fresh copy of the store module (no memory of the packs), of a
 * lookup (which may rewrite the table) and a put of 3 new objects; prints their digests.
 * `rewrite W N`: N rounds of removing the table and looking up (every header read, table written).
 */
const CHILD = `
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
const [mode, who, rounds] = [process.argv[1], process.argv[2], Number(process.argv[3])];
const dir = process.env.STORE_DIR;
const stored = [];
for (let r = 0; r < rounds; r++) {
  const { ContentStore } = await import(process.env.STORE_URL + '?' + who + '-' + r);
  const store = new ContentStore(dir);
  if (mode === 'rewrite') fs.rmSync(path.join(dir, 'pack-table'), { force: true, recursive: true });
  store.has('0'.repeat(64));
  if (mode !== 'put') continue;
  const items = [0, 1, 2].map((k) => Buffer.from('writer ' + who + ' round ' + r + ' object ' + k + '\\n'));
  store.put(items.map((bytes) => ({ sha256: createHash('sha256').update(bytes).digest('hex'), bytes })));
  for (const bytes of items) stored.push(createHash('sha256').update(bytes).digest('hex'));
}
process.stdout.write(JSON.stringify(stored));
`;
