/**
 * The content store: file bytes kept by the SHA-256 the inventory already computed, in pack files.
 *
 * A capture (one `session pre` or `post`, one restore's safety copy) writes at most ONE pack:
 *
 *   "CAIRNPK1" | u32 BE index length | index JSON | block 0 | block 1 | …
 *
 * The index (binary, 36 bytes per object) lists the blocks (stored and raw length, codec, object
 * count) and the objects (sha256, length) in block order. Blocks hold up to ~1 MiB of raw bytes and are
 * compressed as one brotli stream each, so the many small files of one change compress together
 * (a 450-byte source file alone compresses poorly) and a file system's block size is paid once per
 * pack, not once per file; a large file gets blocks of its own. Reading an object decompresses its
 * block and checks the bytes against the name; a store object keeps up to BLOCK_CACHE_BYTES of
 * decompressed blocks, least recently used dropped first (a review reads the pre and post bytes
 * of each path in turn, from blocks of several packs).
 *
 * Packs are written whole (temp file, fsync, rename) and never modified; `gc` deletes packs whose
 * objects are all unreachable and rewrites partly live ones with only the live objects (compressed
 * blocks are re-packed from their raw bytes), and removes the temp file of a pack write a kill left
 * (its writer dead, a minute old). A pack younger than the grace period is never touched,
 * and a capture that finds an object already stored refreshes its pack's mtime (once a second per
 * pack and store object), so a concurrent capture is never robbed of the objects it is counting on.
 *
 * Finding objects: `packs/` is listed (one lstat per pack) and decides which packs exist. A process
 * remembers the headers it read (READ_PACKS); a process that knows nothing yet takes each pack that
 * `content/pack-table` (pack-table.ts) lists as the same file (name, inode, size) from that table
 * and reads only the other headers, and rewrites the table once it had to read many. The table is a
 * cache: damaged, foreign or missing, the headers are read instead, and every read checks bytes.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { removeStaleTempsIn, STALE_TEMP_AGE_MS } from '../core/atomic-write.js';
import { ContainedDir, rootedAt, withContainedDir } from '../core/contained-dir.js';
import { CairnError } from '../core/errors.js';
import { PACK_TABLE_FILE, PACK_TABLE_MAX_BYTES, PackTable, encodePackTable, type PackObject, type TablePack } from './pack-table.js';

const MAGIC = Buffer.from('CAIRNPK1');
const HEADER_FIXED = MAGIC.length + 4;
/** Raw bytes per compressed block: small files of one capture share a block. */
const BLOCK_RAW_BYTES = 1 << 20;
/**
 * Brotli's quality for a pack: 5 by default (files' bytes: 30 % smaller than at 1 on source-like
 * text), 1 for `compression: 'fast'` (the inventory's directory objects, written on every capture:
 * as small at 1 as at 5, and ~8× faster: 2.4 MB of them in 16 ms against 135 ms here).
 */
const BROTLI_QUALITY = { small: 5, fast: 1 } as const;
const HEX64 = /^[0-9a-f]{64}$/;
/** Raw bytes of decompressed blocks a store object keeps (a block of a quarter of that or more is not kept). */
const BLOCK_CACHE_BYTES = 64 << 20;
/** A pack claimed less than this long ago is not refreshed again (see claim). */
const CLAIM_REFRESH_MS = 1000;
/** Packs read from their headers (or left in the pack table though gone) before the table is rewritten. */
const PACK_TABLE_REWRITE_AFTER = 16;

type Codec = 'br' | 'raw';

interface PackBlock {
  /** Offset of the compressed block from the start of the data area. */
  off: number;
  len: number;
  raw: number;
  codec: Codec;
}

interface PackIndex {
  blocks: PackBlock[];
  /** [sha256, block, offset in the raw block, length] */
  objects: PackObject[];
}

interface Location {
  pack: string;
  block: number;
  off: number;
  len: number;
}

/** Where the stored objects are: the pack table's (for the packs it may answer for), then those read from headers. */
class Locations {
  readonly added = new Map<string, Location>();

  /** `usable[i]`: the table's pack i is listed in `packs/` as the same file. */
  constructor(
    private readonly table: PackTable | null = null,
    private readonly usable: Uint8Array = new Uint8Array(0),
  ) {}

  get(sha256: string): Location | undefined {
    return this.added.get(sha256) ?? this.table?.find(sha256, this.usable);
  }

  has(sha256: string): boolean {
    return this.get(sha256) !== undefined;
  }

  addPack(pack: string, objects: readonly PackObject[]): void {
    for (const [sha, block, off, len] of objects) if (!this.added.has(sha)) this.added.set(sha, { pack, block, off, len });
  }
}

export interface ContentItem {
  sha256: string;
  bytes: Uint8Array;
}

export interface PutResult {
  /** Objects written by this call (the rest were already stored). */
  objectsWritten: number;
  /** Raw bytes of those objects. */
  rawBytes: number;
  /** Size of the pack file written (0 when nothing was new). */
  packBytes: number;
  /** The pack written, or null. */
  pack: string | null;
}

export interface ContentUsage {
  packs: number;
  objects: number;
  /** Sum of the objects' raw sizes. */
  rawBytes: number;
  /** Sum of the pack files' sizes. */
  storedBytes: number;
  /** What the packs occupy on disk (allocated blocks). */
  diskBytes: number;
}

export interface ContentGcResult {
  packsDeleted: number;
  packsRewritten: number;
  objectsKept: number;
  objectsDeleted: number;
  bytesFreed: number;
  dryRun: boolean;
}

export function isSha256Hex(value: string): boolean {
  return HEX64.test(value);
}

export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export class ContentStore {
  readonly dir: string;
  private locations: Locations | null = null;
  /** Decompressed blocks, least recently used first, at most BLOCK_CACHE_BYTES of them. */
  private readonly blockCache = new Map<string, Buffer>();
  private blockCacheBytes = 0;
  /** Packs whose mtime this object refreshed (claim), and when. */
  private readonly claimed = new Map<string, number>();

  private readonly within: string | undefined;
  private readonly quality: number;

  /**
   * `within` (the project root): every pack is reached from it through opened directories, no
   * link followed in any component (ContainedDir), so a directory swapped for a link mid-capture
   * cannot send a pack, a read or a deletion outside. `compression: 'fast'` trades size for
   * speed in every pack it writes (BROTLI_QUALITY).
   */
  constructor(dir: string, options: { within?: string; compression?: keyof typeof BROTLI_QUALITY } = {}) {
    this.dir = path.resolve(dir);
    this.within = options.within === undefined ? undefined : path.resolve(options.within);
    this.quality = BROTLI_QUALITY[options.compression ?? 'small'];
  }

  private packsDir(): string {
    return path.join(this.dir, 'packs');
  }

  /** Runs `fn` with `<dir>/packs` opened (null when missing and not `create`). */
  private withPacks<T>(create: boolean, fn: (dir: ContainedDir | null) => T): T {
    const { root, parts } = rootedAt(this.packsDir(), this.within);
    const dir = ContainedDir.open(root, parts, { create });
    try {
      return fn(dir);
    } finally {
      dir?.close();
    }
  }

  /** Names of the regular `.pack` files (links and the rest are passed over). */
  private static packNames(dir: ContainedDir | null): string[] {
    return dir === null ? [] : dir.entries().filter((e) => e.isFile() && e.name.endsWith('.pack')).map((e) => e.name);
  }

  /**
   * Every stored object's location, from the pack headers (listed once per store object). A pack
   * is never changed once written, so what this process read of a pack before is taken from
   * memory while its name still holds the same file (inode and size); while no pack it knew is
   * gone or replaced, the locations it built are kept and only the packs written since are
   * added: a capture reads the packs of the last few captures, not the whole history. A process
   * that knows nothing yet (or saw a pack go) takes the packs the pack table lists as the same
   * files from the table (pack-table.ts) and reads only the other headers.
   */
  private index(): Locations {
    if (this.locations !== null) return this.locations;
    const packsDir = this.packsDir();
    const known = READ_PACKS.get(packsDir);
    const listed = new Map<string, fs.Stats>();
    this.withPacks(false, (dir) => {
      for (const name of ContentStore.packNames(dir)) {
        const st = dir!.lstat(name);
        if (st !== null && st.isFile()) listed.set(name, st);
      }
    });
    const same = (h: { ino: number; size: number }, st: fs.Stats | undefined): boolean => st !== undefined && h.ino === st.ino && h.size === st.size;
    // Every pack known before is still there, the same file: its locations hold; add the new ones.
    if (known !== undefined && [...known.headers].every(([name, h]) => same(h, listed.get(name)))) {
      const unread = [...listed.keys()].filter((name) => !known.headers.has(name));
      if (unread.length > 0) {
        this.withPacks(false, (dir) => {
          for (const name of unread) {
            const header = dir === null ? null : readPackHeader(dir.at(name));
            if (header === null) continue;
            const st = listed.get(name)!;
            known.headers.set(name, { ino: st.ino, size: st.size, objects: header.index.objects });
            known.locations.addPack(name, header.index.objects);
          }
        });
      }
      this.locations = known.locations;
      return known.locations;
    }
    const table = this.readPackTable();
    const usable = new Uint8Array(table?.packs.length ?? 0);
    const inTable = new Map(table?.packs.map((p, i) => [p.name, i]));
    const headers = new Map<string, KnownHeader>();
    const learned: Array<TablePack & { objects: PackObject[] }> = [];
    this.withPacks(false, (dir) => {
      for (const [name, st] of listed) {
        const at = inTable.get(name);
        if (at !== undefined && same(table!.packs[at]!, st)) {
          usable[at] = 1;
          headers.set(name, { ino: st.ino, size: st.size, objects: null });
          continue;
        }
        const seen = known?.headers.get(name);
        let objects = seen !== undefined && seen.objects !== null && same(seen, st) ? seen.objects : null;
        if (objects === null) {
          const header = dir === null ? null : readPackHeader(dir.at(name));
          if (header === null) continue;
          objects = header.index.objects;
        }
        headers.set(name, { ino: st.ino, size: st.size, objects });
        learned.push({ name, ino: st.ino, size: st.size, objects });
      }
    });
    const gone = usable.length - usable.reduce((n, u) => n + u, 0);
    let locations: Locations;
    if (learned.length + gone >= PACK_TABLE_REWRITE_AFTER) {
      // The new table lists every listed pack: look objects up in it rather than in a map of them all.
      const written = encodePackTable(table, usable, learned);
      this.writePackTable(written);
      const whole = PackTable.decode(written, { digestChecked: true })!;
      locations = new Locations(whole, new Uint8Array(whole.packs.length).fill(1));
    } else {
      locations = new Locations(table, usable);
      for (const { name, objects } of learned) locations.addPack(name, objects);
    }
    rememberPacks(packsDir, { headers, locations });
    this.locations = locations;
    return locations;
  }

  /** The pack table, or null when there is none or it is not a whole one cairn wrote. */
  private readPackTable(): PackTable | null {
    try {
      const { root, parts } = rootedAt(this.dir, this.within);
      return withContainedDir(root, parts, {}, (dir) => {
        const bytes = dir?.readFile(PACK_TABLE_FILE, { maxBytes: PACK_TABLE_MAX_BYTES }) ?? null;
        return bytes === null ? null : PackTable.decode(bytes);
      });
    } catch {
      return null; // a link, a directory, an oversized file: not ours, replaced by the next write
    }
  }

  /**
   * Replaces the pack table whole; a cache, so not fsynced (a torn one fails its digest) and never
   * fatal. A rewrite killed mid-write left its temp file beside the table, which nothing else
   * would ever remove: each rewrite removes those of dead writers once STALE_TEMP_AGE_MS old.
   */
  private writePackTable(bytes: Buffer): void {
    try {
      const { root, parts } = rootedAt(this.dir, this.within);
      withContainedDir(root, parts, {}, (dir) => {
        if (dir === null) return;
        dir.writeFile(PACK_TABLE_FILE, bytes, { mode: 0o600, fsync: false });
        removeStaleTempsIn(dir, [PACK_TABLE_FILE], { minAgeMs: STALE_TEMP_AGE_MS });
      });
    } catch {
      // read-only store, a directory in the way: the next process reads the headers again
    }
  }

  has(sha256: string): boolean {
    return this.index().has(sha256);
  }

  /**
   * Like `has`, and refreshes the holding pack's mtime: the caller is about to rely on it, so a
   * prune running now must treat it as young.
   */
  claim(sha256: string): boolean {
    const loc = this.index().get(sha256);
    if (loc === undefined) return false;
    // Once a second per pack: a capture's claims fall within moments of each other, so one
    // refresh protects every object it finds in that pack (a dirty tree claims thousands), while
    // a long-lived store object still refreshes a pack it relies on again later.
    const now = new Date();
    if (now.getTime() - (this.claimed.get(loc.pack) ?? -Infinity) < CLAIM_REFRESH_MS) return true;
    try {
      this.withPacks(false, (dir) => fs.lutimesSync(dir!.at(loc.pack), now, now));
    } catch {
      this.locations = null;
      return this.index().has(sha256);
    }
    this.claimed.set(loc.pack, now.getTime());
    return true;
  }

  /** The bytes of `sha256`, checked against it; ERR_NOT_FOUND when absent, ERR_CORRUPT when damaged. */
  get(sha256: string): Buffer {
    const loc = this.index().get(sha256);
    if (loc === undefined) throw new CairnError('ERR_NOT_FOUND', `content ${sha256} is not in the content store ${this.dir}`, { path: this.dir });
    const raw = this.block(loc.pack, loc.block);
    const bytes = raw.subarray(loc.off, loc.off + loc.len);
    if (sha256Of(bytes) !== sha256) {
      throw new CairnError('ERR_CORRUPT', `content ${sha256} in pack ${loc.pack} does not match its digest; the pack is damaged (run \`cairn session prune\` after removing it)`, { path: path.join(this.packsDir(), loc.pack) });
    }
    return Buffer.from(bytes);
  }

  private block(pack: string, block: number): Buffer {
    const key = `${pack}#${block}`;
    const cached = this.blockCache.get(key);
    if (cached !== undefined) {
      // Most recently used last: a diff reads the pre and post bytes of each path in turn, from
      // blocks of several packs (each object is read from the first pack that has it).
      this.blockCache.delete(key);
      this.blockCache.set(key, cached);
      return cached;
    }
    const file = path.join(this.packsDir(), pack);
    const packed = this.withPacks(false, (dir) => {
      const header = dir === null ? null : readPackHeader(dir.at(pack));
      const info = header?.index.blocks[block];
      if (header === null || info === undefined) throw new CairnError('ERR_CORRUPT', `content pack ${file} is unreadable or damaged`, { path: file });
      const fd = fs.openSync(dir!.at(pack), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
      try {
        const bytes = Buffer.alloc(info.len);
        readFully(fd, bytes, header.dataStart + info.off);
        return { bytes, codec: info.codec };
      } finally {
        fs.closeSync(fd);
      }
    });
    let raw: Buffer;
    try {
      raw = packed.codec === 'br' ? zlib.brotliDecompressSync(packed.bytes) : packed.bytes;
    } catch (e) {
      throw new CairnError('ERR_CORRUPT', `content pack ${file} block ${block} does not decompress`, { path: file, cause: e });
    }
    if (raw.length <= BLOCK_CACHE_BYTES / 4) {
      this.blockCacheBytes += raw.length;
      this.blockCache.set(key, raw);
      for (const [k, b] of this.blockCache) {
        if (this.blockCacheBytes <= BLOCK_CACHE_BYTES) break;
        this.blockCache.delete(k);
        this.blockCacheBytes -= b.length;
      }
    }
    return raw;
  }

  /**
   * Stores the items not stored yet as one new pack (duplicates within `items` are stored once).
   * `durable: false` skips the fsyncs, for a caller whose objects a digest check guards and that
   * can make them again (the inventory store's directory objects).
   */
  put(items: readonly ContentItem[], options: { durable?: boolean } = {}): PutResult {
    const index = this.index();
    const fresh: ContentItem[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      if (!isSha256Hex(item.sha256)) throw new CairnError('ERR_VALIDATION', `"${item.sha256}" is not a sha256 hex digest`);
      if (seen.has(item.sha256) || index.has(item.sha256)) continue;
      seen.add(item.sha256);
      fresh.push(item);
    }
    if (fresh.length === 0) return { objectsWritten: 0, rawBytes: 0, packBytes: 0, pack: null };
    const { buffer, index: packIndex } = buildPack(fresh, this.quality);
    const name = `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}.pack`;
    this.withPacks(true, (dir) => {
      dir!.writeFile(name, buffer, { mode: 0o600, fsync: options.durable !== false });
      // This process knows the new pack's header: the next capture need not read it back.
      const st = dir!.lstat(name);
      const known = READ_PACKS.get(this.packsDir());
      if (st !== null && known?.locations === index) known.headers.set(name, { ino: st.ino, size: st.size, objects: packIndex.objects });
    });
    index.addPack(name, packIndex.objects);
    return { objectsWritten: fresh.length, rawBytes: fresh.reduce((s, i) => s + i.bytes.length, 0), packBytes: buffer.length, pack: name };
  }

  /** The sha256 of every object the packs hold (each pack's header read), sorted. */
  names(): string[] {
    const out = new Set<string>();
    this.withPacks(false, (dir) => {
      for (const name of ContentStore.packNames(dir)) for (const [sha] of readPackHeader(dir!.at(name))?.index.objects ?? []) out.add(sha);
    });
    return [...out].sort();
  }

  /** Packs, objects and sizes (raw, as stored, on disk). */
  du(): ContentUsage {
    const usage: ContentUsage = { packs: 0, objects: 0, rawBytes: 0, storedBytes: 0, diskBytes: 0 };
    this.withPacks(false, (dir) => {
      for (const name of ContentStore.packNames(dir)) {
        const header = readPackHeader(dir!.at(name));
        const st = dir!.lstat(name);
        if (header === null || st === null) continue;
        usage.storedBytes += st.size;
        usage.diskBytes += st.blocks * 512;
        usage.packs++;
        usage.objects += header.index.objects.length;
        for (const [, , , len] of header.index.objects) usage.rawBytes += len;
      }
    });
    return usage;
  }

  /**
   * Collects by reachability: `live` is every sha256 something still needs. Packs older than
   * `graceMs` with no live object are deleted; with some, rewritten with only those.
   */
  gc(live: ReadonlySet<string>, options: { graceMs?: number; dryRun?: boolean } = {}): ContentGcResult {
    const graceMs = options.graceMs ?? 15 * 60 * 1000;
    const dryRun = options.dryRun ?? false;
    const result: ContentGcResult = { packsDeleted: 0, packsRewritten: 0, objectsKept: 0, objectsDeleted: 0, bytesFreed: 0, dryRun };
    const cutoff = Date.now() - graceMs;
    const keptElsewhere = new Set<string>();
    const packs = this.withPacks(false, (dir) => dir?.reopen() ?? null);
    if (packs === null) return result;
    try {
      // A pack write killed mid-way leaves `.<name>.pack.cairn-tmp-…`, a name no pack listing sees.
      if (!dryRun) removeStaleTempsIn(packs, (base) => base.endsWith('.pack'), { minAgeMs: STALE_TEMP_AGE_MS });
      for (const name of ContentStore.packNames(packs).sort()) {
        const header = readPackHeader(packs.at(name));
        const stat = packs.lstat(name);
        if (stat === null || !stat.isFile()) continue;
        if (header === null) continue; // not ours or torn: left for a person to look at
        const objects = header.index.objects;
        // (a grace of 0 keeps nothing by age: a file's time is finer than Date.now(), so one written this millisecond would look younger than "now")
        if (graceMs > 0 && stat.mtimeMs > cutoff) {
          result.objectsKept += objects.length;
          for (const [sha] of objects) keptElsewhere.add(sha);
          continue;
        }
        const wanted = objects.filter(([sha]) => live.has(sha) && !keptElsewhere.has(sha));
        if (wanted.length === objects.length) {
          result.objectsKept += objects.length;
          for (const [sha] of objects) keptElsewhere.add(sha);
          continue;
        }
        result.objectsDeleted += objects.length - wanted.length;
        result.objectsKept += wanted.length;
        if (wanted.length === 0) {
          result.packsDeleted++;
          result.bytesFreed += stat.size;
          if (!dryRun) packs.unlink(name);
          continue;
        }
        result.packsRewritten++;
        const items = wanted.map(([sha]) => ({ sha256: sha, bytes: this.get(sha) }));
        const { buffer } = buildPack(items, this.quality);
        result.bytesFreed += Math.max(0, stat.size - buffer.length);
        for (const [sha] of wanted) keptElsewhere.add(sha);
        if (dryRun) continue;
        const rewritten = `${name.slice(0, -'.pack'.length)}-r${randomBytes(3).toString('hex')}.pack`;
        packs.writeFile(rewritten, buffer, { mode: 0o600 });
        // The rewrite keeps the old pack's age, so it is judged by the same grace period next time.
        fs.lutimesSync(packs.at(rewritten), stat.atime, stat.mtime);
        packs.unlink(name);
      }
    } finally {
      packs.close();
    }
    this.locations = null;
    this.blockCache.clear();
    this.blockCacheBytes = 0;
    this.claimed.clear();
    return result;
  }
}

/** A pack header this process read: the file it was read from (inode, size) and its object list (null: in the pack table). */
interface KnownHeader {
  ino: number;
  size: number;
  objects: PackObject[] | null;
}

/** What this process read of a packs directory: each pack's header, and the locations built from them. */
interface ReadPacks {
  headers: Map<string, KnownHeader>;
  locations: Locations;
}

/** By packs directory (see ContentStore.index). */
const READ_PACKS = new Map<string, ReadPacks>();
/** Object locations kept in READ_PACKS before it is emptied (~150 bytes each). */
const READ_PACKS_MAX_OBJECTS = 1_000_000;

function rememberPacks(packsDir: string, read: ReadPacks): void {
  READ_PACKS.delete(packsDir);
  let total = read.locations.added.size;
  for (const other of READ_PACKS.values()) total += other.locations.added.size;
  if (total > READ_PACKS_MAX_OBJECTS) READ_PACKS.clear();
  READ_PACKS.set(packsDir, read);
}

function buildPack(items: readonly ContentItem[], quality: number): { buffer: Buffer; index: PackIndex } {
  const index: PackIndex = { blocks: [], objects: [] };
  const blocks: Buffer[] = [];
  const counts: number[] = [];
  let dataOff = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const flush = (): void => {
    if (pending.length === 0) return;
    const raw = Buffer.concat(pending);
    const compressed = zlib.brotliCompressSync(raw, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    });
    const useRaw = compressed.length >= raw.length;
    const stored = useRaw ? raw : compressed;
    index.blocks.push({ off: dataOff, len: stored.length, raw: raw.length, codec: useRaw ? 'raw' : 'br' });
    counts.push(pending.length);
    blocks.push(stored);
    dataOff += stored.length;
    pending = [];
    pendingBytes = 0;
  };
  for (const item of items) {
    if (pendingBytes > 0 && pendingBytes + item.bytes.length > BLOCK_RAW_BYTES) flush();
    index.objects.push([item.sha256, index.blocks.length, pendingBytes, item.bytes.length]);
    pending.push(item.bytes);
    pendingBytes += item.bytes.length;
    if (pendingBytes >= BLOCK_RAW_BYTES) flush();
  }
  flush();
  const indexBytes = encodeIndex(index, counts);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(indexBytes.length);
  return { buffer: Buffer.concat([MAGIC, length, indexBytes, ...blocks]), index };
}

/**
 * The index, binary: u32 block count; per block u32 stored length, u32 raw length, u8 codec
 * (0 raw, 1 brotli), u32 object count; then per object (in block order) 32 bytes of sha256 and
 * u32 length. Offsets follow from the lengths. 36 bytes per object: a pack of small files
 * should not be mostly index.
 */
function encodeIndex(index: PackIndex, counts: readonly number[]): Buffer {
  const out = Buffer.alloc(4 + index.blocks.length * 13 + index.objects.length * 36);
  let at = out.writeUInt32BE(index.blocks.length, 0);
  index.blocks.forEach((b, i) => {
    at = out.writeUInt32BE(b.len, at);
    at = out.writeUInt32BE(b.raw, at);
    at = out.writeUInt8(b.codec === 'br' ? 1 : 0, at);
    at = out.writeUInt32BE(counts[i] as number, at);
  });
  for (const [sha, , , len] of index.objects) {
    out.write(sha, at, 'hex');
    at = out.writeUInt32BE(len, at + 32);
  }
  return out;
}

function decodeIndex(buf: Buffer): PackIndex {
  const index: PackIndex = { blocks: [], objects: [] };
  let at = 0;
  const blockCount = buf.readUInt32BE(at);
  at += 4;
  const counts: number[] = [];
  let off = 0;
  for (let i = 0; i < blockCount; i++) {
    const len = buf.readUInt32BE(at);
    const raw = buf.readUInt32BE(at + 4);
    const codec: Codec = buf.readUInt8(at + 8) === 1 ? 'br' : 'raw';
    counts.push(buf.readUInt32BE(at + 9));
    at += 13;
    index.blocks.push({ off, len, raw, codec });
    off += len;
  }
  counts.forEach((count, block) => {
    let inBlock = 0;
    for (let k = 0; k < count; k++) {
      const sha = buf.toString('hex', at, at + 32);
      const len = buf.readUInt32BE(at + 32);
      at += 36;
      index.objects.push([sha, block, inBlock, len]);
      inBlock += len;
    }
  });
  if (at !== buf.length) throw new Error('index length mismatch');
  return index;
}

function readPackHeader(file: string): { index: PackIndex; dataStart: number } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const fixed = Buffer.alloc(HEADER_FIXED);
    if (fs.readSync(fd, fixed, 0, HEADER_FIXED, 0) !== HEADER_FIXED || !fixed.subarray(0, MAGIC.length).equals(MAGIC)) return null;
    const length = fixed.readUInt32BE(MAGIC.length);
    if (length > 1 << 30) return null;
    const body = Buffer.alloc(length);
    readFully(fd, body, HEADER_FIXED);
    return { index: decodeIndex(body), dataStart: HEADER_FIXED + length };
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function readFully(fd: number, into: Buffer, position: number): void {
  let done = 0;
  while (done < into.length) {
    const n = fs.readSync(fd, into, done, into.length - done, position + done);
    if (n === 0) throw new CairnError('ERR_CORRUPT', 'content pack is truncated');
    done += n;
  }
}

