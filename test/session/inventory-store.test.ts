/** Content-addressed inventories: shared directories, O(changed) growth, diff, GC by reachability. */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InventoryStore, SnapshotManager, type InventoryEntry } from '../../src/session/index.js';
import { canonicalTree, type TreeEntry } from '../../src/session/inventory-store/inventory-store.js';
import { canonicalize } from '../../src/core/jcs.js';
import { CairnError } from '../../src/core/errors.js';
import { compareUtf8 } from '../../src/core/utf8.js';
import { write, useTempCacheHome, trackedDirs } from './helpers.js';

useTempCacheHome();

const { dir: tempDir } = trackedDirs();

function entry(p: string, content: string): InventoryEntry {
  return { path: p, bytes: content.length, sha256: content.padEnd(64, '0').slice(0, 64).replace(/[^0-9a-f]/g, 'a'), mode: '0644', kind: 'file' };
}

describe('InventoryStore', () => {
  it('round-trips an inventory exactly, sorted by UTF-8 order', () => {
    const store = new InventoryStore(tempDir());
    const entries = [entry('b/x', '1'), entry('a', '2'), entry('b/c/d', '3'), entry('ü/日', '4'), { path: 'link', bytes: 0, mode: '0644', kind: 'symlink' }];
    const { digest } = store.put(entries);
    expect(store.get(digest)).toEqual([...entries].sort((x, y) => compareUtf8(x.path, y.path)));
  });

  it('gives equal trees equal digests and writes nothing the second time', () => {
    const store = new InventoryStore(tempDir());
    const entries = [entry('a/b', '1'), entry('c', '2')];
    const first = store.put(entries);
    const second = store.put([...entries].reverse());
    expect(second.digest).toBe(first.digest);
    expect(second.objectsWritten).toBe(0);
  });

  it('diffs two inventories: added, modified (digest, mode) and deleted', () => {
    const store = new InventoryStore(tempDir());
    const a = store.put([entry('keep', '1'), entry('dir/edit', '2'), entry('dir/gone', '3'), entry('mode', '4'), entry('was-file', '5')]);
    const b = store.put([
      entry('keep', '1'),
      entry('dir/edit', '9'),
      entry('new/deep/file', '6'),
      { ...entry('mode', '4'), mode: '0755' },
      entry('was-file/now-dir', '7'),
    ]);
    expect(store.diff(a.digest, b.digest)).toEqual({
      added: ['new/deep/file', 'was-file/now-dir'],
      modified: ['dir/edit', 'mode'],
      deleted: ['dir/gone', 'was-file'],
    });
  });

  it('diff agrees with a naive comparison of the flat lists (property)', () => {
    const store = new InventoryStore(tempDir());
    const pathArb = fc.array(fc.constantFrom('a', 'b', 'c', 'ü'), { minLength: 1, maxLength: 3 }).map((s) => s.join('/'));
    const invArb = fc.dictionary(pathArb, fc.constantFrom('1', '2', '3'), { maxKeys: 12 }).map((d) => {
      // a path cannot be both a file and a directory: drop any that is a prefix of another
      const keys = Object.keys(d).filter((k) => !Object.keys(d).some((o) => o.startsWith(`${k}/`)));
      return keys.map((k) => entry(k, d[k] as string));
    });
    fc.assert(
      fc.property(invArb, invArb, (x, y) => {
        const dx = store.put(x).digest;
        const dy = store.put(y).digest;
        const mx = new Map(x.map((e) => [e.path, e.sha256]));
        const my = new Map(y.map((e) => [e.path, e.sha256]));
        const expected = {
          added: [...my.keys()].filter((k) => !mx.has(k)).sort(compareUtf8),
          modified: [...my.keys()].filter((k) => mx.has(k) && mx.get(k) !== my.get(k)).sort(compareUtf8),
          deleted: [...mx.keys()].filter((k) => !my.has(k)).sort(compareUtf8),
        };
        expect(store.diff(dx, dy)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('answers a pair it walked last from memory, with copies, and not once a root is gone from disk', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const a = store.put([entry('keep', '1'), entry('dir/edit', '2'), entry('gone', '5')]);
    const b = store.put([entry('keep', '1'), entry('dir/edit', '3'), entry('new', '4')]);
    const expected = [
      { path: 'dir/edit', before: entry('dir/edit', '2'), after: entry('dir/edit', '3') },
      { path: 'gone', before: entry('gone', '5'), after: null },
      { path: 'new', before: null, after: entry('new', '4') },
    ];
    const first = store.changedEntries(a.digest, b.digest);
    expect(first).toEqual(expected);
    // what one caller does with its answer does not reach the next one (a post's capture, then its review)
    first[0]!.after!.sha256 = 'f'.repeat(64);
    first.pop();
    expect(new InventoryStore(dir).changedEntries(a.digest, b.digest)).toEqual(expected);
    expect(store.diff(a.digest, b.digest)).toEqual({ added: ['new'], modified: ['dir/edit'], deleted: ['gone'] });
    // a root deleted by hand: the error a walk of the disk gives, not the remembered answer
    const hex = b.digest.slice('sha256:'.length);
    fs.rmSync(path.join(dir, 'objects', hex.slice(0, 2), hex.slice(2)));
    expect(() => store.changedEntries(a.digest, b.digest)).toThrow(expect.objectContaining({ code: 'ERR_NOT_FOUND' }));
  });

  it('serializes directory objects exactly as RFC 8785 canonicalize does, file texts kept from one listing to the next or not (property)', () => {
    const name = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 });
    const file = fc.record(
      { name, bytes: fc.nat(), sha256: fc.stringMatching(/^[0-9a-f]{64}$/), mode: fc.constantFrom('0644', '0755'), kind: fc.constantFrom('file', 'symlink') },
      { requiredKeys: ['name', 'bytes', 'mode', 'kind'] },
    );
    const dir = fc.record({ name, tree: fc.stringMatching(/^[0-9a-f]{64}$/) });
    fc.assert(
      fc.property(fc.array(fc.oneof(file, dir), { maxLength: 6 }), (entries) => {
        expect(canonicalTree(entries as TreeEntry[])).toBe(canonicalize({ entries }));
        // Kept texts (frozen nodes, as a resident put's): the same, first and again, in another listing too.
        const frozen = entries.map((e) => Object.freeze({ ...e })) as TreeEntry[];
        expect(canonicalTree(frozen, true)).toBe(canonicalize({ entries }));
        expect(canonicalTree([...frozen].reverse(), true)).toBe(canonicalize({ entries: [...entries].reverse() }));
        // A node not frozen is never taken from the kept texts: changed, it is written as it is now.
        const loose = entries.map((e) => ({ ...e })) as TreeEntry[];
        canonicalTree(loose, true);
        for (const e of loose) if ('bytes' in e) e.bytes += 1;
        expect(canonicalTree(loose, true)).toBe(canonicalize({ entries: loose }));
      }),
      { numRuns: 500 },
    );
  });

  it('rejects a corrupted object with a clear error naming it', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const { digest } = store.put([entry('a', '1')]);
    const hex = digest.slice('sha256:'.length);
    // A copy this process never put into nor read from, as a later process finds it.
    const copy = tempDir();
    fs.cpSync(dir, copy, { recursive: true });
    const file = path.join(copy, 'objects', hex.slice(0, 2), hex.slice(2));
    fs.writeFileSync(file, '{"entries":[]}');
    expect(() => new InventoryStore(copy).get(digest)).toThrow(CairnError);
    expect(() => new InventoryStore(copy).get(digest)).toThrow(file);
    // This process remembers what it put in `dir`, which is what the name says.
    fs.writeFileSync(path.join(dir, 'objects', hex.slice(0, 2), hex.slice(2)), '{"entries":[]}');
    expect(new InventoryStore(dir).get(digest)).toEqual([entry('a', '1')]);
  });
});

describe('inventory storage grows with what changed', () => {
  it('costs a few directory objects, not the whole tree, for a second iteration with one change', () => {
    const root = tempDir();
    for (let d = 0; d < 40; d++) for (let f = 0; f < 50; f++) write(root, `src/mod${d}/file${f}.ts`, `export const x${f} = ${d};\n`);
    const manager = new SnapshotManager(root);
    const store = manager.inventoryStore();

    manager.capturePreSnapshot(root, path.join(root, '.cairn', 'iterations', '001'));
    manager.capturePostSnapshot(root, path.join(root, '.cairn', 'iterations', '001'));
    const afterFirst = store.usage();

    write(root, 'src/mod17/file3.ts', 'export const changed = true;\n');
    manager.capturePreSnapshot(root, path.join(root, '.cairn', 'iterations', '002'));
    const afterSecond = store.usage();

    // First iteration: 40 leaf directories + src + root. One changed file rewrites only its
    // directory, `src` and the root: 3 objects.
    expect(afterFirst.objects).toBe(42);
    expect(afterSecond.objects - afterFirst.objects).toBe(3);
    const growth = afterSecond.bytes - afterFirst.bytes;
    const leaf = afterFirst.bytes / 42;
    expect(growth).toBeLessThan(afterFirst.bytes / 5);
    expect(growth).toBeLessThan(leaf * 3 + 4096);
  });
});

describe('InventoryStore put and prune', () => {
  const objectFiles = (dir: string): string[] =>
    fs.readdirSync(path.join(dir, 'objects')).flatMap((fan) => fs.readdirSync(path.join(dir, 'objects', fan)).map((n) => path.join(dir, 'objects', fan, n)));
  const tree = (v: string): InventoryEntry[] => [entry('a/one', '1'), entry('b/two', '2'), entry('c/three', v)];

  it('replaces an object a killed put left short, and one a link stands for, before naming a root that needs it', () => {
    const dir = tempDir();
    const first = new InventoryStore(dir);
    first.put(tree('3'));
    // What a put of tree('4') would write, found by putting it in a scratch store.
    const scratch = tempDir();
    const { digest } = new InventoryStore(scratch).put(tree('4'));
    const fresh = objectFiles(scratch).map((f) => path.relative(scratch, f)).filter((rel) => !fs.existsSync(path.join(dir, rel)));
    expect(fresh.length).toBeGreaterThanOrEqual(2); // c/ and the root
    const [torn, linked] = fresh as [string, string];
    for (const rel of fresh) fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, torn), fs.readFileSync(path.join(scratch, torn)).subarray(0, 5)); // cut off mid-write
    const target = path.join(tempDir(), 'victim');
    fs.writeFileSync(target, 'keep');
    fs.symlinkSync(target, path.join(dir, linked));
    const again = new InventoryStore(dir).put(tree('4')); // a new process: only the files on disk to go by
    expect(again.digest).toBe(digest);
    expect(again.objectsWritten).toBe(fresh.length);
    for (const rel of fresh) expect(fs.readFileSync(path.join(dir, rel))).toEqual(fs.readFileSync(path.join(scratch, rel)));
    expect(fs.lstatSync(path.join(dir, linked)).isFile()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('keep');
    expect(new InventoryStore(dir).get(digest)).toEqual(tree('4'));
  });

  it('leaves objects that already exist untouched: no write, no mtime refresh', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    store.put(tree('3'));
    const old = new Date(Date.now() - 3600_000);
    for (const f of objectFiles(dir)) fs.utimesSync(f, old, old);
    const again = new InventoryStore(dir).put(tree('3')); // a new process: only the files on disk to go by
    expect(again.objectsWritten).toBe(0);
    for (const f of objectFiles(dir)) expect(Math.round(fs.statSync(f).mtimeMs)).toBe(old.getTime()); // a refresh would be an hour later
  });

  it('keeps a put inventory through a prune with no grace period until its ref is written, then lets it go with the ref', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const { digest } = store.put(tree('3'));
    expect(fs.readdirSync(path.join(dir, 'pending'))).toHaveLength(1); // the put's mark names the root
    expect(store.prune({ graceMs: 0 }).deleted).toBe(0);
    expect(store.get(digest)).toHaveLength(3);
    const snapshot = path.join(tempDir(), 'pre-snapshot.json');
    fs.writeFileSync(snapshot, JSON.stringify({ inventory: { digest } }));
    store.addRef(snapshot, digest);
    expect(fs.readdirSync(path.join(dir, 'pending'))).toEqual([]); // the ref took the mark's place
    expect(store.prune({ graceMs: 0 }).deleted).toBe(0);
    fs.rmSync(snapshot);
    expect(store.prune({ graceMs: 0 }).deleted).toBe(4);
    expect(store.has(digest)).toBe(false);
  });

  it('looks at the objects again after a prune: what the prune deleted is written anew', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const first = store.put(tree('3'));
    const snapshot = path.join(tempDir(), 'pre-snapshot.json');
    fs.writeFileSync(snapshot, JSON.stringify({ inventory: { digest: first.digest } }));
    store.addRef(snapshot, first.digest);
    fs.rmSync(snapshot);
    expect(store.prune({ graceMs: 0 }).deleted).toBe(4);
    // The same inventory again: the list of the last put's objects is from before the prune.
    const second = store.put(tree('3'));
    expect(second.digest).toBe(first.digest);
    expect(second.objectsWritten).toBe(4);
    expect(store.get(second.digest)).toHaveLength(3);
  });

  it('deletes with a grace of 0 an unreachable object whose time is later than the prune\'s clock (file times are finer than Date.now())', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const { digest } = store.put(tree('3'));
    const snapshot = path.join(tempDir(), 'pre-snapshot.json');
    fs.writeFileSync(snapshot, JSON.stringify({ inventory: { digest } }));
    store.addRef(snapshot, digest);
    fs.rmSync(snapshot);
    // What a fast file system does by chance (a time later in the millisecond Date.now() truncates), made sure of.
    const soon = (Date.now() + 50) / 1000;
    const touch = (at: string): void => {
      for (const e of fs.readdirSync(at, { withFileTypes: true })) {
        const p = path.join(at, e.name);
        if (e.isDirectory()) touch(p);
        else if (e.isFile()) fs.utimesSync(p, soon, soon);
      }
    };
    touch(path.join(dir, 'objects'));
    expect(store.prune({ graceMs: 0 }).deleted).toBe(4);
    expect(store.has(digest)).toBe(false);
  });

  it('skips the objects of the last put without looking, and still writes every new one', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    store.put(tree('3'));
    const changed = store.put(tree('4'));
    expect(changed.objectsWritten).toBe(2); // the root and c/
    expect(store.get(changed.digest).map((e) => e.sha256?.slice(0, 1))).toEqual(['1', '2', '4']);
  });

  it('names the same root for a put of the last put\'s entries, and never a stale one for other entries (property)', () => {
    // One store, a random sequence of puts (repeats, single-field changes, paths with a newline
    // or a lone surrogate, which UTF-8 would merge): each digest is the one a fresh store gives.
    const names = ['a', 'b/c', 'b/d', 'n\nl', 'x\uD800', 'x\uD801', 'ü/日'];
    const arbEntry = fc.record({
      path: fc.constantFrom(...names),
      bytes: fc.nat(3),
      mode: fc.constantFrom('0644', '0755'),
      kind: fc.constantFrom('file', 'symlink'),
      sha: fc.option(fc.constantFrom('1', '2'), { nil: undefined }),
    });
    const arbList = fc.uniqueArray(arbEntry, { selector: (e) => e.path, maxLength: names.length }).map((list) =>
      list.map((e): InventoryEntry => ({ path: e.path, bytes: e.bytes, mode: e.mode, kind: e.kind, ...(e.sha === undefined ? {} : { sha256: e.sha.repeat(64) }) })),
    );
    fc.assert(
      fc.property(fc.array(arbList, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(5), { maxLength: 6 }), (lists, repeats) => {
        const store = new InventoryStore(tempDir());
        const sequence = lists.flatMap((l, i) => (repeats[i] === 0 ? [l, l] : [l]));
        for (const entries of sequence) {
          const { digest } = store.put(entries);
          expect(digest).toBe(new InventoryStore(tempDir()).put(entries).digest);
          expect(store.get(digest)).toEqual([...entries].sort((x, y) => compareUtf8(x.path, y.path)));
        }
      }),
      { numRuns: 40 },
    );
    // The cases a careless key merges, one after the other in one store.
    const store = new InventoryStore(tempDir());
    for (const entries of [[entry('x\uD800', '1')], [entry('x\uD801', '1')], [entry('n\nl', '1'), entry('m', '2')], [entry('n', '1'), entry('l\nm', '2')]]) {
      expect(store.put(entries).digest).toBe(new InventoryStore(tempDir()).put(entries).digest);
    }
  });

  it('names every directory by its listing alone across puts of one process, whatever the last put made (property)', () => {
    // The digest a naive build gives: each directory's object through the generic canonicalizer.
    const naive = (entries: readonly InventoryEntry[], prefix = ''): string => {
      const here = new Map<string, TreeEntry>();
      for (const e of entries) {
        const rest = e.path.slice(prefix.length);
        if (!e.path.startsWith(prefix)) continue;
        const slash = rest.indexOf('/');
        if (slash < 0) here.set(rest, { name: rest, bytes: e.bytes, mode: e.mode, kind: e.kind, ...(e.sha256 === undefined ? {} : { sha256: e.sha256 }) });
        else {
          const name = rest.slice(0, slash);
          if (!here.has(name)) here.set(name, { name, tree: naive(entries, `${prefix}${name}/`) });
        }
      }
      const list = [...here.values()].sort((a, b) => compareUtf8(a.name, b.name));
      return createHash('sha256').update(canonicalize({ entries: list })).digest('hex');
    };
    const paths = ['a', 'b/c', 'b/d', 'b/e/f', 'b/e/g', 'h/i/j', 'h/k'];
    const arbList = fc.subarray(paths, { minLength: 1 }).chain((chosen) =>
      fc.tuple(...chosen.map((p) => fc.record({ bytes: fc.nat(2), sha: fc.constantFrom('1', '2', '3') }).map(({ bytes, sha }): InventoryEntry => ({ path: p, bytes, mode: '0644', kind: 'file', sha256: sha.repeat(64) })))),
    );
    fc.assert(
      fc.property(fc.array(arbList, { minLength: 2, maxLength: 8 }), (lists) => {
        const store = new InventoryStore(tempDir());
        for (const entries of lists) {
          const { digest } = store.put(entries);
          expect(digest).toBe(`sha256:${naive(entries)}`);
          expect(new InventoryStore(store.dir).get(digest)).toEqual(entries);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('writes everything again when the objects were removed by hand', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    store.put(tree('3'));
    fs.rmSync(path.join(dir, 'objects'), { recursive: true });
    const again = store.put(tree('3'));
    expect(again.objectsWritten).toBe(4);
    expect(store.get(again.digest)).toHaveLength(3);
  });

  it('takes its mark back when the put fails, so a prune has nothing to wait for', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    store.put(tree('3'));
    fs.rmSync(path.join(dir, 'objects'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'objects'), 'not a directory');
    expect(() => store.put(tree('4'))).toThrow();
    expect(fs.readdirSync(path.join(dir, 'pending'))).toHaveLength(1); // only the first put's mark, with its root
    const mark = JSON.parse(fs.readFileSync(path.join(dir, 'pending', fs.readdirSync(path.join(dir, 'pending'))[0]!), 'utf8')) as { digest?: string };
    expect(mark.digest).toMatch(/^sha256:/);
  });

  it('a prune with no grace waits for a mark still being written and keeps the root it then names; an old unreadable mark goes', async () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const { digest } = store.put(tree('5'));
    const pendingDir = path.join(dir, 'pending');
    const [markName] = fs.readdirSync(pendingDir);
    const markFile = path.join(pendingDir, markName!);
    const whole = fs.readFileSync(markFile, 'utf8');
    expect(JSON.parse(whole)).toMatchObject({ digest });
    // The put's first write of its mark has begun (the name exists, empty); it lands 300 ms later.
    fs.writeFileSync(markFile, '');
    fs.writeFileSync(path.join(pendingDir, 'damaged.json'), '');
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(path.join(pendingDir, 'damaged.json'), old, old);
    const { spawn } = await import('node:child_process');
    const writer = spawn(process.execPath, ['-e', `setTimeout(() => require('node:fs').writeFileSync(${JSON.stringify(markFile)}, ${JSON.stringify(whole)}), 300)`]);
    const exited = new Promise((r) => writer.on('exit', r));
    const result = store.prune({ graceMs: 0 }); // synchronous: it polls until the mark is readable
    await exited;
    expect(store.get(digest)).toHaveLength(tree('5').length);
    expect(fs.readFileSync(markFile, 'utf8')).toBe(whole);
    expect(fs.existsSync(path.join(pendingDir, 'damaged.json'))).toBe(false);
    expect(result.kept).toBeGreaterThan(0);
  });

  it('removes the mark of a put whose process died, and the marker of a dead prune', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    store.put(tree('3'));
    // A process that is gone: 2^22 + 1 is above the largest pid Linux can give (PID_MAX_LIMIT).
    const dead = { pid: 4194305, host: os.hostname(), startedAt: '2020-01-01T00:00:00.000Z' };
    fs.writeFileSync(path.join(dir, 'pruning'), JSON.stringify(dead));
    fs.writeFileSync(path.join(dir, 'pending', 'dead.json'), JSON.stringify(dead));
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(path.join(dir, 'pending', 'dead.json'), old, old);
    const next = store.put(tree('4')); // does not wait for the dead prune
    expect(next.objectsWritten).toBe(2);
    expect(fs.existsSync(path.join(dir, 'pruning'))).toBe(false);
    store.prune({ graceMs: 60_000 });
    expect(fs.readdirSync(path.join(dir, 'pending')).includes('dead.json')).toBe(false);
  });
});

describe('pruneInventories', () => {
  it('deletes only objects no existing snapshot references', () => {
    const root = tempDir();
    write(root, 'a/one.txt', '1');
    write(root, 'b/two.txt', '2');
    const manager = new SnapshotManager(root);
    const it1 = path.join(root, '.cairn', 'iterations', '001');
    const it2 = path.join(root, '.cairn', 'iterations', '002');
    const pre1 = manager.capturePreSnapshot(root, it1);
    write(root, 'a/one.txt', 'changed');
    const pre2 = manager.capturePreSnapshot(root, it2);
    const store = manager.inventoryStore();
    expect(store.usage().objects).toBe(5); // root, a, b shared; root', a'

    // Both still referenced: nothing goes, even with no grace period.
    expect(manager.pruneInventories({ graceMs: 0 }).deleted).toBe(0);

    fs.rmSync(it1, { recursive: true });
    const dry = manager.pruneInventories({ graceMs: 0, dryRun: true });
    expect(dry.deleted).toBe(2);
    expect(store.usage().objects).toBe(5);

    const result = manager.pruneInventories({ graceMs: 0 });
    expect(result.deleted).toBe(2); // the first root and the old `a`
    expect(result.refsRemoved).toBe(1);
    expect(store.has(pre1.inventory?.digest as string)).toBe(false);
    expect(store.get(pre2.inventory?.digest as string).map((e) => e.path)).toEqual(['a/one.txt', 'b/two.txt']);
  });

  it('keeps young unreferenced objects within the grace period', () => {
    const root = tempDir();
    write(root, 'x.txt', 'x');
    const manager = new SnapshotManager(root);
    const it1 = path.join(root, '.cairn', 'iterations', '001');
    manager.capturePreSnapshot(root, it1);
    fs.rmSync(it1, { recursive: true });
    expect(manager.pruneInventories().deleted).toBe(0);
    expect(manager.pruneInventories({ graceMs: 0 }).deleted).toBe(1);
  });
});

describe('packs of incremental puts', () => {
  // Twenty directories of two files; `changed(v, dirs)` edits one file in each of `dirs`.
  const wide = (version: (d: number) => string): InventoryEntry[] => Array.from({ length: 20 }, (_, d) => [entry(`d${d}/keep`, `${d}`), entry(`d${d}/edit`, version(d))]).flat();
  const changed = (v: string, dirs: number): ((d: number) => string) => (d) => (d < dirs ? `${v}${d}` : `0${d}`);
  const loose = (dir: string): number => fs.readdirSync(path.join(dir, 'objects')).reduce((n, fan) => n + fs.readdirSync(path.join(dir, 'objects', fan)).length, 0);
  const packs = (dir: string): string[] => {
    const at = path.join(dir, 'packed', 'packs');
    return fs.existsSync(at) ? fs.readdirSync(at).filter((n) => n.endsWith('.pack')) : [];
  };
  /** `get` in a new process: nothing remembered, only the disk to go by. */
  const getElsewhere = (dir: string, digest: string): unknown => {
    const url = new URL(`file://${path.resolve('dist/session/inventory-store/inventory-store.js')}`).href;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `const { InventoryStore } = await import(${JSON.stringify(url)}); try { process.stdout.write(JSON.stringify(new InventoryStore(${JSON.stringify(dir)}).get(${JSON.stringify(digest)}))); } catch (e) { process.stdout.write(JSON.stringify({ code: e.code, message: e.message })); }`], { encoding: 'utf8' });
    return JSON.parse(r.stdout);
  };
  const reference = (store: InventoryStore, digest: string): string => {
    const snapshot = path.join(tempDir(), 'snapshot.json');
    fs.writeFileSync(snapshot, JSON.stringify({ inventory: { digest } }));
    store.addRef(snapshot, digest);
    return snapshot;
  };

  it('writes the new objects of a wide incremental put as one pack, which another process reads', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const first = store.put(wide(changed('a', 0)));
    expect(first.objectsWritten).toBe(21); // the first put of an epoch writes loose objects
    expect(packs(dir)).toEqual([]);
    const second = store.put(wide(changed('b', 12)));
    expect(second.objectsWritten).toBe(13); // 12 directories and the root
    expect(loose(dir)).toBe(21);
    expect(packs(dir)).toHaveLength(1);
    expect(store.usage().objects).toBe(34);
    const sorted = (list: InventoryEntry[]): InventoryEntry[] => [...list].sort((x, y) => compareUtf8(x.path, y.path));
    expect(getElsewhere(dir, second.digest)).toEqual(sorted(wide(changed('b', 12))));
    expect(new InventoryStore(dir).diff(first.digest, second.digest).modified).toHaveLength(12);
    // A few new objects stay loose: a pack would save nothing.
    store.put(wide(changed('c', 2)));
    expect(loose(dir)).toBe(24);
    expect(packs(dir)).toHaveLength(1);
  });

  it('prunes packs by reachability: a dead one deleted, a partly live one rewritten with its live objects', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const a = store.put(wide(changed('a', 0)));
    const b = store.put(wide(changed('b', 12))); // pack 1: d0..d11 at b, and b's root
    const c = store.put(wide((d) => (d < 10 ? `c${d}` : d < 12 ? `b${d}` : `0${d}`))); // pack 2: d0..d9 at c, c's root
    expect(packs(dir)).toHaveLength(2);
    const keep = [reference(store, a.digest), reference(store, c.digest)];
    fs.rmSync(reference(store, b.digest));
    const result = store.prune({ graceMs: 0 });
    // Of pack 1, d10 and d11 at b are still c's: they stay, in a rewritten pack; the rest goes.
    expect(result.deleted).toBe(11);
    const after = packs(dir);
    expect(after).toHaveLength(2);
    expect(after.filter((n) => n.includes('-r'))).toHaveLength(1); // pack 1, rewritten
    expect(store.has(b.digest)).toBe(false);
    expect(getElsewhere(dir, c.digest)).toHaveLength(40);
    expect(getElsewhere(dir, a.digest)).toHaveLength(40);
    expect(store.usage().objects).toBe(21 + 11 + 2);
    // Nothing references c any more: its pack and the rewritten one go whole.
    for (const f of keep) fs.rmSync(f);
    const all = store.prune({ graceMs: 0 });
    expect(all.deleted).toBe(21 + 11 + 2);
    expect(packs(dir)).toEqual([]);
  });

  it('rejects a damaged pack with a clear error naming it', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    store.put(wide(changed('a', 0)));
    const { digest } = store.put(wide(changed('b', 12)));
    const [pack] = packs(dir) as [string];
    const file = path.join(dir, 'packed', 'packs', pack);
    const bytes = fs.readFileSync(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 3) ^ 0xff, bytes.length - 3); // inside the last block
    fs.writeFileSync(file, bytes);
    const got = getElsewhere(dir, digest) as { code?: string; message?: string };
    expect(got.code).toBe('ERR_CORRUPT');
    expect(got.message).toContain(file);
  });

  it('refuses a pack directory that a link stands for, writing nothing through it', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    store.put(wide(changed('a', 0)));
    const marks = fs.readdirSync(path.join(dir, 'pending')); // the first put's, naming its root
    const outside = tempDir();
    fs.symlinkSync(outside, path.join(dir, 'packed'));
    expect(() => store.put(wide(changed('b', 12)))).toThrow(CairnError);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readdirSync(path.join(dir, 'pending'))).toEqual(marks); // the failed put took its own mark back
  });
});
