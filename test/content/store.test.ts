/** The content store: put/get by sha256, dedup, compression across small files, gc by reachability, du. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContentStore, sha256Of } from '../../src/content/index.js';
import { CairnError } from '../../src/core/errors.js';
import { trackedDirs } from '../session/helpers.js';

const { dir: tempDir } = trackedDirs();

function item(text: string | Buffer): { sha256: string; bytes: Buffer } {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  return { sha256: sha256Of(bytes), bytes };
}

describe('ContentStore', () => {
  it('gives back exactly the bytes stored under their sha256, across store objects', () => {
    const dir = tempDir();
    const items = [item('one\n'), item(''), item(Buffer.from([0, 255, 10, 13])), item('x'.repeat(3 << 20))];
    new ContentStore(dir).put(items);
    const reader = new ContentStore(dir);
    for (const i of items) {
      expect(reader.has(i.sha256)).toBe(true);
      expect(reader.get(i.sha256).equals(i.bytes)).toBe(true);
    }
    expect(reader.has(sha256Of(Buffer.from('absent')))).toBe(false);
    expect(() => reader.get(sha256Of(Buffer.from('absent')))).toThrow(CairnError);
  });

  it('names every object its packs hold, once, sorted; a pack put without fsync reads back the same', () => {
    const dir = tempDir();
    const store = new ContentStore(dir);
    const [a, b, c] = [item('a'), item('b'), item('c')];
    store.put([b, a]);
    store.put([c, a], { durable: false });
    expect(new ContentStore(dir).names()).toEqual([a, b, c].map((i) => i.sha256).sort());
    expect(new ContentStore(dir).get(c.sha256).equals(c.bytes)).toBe(true);
    expect(new ContentStore(tempDir()).names()).toEqual([]);
  });

  it('stores an object once however often it is put, and writes no pack when nothing is new', () => {
    const store = new ContentStore(tempDir());
    const a = item('same bytes');
    expect(store.put([a, a]).objectsWritten).toBe(1);
    const again = store.put([a]);
    expect(again).toMatchObject({ objectsWritten: 0, pack: null });
    expect(store.du()).toMatchObject({ packs: 1, objects: 1, rawBytes: a.bytes.length });
  });

  it('compresses many small similar files together, below the sum of their sizes', () => {
    const store = new ContentStore(tempDir());
    const body = (i: number): string => `export function handler${i}(req, res) {\n  const id = req.params.id ?? ${i};\n  if (!id) return res.status(400).json({ error: 'missing id' });\n  return res.json({ id, ok: true, handler: ${i} });\n}\n`.repeat(3);
    const files = Array.from({ length: 300 }, (_, i) => item(body(i)));
    const r = store.put(files);
    const raw = files.reduce((s, f) => s + f.bytes.length, 0);
    expect(r.rawBytes).toBe(raw);
    expect(r.packBytes).toBeLessThan(raw / 2);
  });

  it('detects a damaged pack instead of returning wrong bytes', () => {
    const dir = tempDir();
    const store = new ContentStore(dir);
    const a = item('precious content that must not be silently altered '.repeat(20));
    const { pack } = store.put([a]);
    const file = path.join(dir, 'packs', pack as string);
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 5] = (bytes[bytes.length - 5] as number) ^ 0xff;
    fs.writeFileSync(file, bytes);
    const err = (() => {
      try {
        new ContentStore(dir).get(a.sha256);
      } catch (e) {
        return e as CairnError;
      }
      return null;
    })();
    expect(err?.code).toBe('ERR_CORRUPT');
  });

  it('gc deletes packs with nothing live, rewrites partly live ones, keeps young ones', () => {
    const dir = tempDir();
    const store = new ContentStore(dir);
    const [a, b, c] = [item('a'.repeat(100)), item('b'.repeat(100)), item('c'.repeat(100))];
    const p1 = store.put([a, b]).pack as string;
    const p2 = store.put([c]).pack as string;
    const old = new Date(Date.now() - 3600_000);
    for (const p of [p1, p2]) fs.utimesSync(path.join(dir, 'packs', p), old, old);
    const dry = store.gc(new Set([a.sha256]), { dryRun: true });
    expect(dry).toMatchObject({ packsDeleted: 1, packsRewritten: 1, objectsDeleted: 2, objectsKept: 1 });
    expect(new ContentStore(dir).du().objects).toBe(3);
    store.gc(new Set([a.sha256]));
    const after = new ContentStore(dir);
    expect(after.du()).toMatchObject({ packs: 1, objects: 1 });
    expect(after.get(a.sha256).equals(a.bytes)).toBe(true);
    expect(after.has(b.sha256)).toBe(false);
    // A young pack is never collected, live or not.
    store.put([item('young')]);
    expect(store.gc(new Set(), {}).objectsKept).toBeGreaterThanOrEqual(1);
    expect(new ContentStore(dir).has(sha256Of(Buffer.from('young')))).toBe(true);
  });

  it('gc with a grace of 0 deletes a dead pack whose time is later than its clock (file times are finer than Date.now())', () => {
    const dir = tempDir();
    const store = new ContentStore(dir);
    const pack = store.put([item('dead'.repeat(30))]).pack as string;
    const soon = (Date.now() + 50) / 1000;
    fs.utimesSync(path.join(dir, 'packs', pack), soon, soon);
    expect(store.gc(new Set(), { graceMs: 0 })).toMatchObject({ packsDeleted: 1, objectsDeleted: 1 });
    expect(new ContentStore(dir).du().objects).toBe(0);
  });

  it('a store set to compress fast writes packs any store reads back exactly, still smaller than their raw bytes', () => {
    const dir = tempDir();
    const items = Array.from({ length: 200 }, (_v, i) => item(`{"entries":[{"path":"src/file-${i}.ts","sha256":"${'ab'.repeat(32)}","bytes":${i * 37}}]}\n`));
    const put = new ContentStore(dir, { compression: 'fast' }).put(items);
    expect(put.objectsWritten).toBe(200);
    expect(put.packBytes).toBeLessThan(put.rawBytes / 2);
    const reader = new ContentStore(dir);
    for (const i of items) expect(reader.get(i.sha256).equals(i.bytes)).toBe(true);
  });

  it('claim makes an old pack young again for a prune, once a second however many of its objects are claimed', () => {
    const dir = tempDir();
    const items = ['x', 'y', 'z'].map((t) => item(t.repeat(50)));
    const pack = new ContentStore(dir).put(items).pack as string;
    const file = path.join(dir, 'packs', pack);
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(file, old, old);
    const store = new ContentStore(dir);
    expect(items.every((i) => store.claim(i.sha256))).toBe(true);
    const refreshed = fs.statSync(file).mtimeMs;
    expect(refreshed).toBeGreaterThan(Date.now() - 60_000);
    // Claimed again within the second: relied on, not touched again.
    fs.utimesSync(file, old, old);
    expect(store.claim(items[1]!.sha256)).toBe(true);
    expect(Math.abs(fs.statSync(file).mtimeMs - old.getTime())).toBeLessThan(1);
    // Another store object (another capture) refreshes it again, and a prune with a grace period keeps it.
    expect(new ContentStore(dir).claim(items[2]!.sha256)).toBe(true);
    expect(new ContentStore(dir).gc(new Set(), { graceMs: 60_000 }).objectsDeleted).toBe(0);
    expect(store.claim(sha256Of(Buffer.from('absent')))).toBe(false);
  });

  it('sees, in one process, the packs written since it last looked and forgets the ones gone or replaced', () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    const [a, b, c] = [item('a'.repeat(80)), item('b'.repeat(80)), item('c'.repeat(80))];
    const pa = new ContentStore(dir).put([a]).pack as string;
    expect(new ContentStore(dir).has(a.sha256)).toBe(true); // its header now remembered
    // A pack another process wrote (made elsewhere, renamed in as a writer does) is read.
    const pb = new ContentStore(elsewhere).put([b]).pack as string;
    fs.renameSync(path.join(elsewhere, 'packs', pb), path.join(dir, 'packs', pb));
    const second = new ContentStore(dir);
    expect([second.has(a.sha256), second.has(b.sha256)]).toEqual([true, true]);
    expect(second.get(b.sha256).equals(b.bytes)).toBe(true);
    // A pack removed (a prune elsewhere) is forgotten.
    fs.unlinkSync(path.join(dir, 'packs', pb));
    expect(new ContentStore(dir).has(b.sha256)).toBe(false);
    // Another file under a remembered name (a new inode, another size) is read again, not trusted.
    const pc = new ContentStore(elsewhere).put([c]).pack as string;
    fs.renameSync(path.join(elsewhere, 'packs', pc), path.join(dir, 'packs', pa));
    const third = new ContentStore(dir);
    expect([third.has(a.sha256), third.has(c.sha256)]).toEqual([false, true]);
    expect(third.get(c.sha256).equals(c.bytes)).toBe(true);
  });

  it('gives exact bytes when reads alternate between many packs, and for an object larger than the block cache keeps', () => {
    const dir = tempDir();
    const packs = Array.from({ length: 20 }, (_, p) => Array.from({ length: 30 }, (_, i) => item(`pack ${p} file ${i} `.repeat(40 + i))));
    for (const items of packs) new ContentStore(dir).put(items);
    const big = item(Buffer.alloc(20 << 20, 7)); // above a quarter of the block cache: read, not kept
    new ContentStore(dir).put([big]);
    const reader = new ContentStore(dir);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 30; i++) {
        for (let p = 0; p < 20; p++) {
          const want = packs[(p * 7 + round) % 20]![i]!;
          expect(reader.get(want.sha256).equals(want.bytes)).toBe(true);
        }
      }
      expect(reader.get(big.sha256).equals(big.bytes)).toBe(true);
    }
  });
});
