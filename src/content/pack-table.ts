/**
 * The pack table: a cache, in `<content>/pack-table`, of what the pack headers say, so a fresh
 * process finds stored objects without opening every pack of the project's history.
 *
 *   "CAIRNPT1" | u32 pack count | per pack: u16 name length, name (UTF-8), f64 inode, f64 size
 *   | u32 object count | per object, sorted by sha256: 32 bytes sha256, u32 pack, u32 block,
 *   u32 offset in the raw block, u32 length | 32 bytes: sha256 of everything before
 *
 * It is never authoritative. A reader takes a pack's objects from it only while `packs/` lists
 * that pack under the same name as the same file (inode and size; packs are never modified), so a
 * deleted or rewritten pack (gc, prune) is never used; the other packs' headers are read. A table
 * that is damaged, foreign, oversized or a link is ignored (and replaced by the next writer);
 * reads still check every object's bytes against its sha256. Writers replace it whole (temp file,
 * rename): concurrent writers each leave a whole table, and the last one wins. A writer killed
 * mid-write leaves its temp file (`.pack-table.cairn-tmp-<pid>-…`): the next writer removes it
 * once that pid is not alive and the file is a minute old (STALE_TEMP_AGE_MS).
 *
 * Lookups bisect the sorted object table in the file's own bytes: a capture asks for a few
 * digests, so the table is neither decoded nor turned into a map.
 */
import { createHash } from 'node:crypto';

const MAGIC = Buffer.from('CAIRNPT1');
const OBJECT_BYTES = 48;
const DIGEST_BYTES = 32;
/** A table larger than this is not one cairn wrote (48 bytes an object: ~22 million objects). */
export const PACK_TABLE_MAX_BYTES = 1 << 30;
export const PACK_TABLE_FILE = 'pack-table';

/** One object's place: [sha256, block, offset in the raw block, length] (a pack header's form). */
export type PackObject = [string, number, number, number];

export interface TablePack {
  name: string;
  ino: number;
  size: number;
}

export interface PackLocation {
  pack: string;
  block: number;
  off: number;
  len: number;
}

export class PackTable {
  private constructor(
    readonly packs: readonly TablePack[],
    private readonly objects: Buffer,
    readonly objectCount: number,
  ) {}

  /** The table in `bytes`, or null when they are not a whole table cairn wrote (`digestChecked`: bytes just encoded). */
  static decode(bytes: Buffer, options: { digestChecked?: boolean } = {}): PackTable | null {
    try {
      if (bytes.length < MAGIC.length + 8 + DIGEST_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return null;
      const body = bytes.subarray(0, bytes.length - DIGEST_BYTES);
      if (options.digestChecked !== true && !createHash('sha256').update(body).digest().equals(bytes.subarray(body.length))) return null;
      let at = MAGIC.length;
      const packCount = body.readUInt32BE(at);
      at += 4;
      const packs: TablePack[] = [];
      for (let i = 0; i < packCount; i++) {
        const nameLength = body.readUInt16BE(at);
        const name = body.toString('utf8', at + 2, at + 2 + nameLength);
        at += 2 + nameLength;
        packs.push({ name, ino: body.readDoubleBE(at), size: body.readDoubleBE(at + 8) });
        at += 16;
      }
      const objectCount = body.readUInt32BE(at);
      at += 4;
      if (body.length - at !== objectCount * OBJECT_BYTES) return null;
      const objects = body.subarray(at);
      return new PackTable(packs, objects, objectCount);
    } catch {
      return null;
    }
  }

  /**
   * Where `sha256` is among the packs `usable` marks (by table position); undefined when in none.
   * The same object can sit in two packs (two processes stored it at once): any usable one serves.
   */
  find(sha256: string, usable: Uint8Array): PackLocation | undefined {
    const key = Buffer.from(sha256, 'hex');
    if (key.length !== DIGEST_BYTES) return undefined;
    // The bisection compares the first 4 bytes as a number, and the whole digest only when they
    // are equal: a Buffer#compare with offsets costs ~0.5 µs a call, and a post looks up ~4
    // digests per changed path in a table of the project's whole history.
    const head = key.readUInt32BE(0);
    const objects = this.objects;
    const cmp = (at: number): number => {
      const h = objects.readUInt32BE(at);
      return h !== head ? (h < head ? -1 : 1) : objects.compare(key, 0, DIGEST_BYTES, at, at + DIGEST_BYTES);
    };
    let lo = 0;
    let hi = this.objectCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(mid * OBJECT_BYTES) < 0) lo = mid + 1;
      else hi = mid;
    }
    // lo: the first entry not before `key`; equal ones follow it.
    for (let i = lo; i < this.objectCount; i++) {
      const at = i * OBJECT_BYTES;
      if (cmp(at) !== 0) break;
      const pack = this.objects.readUInt32BE(at + DIGEST_BYTES);
      if (usable[pack] === 1) return { pack: this.packs[pack]!.name, block: this.objects.readUInt32BE(at + 36), off: this.objects.readUInt32BE(at + 40), len: this.objects.readUInt32BE(at + 44) };
    }
    return undefined;
  }

  /** The object entries: sorted by sha256, 48 bytes each (see the file's comment). */
  get entries(): Buffer {
    return this.objects;
  }
}

/**
 * The bytes of a table listing `packs`: those `kept` from `previous` (by its positions) keep their
 * entries as they are; the others bring their objects (`objects`, a pack header's list).
 */
export function encodePackTable(
  previous: PackTable | null,
  kept: Uint8Array,
  fresh: ReadonlyArray<TablePack & { objects: readonly PackObject[] }>,
): Buffer {
  const packs: TablePack[] = [];
  const renumber = new Int32Array(previous?.packs.length ?? 0).fill(-1);
  previous?.packs.forEach((p, i) => {
    if (kept[i] !== 1) return;
    renumber[i] = packs.length;
    packs.push(p);
  });
  const old = previous?.entries ?? Buffer.alloc(0);
  let oldKept = 0;
  for (let at = 0; at < old.length; at += OBJECT_BYTES) if (kept[old.readUInt32BE(at + DIGEST_BYTES)] === 1) oldKept++;
  // The new packs' objects, sorted (lower-case hex sorts as the bytes do), as entries.
  const added: Array<[string, number, number, number, number]> = [];
  for (const pack of fresh) {
    const position = packs.length;
    packs.push(pack);
    for (const [sha, block, off, len] of pack.objects) added.push([sha, position, block, off, len]);
  }
  added.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const addedEntries = Buffer.alloc(added.length * OBJECT_BYTES);
  added.forEach(([sha, position, block, off, len], k) => {
    const at = k * OBJECT_BYTES;
    addedEntries.write(sha, at, 'hex');
    addedEntries.writeUInt32BE(position, at + DIGEST_BYTES);
    addedEntries.writeUInt32BE(block, at + 36);
    addedEntries.writeUInt32BE(off, at + 40);
    addedEntries.writeUInt32BE(len, at + 44);
  });
  const names = packs.map((p) => Buffer.from(p.name, 'utf8'));
  const headLength = MAGIC.length + 4 + names.reduce((s, n) => s + 2 + n.length + 16, 0) + 4;
  const objectCount = oldKept + added.length;
  const out = Buffer.alloc(headLength + objectCount * OBJECT_BYTES + DIGEST_BYTES);
  MAGIC.copy(out);
  let at = out.writeUInt32BE(packs.length, MAGIC.length);
  packs.forEach((p, i) => {
    at = out.writeUInt16BE(names[i]!.length, at);
    at += names[i]!.copy(out, at);
    at = out.writeDoubleBE(p.ino, at);
    at = out.writeDoubleBE(p.size, at);
  });
  at = out.writeUInt32BE(objectCount, at);
  // Merge the kept old entries (renumbered) with the added ones, both sorted.
  let i = 0;
  let j = 0;
  while (i < old.length || j < addedEntries.length) {
    if (i < old.length && kept[old.readUInt32BE(i + DIGEST_BYTES)] !== 1) {
      i += OBJECT_BYTES;
      continue;
    }
    const takeOld = i < old.length && (j >= addedEntries.length || old.compare(addedEntries, j, j + DIGEST_BYTES, i, i + DIGEST_BYTES) <= 0);
    if (takeOld) {
      old.copy(out, at, i, i + OBJECT_BYTES);
      out.writeUInt32BE(renumber[old.readUInt32BE(i + DIGEST_BYTES)]!, at + DIGEST_BYTES);
      i += OBJECT_BYTES;
    } else {
      addedEntries.copy(out, at, j, j + OBJECT_BYTES);
      j += OBJECT_BYTES;
    }
    at += OBJECT_BYTES;
  }
  createHash('sha256').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}
