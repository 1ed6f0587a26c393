import { crc32 } from '../../core/crc32.js';
import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { removeStaleTemps, STALE_TEMP_AGE_MS, writeAll, writeFileAtomicSync, writeFileInBackground, type BackgroundWrite } from '../../core/atomic-write.js';
import { errnoCode } from '../../core/errors.js';
import { CACHE_FORMAT, cacheFamily, sweptStampPath } from './artefacts.js';
import { splitNulUtf8 } from '../io/nul-strings.js';
import { STAT_FIELDS } from '../io/read-file.js';
import type { ScanWarning } from '../types.js';
import { holdFile, releaseFile, type HeldFile } from './held-file.js';

/**
 * Persistent stat cache: what the last scan of a root saw, so the next scan re-reads only what
 * changed (git's index idea). Binary, versioned, checksummed; anything odd is discarded with a
 * notice, never trusted.
 *
 * Layout (little endian):
 *   magic "CAIRNSC\0" | u32 format | u32 headerLen | header JSON
 *   u32 nFiles | u32 nDirs | u32 nListing
 *   files: nFiles × 6 × f64 (size, mtimeMs, ctimeMs, ino, dev, mode) | nFiles × u8 hasSha | nFiles × 32 sha
 *          | zero bytes to an 8-byte boundary (the header JSON is padded with spaces so the f64 rows
 *          start on one too: a load views them in place)
 *   dirs:  nDirs × 4 × f64 (mtimeMs, ctimeMs, ino, dev) | nDirs × u32 listing length (names)
 *          | nDirs × u32 listing bytes (its names NUL-joined: a listing is found without a scan) | nListing × u8 type
 *   u32 pathsLen | file paths, dir paths, NUL-separated
 *   u32 namesLen | listing names, NUL-separated (decoded only when a listing is used)
 *   u32 nEntries | nEntries × u32 file row | u32 resultLen | result JSON (may be empty): last, so
 *   the rest can be on its way to disk before the scan knows its result (startCacheSave)
 *   CRC-32 of everything above (u32): catches a torn or damaged file cheaply (2.7 ms for 19 MB
 *   against 9 ms for sha256); the cache is private (0600) and only ever speeds a scan up
 */
const MAGIC = Buffer.from('CAIRNSC\0', 'latin1');

/**
 * A directory's entries in walk order (sorted by name, directories keyed with a trailing '/'),
 * as parallel arrays: `types[i]` is d(ir) f(ile) l(ink) o(ther), or x (name not valid UTF-8).
 * No object per entry: listings of a whole tree stay resident during a scan.
 */
export interface Listing {
  names: string[];
  types: string;
}

export type DirStatRow = [mtimeMs: number, ctimeMs: number, ino: number, dev: number];

/**
 * The stat recorded for a directory listed while racy (changed too close to the scan): NaN never
 * equals a real stat, so the next scan lists it again and compares, instead of trusting it.
 */
export const RELIST_DIR: DirStatRow = [Number.NaN, Number.NaN, Number.NaN, Number.NaN];

export interface CachedDir {
  stat: DirStatRow;
  listing: Listing;
}

/** FileTable row flag: a digest is stored. */
export const HAS_SHA = 2;
/** FileTable row flag: racy (see racy.ts); never trusted, re-read next time. */
export const RACY = 4;

/**
 * Per-file records in flat arrays (no object per file: a 100k-file cache stays a few MB and
 * costs the garbage collector nothing). Row i: `paths[i]`, stats[i*6 .. i*6+6), shas[i*32 ..).
 */
export class FileTable {
  paths: string[] = [];
  private indexMap: Map<string, number> | undefined;
  stats: Float64Array;
  shas: Uint8Array;
  /**
   * Flags per row: HAS_SHA (a digest is stored) | RACY (changed too close to the scan that saw
   * it: the row only records that the file exists and must be re-read next time).
   */
  has: Uint8Array;

  constructor(capacity = 1024) {
    // The stats in shared memory, like a loaded table's: the verifying worker reads them in
    // place, and a long-running process does not copy them there at every scan.
    this.stats = new Float64Array(new SharedArrayBuffer(capacity * STAT_FIELDS * 8));
    this.shas = new Uint8Array(capacity * 32);
    this.has = new Uint8Array(capacity);
  }

  /** A table over arrays it takes as they are (a loaded cache's views of the file's bytes); it copies them only to grow. */
  static over(stats: Float64Array, shas: Uint8Array, has: Uint8Array): FileTable {
    const t = new FileTable(0);
    t.stats = stats;
    t.shas = shas;
    t.has = has;
    return t;
  }

  /** Row of each path; built on first use (the unchanged-tree path never needs it). */
  get index(): Map<string, number> {
    if (this.indexMap === undefined) {
      const m = new Map<string, number>();
      for (let i = 0; i < this.paths.length; i++) m.set(this.paths[i]!, i);
      this.indexMap = m;
    }
    return this.indexMap;
  }

  /**
   * Rows of a few paths (absent ones left out): the whole index when it is built, else one pass
   * that compares only paths of a wanted length, so asking about a handful of paths does not
   * build a map of every row (~15 ms at 76k rows).
   */
  rowsOf(wanted: Iterable<string>): Map<string, number> {
    const found = new Map<string, number>();
    const want = new Set(wanted);
    if (want.size === 0) return found;
    if (this.indexMap !== undefined) {
      for (const path of want) {
        const i = this.indexMap.get(path);
        if (i !== undefined) found.set(path, i);
      }
      return found;
    }
    const lengths = new Set<number>();
    for (const path of want) lengths.add(path.length);
    for (let i = 0; i < this.paths.length; i++) {
      const path = this.paths[i]!;
      if (lengths.has(path.length) && want.has(path)) found.set(path, i); // a path has one row
    }
    return found;
  }

  get size(): number {
    return this.paths.length;
  }

  private grow(): void {
    const cap = Math.max(1024, this.has.length * 2);
    const stats = new Float64Array(new SharedArrayBuffer(cap * STAT_FIELDS * 8));
    stats.set(this.stats);
    const shas = new Uint8Array(cap * 32);
    shas.set(this.shas);
    const has = new Uint8Array(cap);
    has.set(this.has);
    this.stats = stats;
    this.shas = shas;
    this.has = has;
  }

  /** Adds or replaces a row; `sha` null means no digest. */
  set(path: string, stat: ArrayLike<number>, statOffset: number, sha: Uint8Array | null, shaOffset: number, racy = false): void {
    let i = this.index.get(path);
    if (i === undefined) {
      i = this.paths.length;
      if (i >= this.has.length) this.grow();
      this.paths.push(path);
      this.index.set(path, i);
    }
    this.setRow(i, stat, statOffset, sha, shaOffset, racy);
  }

  /** Replaces existing row `i` (no path lookup). */
  setRow(i: number, stat: ArrayLike<number>, statOffset: number, sha: Uint8Array | null, shaOffset: number, racy = false): void {
    for (let k = 0; k < STAT_FIELDS; k++) this.stats[i * STAT_FIELDS + k] = stat[statOffset + k]!;
    if (sha === null) {
      this.has[i] = racy ? RACY : 0;
    } else {
      this.has[i] = HAS_SHA | (racy ? RACY : 0);
      this.shas.set(sha.subarray(shaOffset, shaOffset + 32), i * 32);
    }
  }

  /** Adds a row for a file not read yet (flagged racy, so it is read before any use); returns its index. */
  appendUnread(path: string): number {
    const i = this.paths.length;
    if (i >= this.has.length) this.grow();
    this.paths.push(path);
    this.indexMap?.set(path, i);
    this.stats.fill(0, i * STAT_FIELDS, i * STAT_FIELDS + STAT_FIELDS);
    this.has[i] = RACY;
    return i;
  }

  /** Keeps only the rows for which `keep(i)` is true, in order (rows after a dropped one move up). */
  keepRows(keep: (i: number) => boolean): void {
    let k = 0;
    const n = this.paths.length;
    for (let i = 0; i < n; i++) {
      if (!keep(i)) continue;
      if (k !== i) {
        this.paths[k] = this.paths[i]!;
        this.stats.copyWithin(k * STAT_FIELDS, i * STAT_FIELDS, i * STAT_FIELDS + STAT_FIELDS);
        this.shas.copyWithin(k * 32, i * 32, i * 32 + 32);
        this.has[k] = this.has[i]!;
      }
      k++;
    }
    this.paths.length = k;
    this.indexMap = undefined;
  }

  /** True when row `i` of this table equals row `j` of `other`. */
  sameRow(i: number, other: FileTable, j: number): boolean {
    if (this.has[i] !== other.has[j]) return false;
    for (let k = 0; k < STAT_FIELDS; k++) if (this.stats[i * STAT_FIELDS + k] !== other.stats[j * STAT_FIELDS + k]) return false;
    if ((this.has[i]! & HAS_SHA) !== 0) for (let k = 0; k < 32; k++) if (this.shas[i * 32 + k] !== other.shas[j * 32 + k]) return false;
    return true;
  }
}

export interface StatCacheData {
  files: FileTable;
  dirs: Map<string, CachedDir>;
  /**
   * The last scan's whole result, present only when `files` and `dirs` are exactly what that
   * scan depended on (see scan.ts, stored-result path): `result` is its key and skipped list
   * (JSON), `entryRows` the file-table rows of its entries in order — the entries themselves
   * (path, size, mode, digest) are the rows.
   */
  result?: string;
  entryRows?: Uint32Array;
  /**
   * As loaded from disk and while `files.paths` and the keys of `dirs` are unchanged: the file
   * paths then the directory paths, NUL-joined (the cache's own string table), as the bytes
   * read. Hands the path list to a verifying worker, and back to disk, without joining and
   * encoding 100k strings again.
   */
  pathsTable?: { raw: Buffer };
}

export function emptyCache(): StatCacheData {
  return { files: new FileTable(), dirs: new Map() };
}

interface CacheHeader {
  tool: 'cairn';
  root: string;
  optionsKey: string;
  /** Stat rows are raw machine integers: a cache from a machine of the other byte order is foreign. */
  endianness: 'LE' | 'BE';
}

/** `held`: with `hold`, the file kept open (resident.ts), when its rows were used; the caller releases it. */
export type LoadOutcome = { data: StatCacheData; warning?: ScanWarning; held?: HeldFile };

/** Loads a cache file; a missing file is an empty cache, anything unusable is an empty cache plus a notice. */
export function loadCache(file: string, rootReal: string, optionsKey: string, hold = false): LoadOutcome {
  let read: { buf: Buffer; held: HeldFile };
  try {
    read = readShared(file);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return { data: emptyCache() };
    return { data: emptyCache(), warning: { code: 'CACHE_DISCARDED', message: `stat cache unreadable (${errnoCode(e) ?? 'error'}); hashing everything`, path: file } };
  }
  let data: StatCacheData;
  try {
    data = decode(read.buf, rootReal, optionsKey);
  } catch (e) {
    releaseFile(read.held);
    const why = e instanceof Error ? e.message : String(e);
    return { data: emptyCache(), warning: { code: 'CACHE_DISCARDED', message: `stat cache discarded (${why}); hashing everything`, path: file } };
  }
  if (hold) return { data, held: read.held };
  releaseFile(read.held);
  return { data };
}

/**
 * The whole file in shared memory: the loaded table's rows and paths are views of these bytes,
 * handed to the verifying worker as they are (no copies: a 76k-file cache saves ~16 MB of fresh
 * pages, and the garbage collections that external memory brings). The file stays open (`held`,
 * its stat taken before the read): the caller keeps or releases it.
 */
function readShared(file: string): { buf: Buffer; held: HeldFile } {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const held = holdFile(fd);
    const size = Number(held.stat.size);
    const buf = Buffer.from(new SharedArrayBuffer(size));
    for (let off = 0; off < size; ) {
      const n = fs.readSync(fd, buf, off, size - off, off);
      if (n === 0) return { buf: buf.subarray(0, off), held }; // shrank meanwhile: the checksum tells
      off += n;
    }
    return { buf, held };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/** `count` f64 at `off` of `buf`: a view where the bytes are 8-aligned (as the writer lays them out), else a copy. */
function f64At(buf: Buffer, off: number, count: number): Float64Array {
  if ((buf.byteOffset + off) % 8 === 0) return new Float64Array(buf.buffer, buf.byteOffset + off, count);
  const out = new Float64Array(count);
  Buffer.from(out.buffer).set(buf.subarray(off, off + count * 8));
  return out;
}

/** Zero bytes that put what follows `at` on an 8-byte boundary. */
function padTo8(at: number): number {
  return (8 - (at % 8)) % 8;
}

class Reader {
  off = 0;
  constructor(readonly buf: Buffer) {}
  need(n: number): void {
    if (this.off + n > this.buf.length) throw new Error('truncated');
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.off);
    this.off += 4;
    return v;
  }
  f64(): number {
    const v = this.buf.readDoubleLE(this.off);
    this.off += 8;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const b = this.buf.subarray(this.off, this.off + n);
    this.off += n;
    return b;
  }
}

/**
 * Every directory listing of a loaded cache, each decoded on first use: the unchanged-tree path
 * never reads a listing, an update reads only the directories that moved, and ~100k name
 * strings are the cache's largest allocation. A listing never decoded is written back from its
 * bytes (see rawNames).
 */
class LazyListings {
  private readonly decoded: (Listing | undefined)[];
  /** Where each directory's names begin in `names`, and its first name's index; computed on first use. */
  private offsets: { byteAt: Uint32Array; nameAt: Uint32Array } | undefined;

  constructor(
    readonly names: Buffer,
    readonly types: string,
    /** Names per directory. */
    readonly lens: Uint32Array,
    /** Bytes of each directory's names, NUL-joined (the blob joins the non-empty ones with one NUL more). */
    readonly byteLens: Uint32Array,
  ) {
    this.decoded = new Array<Listing | undefined>(lens.length);
  }

  private at(): { byteAt: Uint32Array; nameAt: Uint32Array } {
    if (this.offsets === undefined) {
      const { lens, byteLens } = this;
      const byteAt = new Uint32Array(lens.length);
      const nameAt = new Uint32Array(lens.length);
      let bytes = 0;
      let names = 0;
      for (let k = 0; k < lens.length; k++) {
        byteAt[k] = bytes;
        nameAt[k] = names;
        if (lens[k]! > 0) bytes += byteLens[k]! + 1;
        names += lens[k]!;
      }
      this.offsets = { byteAt, nameAt };
    }
    return this.offsets;
  }

  /** Directory i's names as the bytes read (NUL-joined), with its type letters. */
  rawNames(i: number): { bytes: Buffer; types: string } {
    const n = this.lens[i]!;
    if (n === 0) return { bytes: Buffer.alloc(0), types: '' };
    const { byteAt, nameAt } = this.at();
    return { bytes: this.names.subarray(byteAt[i], byteAt[i]! + this.byteLens[i]!), types: this.types.slice(nameAt[i], nameAt[i]! + n) };
  }

  get(i: number): Listing {
    let listing = this.decoded[i];
    if (listing === undefined) {
      const { bytes, types } = this.rawNames(i);
      listing = { names: types.length === 0 ? [] : bytes.toString('utf8').split('\0'), types };
      // Checksummed, so only a bug could trip this; fail loudly rather than misread a tree.
      if (listing.names.length !== types.length) throw new Error('stat cache: listing table mismatch');
      this.decoded[i] = listing;
    }
    return listing;
  }
}

/** A loaded directory row: its stat read from the loaded rows and its listing decoded on first use. */
class LazyCachedDir implements CachedDir {
  constructor(
    private readonly stats: Float64Array,
    readonly listings: LazyListings,
    readonly i: number,
  ) {}

  get stat(): DirStatRow {
    const o = this.i * 4;
    return [this.stats[o]!, this.stats[o + 1]!, this.stats[o + 2]!, this.stats[o + 3]!];
  }

  get listing(): Listing {
    return this.listings.get(this.i);
  }
}

/** Directory rows as loaded: paths, and stats 4 per row (mtimeMs, ctimeMs, ino, dev). */
export interface DirRows {
  paths: readonly string[];
  stats: Float64Array;
}

/**
 * A Map that notes any change: a loaded cache whose directories were only looked up (a
 * .gitignore edit classifies a subtree again from the cached listings) is still written back
 * from its loaded rows and raw listing bytes.
 */
class ChangeTrackingMap<K, V> extends Map<K, V> {
  changed = false;

  override set(key: K, value: V): this {
    this.changed = true;
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    const had = super.delete(key);
    if (had) this.changed = true;
    return had;
  }

  override clear(): void {
    if (this.size > 0) this.changed = true;
    super.clear();
  }
}

/**
 * A cache as loaded. Its directory map (17k entries on a 76k-file tree) is built on first use:
 * the stored-result check reads the rows straight from the arrays, and a cache whose
 * directories nobody looked up is written back from them.
 */
class LoadedCache implements StatCacheData {
  result?: string;
  entryRows?: Uint32Array;
  pathsTable?: { raw: Buffer };
  private dirMap: ChangeTrackingMap<string, CachedDir> | undefined;

  constructor(
    public files: FileTable,
    private readonly rows: DirRows,
    readonly listings: LazyListings,
  ) {}

  get dirs(): Map<string, CachedDir> {
    if (this.dirMap === undefined) {
      const m = new ChangeTrackingMap<string, CachedDir>();
      const { paths, stats } = this.rows;
      for (let i = 0; i < paths.length; i++) m.set(paths[i]!, new LazyCachedDir(stats, this.listings, i));
      m.changed = false;
      this.dirMap = m;
    }
    return this.dirMap;
  }

  /** The directory rows exactly as loaded, while nothing changed the map (or it was never built). */
  get untouchedDirRows(): DirRows | undefined {
    return this.dirMap === undefined || !this.dirMap.changed ? this.rows : undefined;
  }
}

/** The directory rows of a cache: straight from the loaded arrays when the map was never built. */
export function dirRowsOf(data: StatCacheData): DirRows {
  const loaded = data instanceof LoadedCache ? data.untouchedDirRows : undefined;
  if (loaded !== undefined) return loaded;
  const paths: string[] = [];
  // In shared memory: the verifying worker is handed them without a copy.
  const stats = new Float64Array(new SharedArrayBuffer(data.dirs.size * 4 * 8));
  for (const [rel, d] of data.dirs) {
    stats.set(d.stat, paths.length * 4);
    paths.push(rel);
  }
  return { paths, stats };
}

function decode(buf: Buffer, rootReal: string, optionsKey: string): StatCacheData {
  if (buf.length < MAGIC.length + 8 + 4 || !buf.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a cairn stat cache');
  const body = buf.subarray(0, buf.length - 4);
  if (crc32(body) !== buf.readUInt32LE(buf.length - 4)) throw new Error('checksum mismatch: corrupt or truncated');
  const r = new Reader(body);
  r.off = MAGIC.length;
  const format = r.u32();
  if (format !== CACHE_FORMAT) throw new Error(`format ${format}, this cairn reads ${CACHE_FORMAT}`);
  const header = JSON.parse(r.bytes(r.u32()).toString('utf8')) as Partial<CacheHeader>;
  if (header.tool !== 'cairn' || header.root !== rootReal || header.optionsKey !== optionsKey || header.endianness !== os.endianness()) throw new Error('written for another root, other options or another machine');
  const nFiles = r.u32();
  const nDirs = r.u32();
  const nListing = r.u32();
  const pad = padTo8(nFiles * (48 + 1 + 32));
  r.need(nFiles * (48 + 1 + 32) + pad + nDirs * (32 + 4 + 4));
  const stats = f64At(r.buf, r.off, nFiles * STAT_FIELDS);
  r.off += nFiles * 48;
  const has = r.bytes(nFiles);
  const table = FileTable.over(stats, r.bytes(nFiles * 32), has);
  for (let i = 0; i < nFiles; i++) if ((table.has[i]! & ~(HAS_SHA | RACY)) !== 0) throw new Error('bad row flag');
  r.off += pad;
  const dirStats = f64At(r.buf, r.off, nDirs * 4);
  r.off += nDirs * 32;
  const listingLens = new Uint32Array(nDirs);
  Buffer.from(listingLens.buffer).set(r.bytes(nDirs * 4));
  const listingBytes = new Uint32Array(nDirs);
  Buffer.from(listingBytes.buffer).set(r.bytes(nDirs * 4));
  let listingTotal = 0;
  let bytesTotal = 0;
  for (let i = 0; i < nDirs; i++) {
    listingTotal += listingLens[i]!;
    if (listingLens[i]! > 0) bytesTotal += listingBytes[i]! + 1;
  }
  if (listingTotal !== nListing) throw new Error('listing count mismatch');
  const types = r.bytes(nListing).toString('latin1');
  if (!/^[dflo]*$/.test(types)) throw new Error('bad listing type');
  const pathsRaw = r.bytes(r.u32());
  const namesBytes = r.bytes(r.u32());
  if (namesBytes.length !== Math.max(0, bytesTotal - 1)) throw new Error('listing bytes mismatch');
  const nEntries = r.u32();
  const entryRows = new Uint32Array(nEntries);
  Buffer.from(entryRows.buffer).set(r.bytes(nEntries * 4));
  const result = r.bytes(r.u32()).toString('utf8');
  // The top bit marks a symlink entry (result.ts LINK_ROW), checked where it is used.
  for (let i = 0; i < nEntries; i++) {
    const row = entryRows[i]!;
    if (row < 0x80000000 && row >= nFiles) throw new Error('entry row out of range');
  }
  if (r.off !== body.length) throw new Error('trailing bytes');
  const parts = nFiles + nDirs === 0 ? [] : splitNulUtf8(pathsRaw, isAscii);
  if (parts.length !== nFiles + nDirs) throw new Error('string table mismatch');
  table.paths = parts.slice(0, nFiles);
  const listings = new LazyListings(namesBytes, types, listingLens, listingBytes);
  const data = new LoadedCache(table, { paths: parts.slice(nFiles), stats: dirStats }, listings);
  if (result !== '') {
    data.result = result;
    data.entryRows = entryRows;
  }
  data.pathsTable = { raw: pathsRaw };
  return data;
}

/** The cache file's content but the stored result and the trailer (see cacheTail), and the CRC-32 of it. */
function encodeCacheHead(data: StatCacheData, rootReal: string, optionsKey: string): { head: Buffer[]; crc: number } {
  const json = JSON.stringify({ tool: 'cairn', root: rootReal, optionsKey, endianness: os.endianness() } satisfies CacheHeader);
  // Spaces after the JSON put the file rows on an 8-byte boundary, so a load can view them in place.
  const header = Buffer.from(json + ' '.repeat(padTo8(MAGIC.length + 8 + Buffer.byteLength(json) + 12)), 'utf8');
  const t = data.files;
  const nFiles = t.size;
  // Directories exactly as loaded (the unchanged-tree path) are written back from their raw
  // bytes, without decoding a single listing (or even building the directory map).
  const loadedRows = data instanceof LoadedCache ? data.untouchedDirRows : undefined;
  const untouched = loadedRows !== undefined && data instanceof LoadedCache ? { rows: loadedRows, listings: data.listings } : null;
  const nDirs = untouched !== null ? untouched.rows.paths.length : data.dirs.size;
  let nListing = 0;
  if (untouched !== null) nListing = untouched.listings.types.length;
  else for (const d of data.dirs.values()) nListing += d.listing.names.length;
  // The string table as loaded, when the paths are the same; else joined and encoded anew.
  const strings: string[] | null = data.pathsTable === undefined ? [...t.paths] : null;
  const pre = Buffer.allocUnsafe(MAGIC.length + 8 + header.length + 12);
  let off = MAGIC.copy(pre, 0);
  off = pre.writeUInt32LE(CACHE_FORMAT, off);
  off = pre.writeUInt32LE(header.length, off);
  off += header.copy(pre, off);
  off = pre.writeUInt32LE(nFiles, off);
  off = pre.writeUInt32LE(nDirs, off);
  pre.writeUInt32LE(nListing, off);
  // The file rows go out as views of the table itself: copying them into one buffer would cost
  // ~8 MB of fresh pages on a 76k-file tree. (Nothing changes the table while they are written.)
  const fileRows = [Buffer.from(t.stats.buffer, t.stats.byteOffset, nFiles * 48), Buffer.from(t.has.buffer, t.has.byteOffset, nFiles), Buffer.from(t.shas.buffer, t.shas.byteOffset, nFiles * 32), Buffer.alloc(padTo8(nFiles * (48 + 1 + 32)))];
  let dirParts: Buffer[];
  let namesBlob: Buffer;
  if (untouched !== null) {
    const { rows: dirRows, listings } = untouched;
    if (strings !== null) for (const p of dirRows.paths) strings.push(p);
    dirParts = [Buffer.from(dirRows.stats.buffer, dirRows.stats.byteOffset, dirRows.stats.byteLength), Buffer.from(listings.lens.buffer, listings.lens.byteOffset, listings.lens.byteLength), Buffer.from(listings.byteLens.buffer, listings.byteLens.byteOffset, listings.byteLens.byteLength), Buffer.from(listings.types, 'latin1')];
    namesBlob = listings.names;
  } else {
    const dirRows = Buffer.allocUnsafe(nDirs * (32 + 4 + 4) + nListing);
    let at = 0;
    for (const [p, d] of data.dirs) {
      strings?.push(p);
      for (const v of d.stat) at = dirRows.writeDoubleLE(v, at);
    }
    // Listings loaded and never changed are copied as bytes; only the others are encoded.
    const parts: Buffer[] = [];
    const types: string[] = [];
    let k = 0;
    for (const d of data.dirs.values()) {
      const kept = d instanceof LazyCachedDir ? d.listings.rawNames(d.i) : null;
      const n = kept !== null ? kept.types.length : d.listing.names.length;
      const bytes = n === 0 ? null : kept !== null ? kept.bytes : Buffer.from(d.listing.names.join('\0'), 'utf8');
      dirRows.writeUInt32LE(n, at + 4 * k);
      dirRows.writeUInt32LE(bytes?.length ?? 0, at + 4 * (nDirs + k));
      if (bytes !== null) parts.push(bytes);
      types.push(kept !== null ? kept.types : d.listing.types);
      k++;
    }
    dirRows.write(types.join(''), at + 8 * nDirs, 'latin1');
    dirParts = [dirRows];
    namesBlob = joinWithNul(parts);
  }
  const pathsBlob = strings === null ? data.pathsTable!.raw : Buffer.from(strings.join('\0'), 'utf8');
  const rows = data.result === undefined || data.entryRows === undefined ? new Uint32Array(0) : data.entryRows;
  const lens = Buffer.allocUnsafe(12);
  lens.writeUInt32LE(pathsBlob.length, 0);
  lens.writeUInt32LE(namesBlob.length, 4);
  lens.writeUInt32LE(rows.length, 8);
  const head = [pre, ...fileRows, ...dirParts, lens.subarray(0, 4), pathsBlob, lens.subarray(4, 8), namesBlob, lens.subarray(8), Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength)];
  let crc = 0;
  for (const part of head) crc = crc32(part, crc);
  return { head, crc };
}

/** The cache file's last parts: the stored result (JSON, or '' for none), then the CRC-32 of everything. */
function cacheTail(result: string | undefined, headCrc: number): Buffer[] {
  const text = Buffer.from(result ?? '', 'utf8');
  const len = Buffer.allocUnsafe(4);
  len.writeUInt32LE(text.length, 0);
  const trailer = Buffer.allocUnsafe(4);
  trailer.writeUInt32LE(crc32(text, crc32(len, headCrc)), 0);
  return [len, text, trailer];
}

/** The cache file's content as its parts in order, the CRC-32 trailer last (written one by one, never joined). */
export function encodeCache(data: StatCacheData, rootReal: string, optionsKey: string): Buffer[] {
  const { head, crc } = encodeCacheHead(data, rootReal, optionsKey);
  return [...head, ...cacheTail(data.result, crc)];
}

/** The buffers joined with a NUL between each two. */
function joinWithNul(parts: readonly Buffer[]): Buffer {
  let length = Math.max(0, parts.length - 1);
  for (const b of parts) length += b.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (let k = 0; k < parts.length; k++) {
    if (k > 0) out[at++] = 0;
    at += parts[k]!.copy(out, at);
  }
  return out;
}

/** A cache save under way (startCacheSave). */
export interface PendingCacheSave {
  /** Adds the stored result and publishes the file; a notice instead of a throw, as saveCache. */
  finish(result: string | undefined): Promise<ScanWarning | undefined>;
  abort(): void;
}

/**
 * saveCache in two steps: everything but the stored result (the cache's rows and listings, all
 * of its ~13 MB on a 76k-file tree) goes to disk on the thread pool at once, while the scan
 * builds its result and digest; `finish` adds the result (which holds that digest) and
 * publishes. A file that cannot even be started gives its notice at `finish`.
 */
export function startCacheSave(file: string, data: StatCacheData, rootReal: string, optionsKey: string): PendingCacheSave {
  let write: BackgroundWrite;
  let crc: number;
  try {
    prepareCacheDir(file);
    const encoded = encodeCacheHead(data, rootReal, optionsKey);
    crc = encoded.crc;
    write = writeFileInBackground(file, encoded.head, 0o600);
  } catch (e) {
    const notice = cacheUnwritable(file, e);
    return { finish: () => Promise.resolve(notice), abort: () => undefined };
  }
  return {
    async finish(result) {
      try {
        await write.finish(cacheTail(result, crc));
        return undefined;
      } catch (e) {
        return cacheUnwritable(file, e);
      }
    },
    abort: () => write.abort(),
  };
}

/** Makes the (private) directory a cache file and its memos go in. */
export function ensureCacheDir(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
}

function prepareCacheDir(file: string): void {
  ensureCacheDir(file);
  // What a run killed mid-write left of this cache's files (each up to tens of MB) goes, at most
  // once a STALE_TEMP_AGE_MS: younger temps are kept anyway, and the listing of a directory that
  // every root shares (10^4 entries: ~15 ms) was most of a hook turn's cache save.
  if (!dueForSweep(file)) return;
  removeStaleTemps(path.dirname(file), cacheFamily(file), { minAgeMs: STALE_TEMP_AGE_MS });
}

/**
 * True, and the family's stamp touched, when its last sweep is STALE_TEMP_AGE_MS old (or its
 * stamp is missing, unreadable, or dated ahead: a clock set back). So a temp a dead writer left
 * goes by the first save at least twice that age after it was made.
 */
function dueForSweep(file: string): boolean {
  const stamp = sweptStampPath(file);
  const now = Date.now();
  try {
    const at = fs.lstatSync(stamp);
    if (at.isFile() && Math.abs(now - at.mtimeMs) < STALE_TEMP_AGE_MS) return false;
  } catch {
    // no stamp yet: sweep
  }
  try {
    // No link is followed at the name (the directory is private, but the rule holds everywhere).
    const fd = fs.openSync(stamp, fs.constants.O_WRONLY | fs.constants.O_CREAT | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
    try {
      fs.futimesSync(fd, now / 1000, now / 1000);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // an unwritable stamp costs only the listing it would spare next time
  }
  return true;
}

/** holdFile, the descriptor closed should its stat fail (the cache is then simply not kept). */
function holdOrClose(fd: number): HeldFile | undefined {
  try {
    return holdFile(fd);
  } catch {
    fs.closeSync(fd);
    return undefined;
  }
}

function cacheUnwritable(file: string, e: unknown): ScanWarning {
  return { code: 'CACHE_UNWRITABLE', message: `stat cache not saved (${errnoCode(e) ?? String(e)}); the next scan hashes everything again`, path: file };
}

/**
 * Publishes the cache atomically (temp + rename), so a crash or abort never leaves a partial
 * file where the next run would look. Returns a notice instead of throwing: a cache that cannot
 * be written costs speed, not correctness. `keep`: is handed the file written, held open
 * (resident.ts), and releases it.
 */
export function saveCache(file: string, data: StatCacheData, rootReal: string, optionsKey: string, keep?: (held: HeldFile) => void): ScanWarning | undefined {
  try {
    prepareCacheDir(file);
    // 0600: the cache lists the tree's paths and digests; it is nobody else's business.
    const parts = encodeCache(data, rootReal, optionsKey);
    let written: HeldFile | undefined;
    writeFileAtomicSync(
      file,
      (fd) => {
        for (const part of parts) writeAll(fd, part);
      },
      { fsync: false, mode: 0o600, unlinkFirst: true, freeOldLater: true, ...(keep !== undefined ? { handOver: (fd: number) => (written = holdOrClose(fd)) } : {}) },
    );
    if (written !== undefined) keep?.(written);
    return undefined;
  } catch (e) {
    return cacheUnwritable(file, e);
  }
}
