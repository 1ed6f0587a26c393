/**
 * The put of a long-running process, patched from its last put (put-memory.ts): exactly the root
 * and the object bytes a fresh store's plain put of the same entries gives, on random edit
 * sequences; and a memory that never outlives a prune or a store changed by hand.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InventoryStore, type InventoryEntry } from '../../src/session/index.js';
import { ContentStore } from '../../src/content/store.js';
import { compareUtf8 } from '../../src/core/utf8.js';
import { trackedDirs } from './helpers.js';

const { dir: tempDir } = trackedDirs();

/** Every object file of a store, by its name (fan + rest), with its bytes. */
/** Every object a store holds, loose or packed, by name. */
function objectsOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const objects = path.join(dir, 'objects');
  if (fs.existsSync(objects)) for (const fan of fs.readdirSync(objects)) for (const name of fs.readdirSync(path.join(objects, fan))) out.set(fan + name, fs.readFileSync(path.join(objects, fan, name)));
  const packed = new ContentStore(path.join(dir, 'packed'));
  for (const name of packed.names()) out.set(name, packed.get(name));
  return out;
}

// Deep paths, a file and a directory of one name (a, a/b; d/e, d/e/f/g), and names whose UTF-16
// order is not their UTF-8 order (U+FF5A against U+1F600).
const PATHS = ['a', 'a/b', 'a/b/c', 'a/c', 'b', 'B', 'ü', 'ü/x', 'z', '\u{1F600}', '\uFF5A', 'd/\u{1F600}/e', 'd/\uFF5A', 'd/e', 'd/e/f/g', 'd/e/f/h', 'q/r/s/t/u/v'];

const arbFields = fc.record({
  bytes: fc.nat(3),
  sha: fc.option(fc.constantFrom('1', '2', '3'), { nil: undefined }),
  mode: fc.constantFrom('0644', '0755'),
  kind: fc.constantFrom('file', 'symlink'),
});
type Fields = { bytes: number; sha: string | undefined; mode: string; kind: string };
const arbOp = fc.oneof(
  fc.record({ set: fc.constantFrom(...PATHS), fields: arbFields }),
  fc.record({ remove: fc.constantFrom(...PATHS) }),
  fc.record({ chmod: fc.constantFrom(...PATHS) }),
);
/** One put's edits, and how its list comes: in the tree's order, shuffled, or with a path listed twice. */
const arbStep = fc.record({ ops: fc.array(arbOp, { minLength: 0, maxLength: 5 }), order: fc.constantFrom('sorted', 'sorted', 'shuffled', 'duplicate'), seed: fc.nat() });

function newEntry(p: string, f: Fields): InventoryEntry {
  const e: InventoryEntry = { path: p, bytes: f.bytes, mode: f.mode, kind: f.kind };
  if (f.sha !== undefined) e.sha256 = f.sha.repeat(64);
  return e;
}

function listOf(files: Map<string, InventoryEntry>, order: string, seed: number): InventoryEntry[] {
  const list = [...files.values()].sort((x, y) => compareUtf8(x.path, y.path));
  if (order === 'shuffled') {
    let s = seed;
    for (let i = list.length - 1; i > 0; i--) {
      s = (s * 1103515245 + 12345) % 2147483648;
      const j = s % (i + 1);
      [list[i], list[j]] = [list[j] as InventoryEntry, list[i] as InventoryEntry];
    }
  }
  if (order === 'duplicate' && list.length > 0) list.push({ ...(list[seed % list.length] as InventoryEntry) });
  return list;
}

describe('the put of a long-running process', () => {
  // With `frozen`, every entry is frozen and an unchanged one stays the same object from put to
  // put, as a resident scan hands them over (the memory then looks only at the others).
  it('names the same root and writes the same object bytes as a fresh store\'s plain put, on random edit sequences, frozen entries kept from put to put or not (property)', () => {
    fc.assert(
      fc.property(fc.array(arbFields, { minLength: PATHS.length, maxLength: PATHS.length }), fc.array(arbStep, { minLength: 1, maxLength: 10 }), fc.boolean(), (initial, steps, frozen) => {
        const dir = tempDir();
        const store = new InventoryStore(dir);
        const files = new Map<string, InventoryEntry>();
        const entryOf = (p: string, f: Fields): InventoryEntry => (frozen ? Object.freeze(newEntry(p, f)) : newEntry(p, f));
        initial.forEach((f, i) => {
          if (i % 3 !== 2) files.set(PATHS[i] as string, entryOf(PATHS[i] as string, f));
        });
        const plainObjects = new Map<string, Buffer>();
        for (const step of [{ ops: [], order: 'sorted', seed: 0 }, ...steps]) {
          for (const op of step.ops) {
            if ('set' in op) files.set(op.set, entryOf(op.set, op.fields));
            else if ('remove' in op) files.delete(op.remove);
            else {
              const e = files.get(op.chmod);
              if (e !== undefined) files.set(op.chmod, frozen ? Object.freeze({ ...e, mode: e.mode === '0644' ? '0755' : '0644' }) : { ...e, mode: e.mode === '0644' ? '0755' : '0644' });
            }
          }
          const list = listOf(files, step.order, step.seed);
          const fresh = tempDir();
          const plain = new InventoryStore(fresh).put(list);
          const resident = store.put(list);
          expect(resident.digest).toBe(plain.digest);
          // Every object of the plain put is in the resident store, byte for byte.
          const held = objectsOf(dir);
          for (const [name, bytes] of objectsOf(fresh)) {
            plainObjects.set(name, bytes);
            expect(held.get(name)).toEqual(bytes);
          }
        }
        // And nothing else: no object a plain put would not have made (an emptied directory's, say).
        expect([...objectsOf(dir).keys()].sort()).toEqual([...plainObjects.keys()].sort());
      }),
      { numRuns: 100 },
    );
  });

  it('sees an entry replaced in the very array of the last put (frozen entries kept at their offsets)', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const list = PATHS.filter((p) => !PATHS.some((q) => q.startsWith(`${p}/`))).map((p, i) => Object.freeze(newEntry(p, { bytes: i, sha: '1', mode: '0644', kind: 'file' })));
    store.put(list);
    store.put(list);
    list[2] = Object.freeze(newEntry((list[2] as InventoryEntry).path, { bytes: 99, sha: '2', mode: '0755', kind: 'file' }));
    const after = store.put(list);
    expect(after.digest).toBe(new InventoryStore(tempDir()).put(list).digest);
    expect(new InventoryStore(dir).get(after.digest)).toEqual([...list].sort((x, y) => compareUtf8(x.path, y.path)));
  });

  it('writes again what a prune in another process deleted, though the root of its last put survived', () => {
    const dir = tempDir();
    const store = new InventoryStore(dir);
    const tree = (v: string): InventoryEntry[] => [newEntry('a/one', { bytes: 1, sha: '1', mode: '0644', kind: 'file' }), newEntry('c/three', { bytes: 1, sha: v, mode: '0644', kind: 'file' })];
    const first = store.put(tree('1'));
    const second = store.put(tree('2'));
    // Only the second inventory is referenced: a prune deletes the first one's root and c/.
    const work = tempDir();
    for (const [i, digest] of [first.digest, second.digest].entries()) {
      const snapshot = path.join(work, `snapshot-${i}.json`);
      fs.writeFileSync(snapshot, JSON.stringify({ inventory: { digest } }));
      store.addRef(snapshot, digest);
      if (i === 0) fs.rmSync(snapshot);
    }
    const storeUrl = new URL(`file://${path.resolve('dist/session/inventory-store/inventory-store.js')}`).href;
    const pruned = spawnSync(process.execPath, ['--input-type=module', '-e', `const { InventoryStore } = await import(${JSON.stringify(storeUrl)}); process.stdout.write(String(new InventoryStore(${JSON.stringify(dir)}).prune({ graceMs: 0 }).deleted));`], { encoding: 'utf8' });
    expect(pruned.stdout).toBe('2');
    expect(store.has(second.digest)).toBe(true);
    const third = store.put(tree('1'));
    expect(third.digest).toBe(first.digest);
    expect(third.objectsWritten).toBe(2);
    expect(new InventoryStore(dir).get(third.digest)).toEqual(tree('1'));
  });
});
