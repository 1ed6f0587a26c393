import { createHash, hash as oneShotHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeFileAtomicSync } from '../core/atomic-write.js';
import { errnoCode } from '../core/errors.js';
import type { CachedFile, StatRow } from './read-file.js';
import type { ScanWarning } from './types.js';

/**
 * Persistent stat cache: what the last scan of a root saw, so the next scan re-reads only what
 * changed (git's index idea). Binary, versioned, checksummed; anything odd is discarded with a
 * notice, never trusted.
 *
 * Layout (little endian):
 *   magic "CAIRNSC\0" | u32 format | u32 headerLen | header JSON
 *   u32 nFiles | u32 nDirs | u32 nListing
 *   files: nFiles × 6 × i64 (size, mtimeNs, ctimeNs, ino, dev, mode) | nFiles × u8 hasSha | nFiles × 32 sha
 *   dirs:  nDirs × 4 × i64 (mtimeNs, ctimeNs, ino, dev) | nDirs × u32 listing length
 *   u32 stringsLen | strings: file paths, dir paths, listing items (type char + name), NUL-separated
 *   sha256 of everything above (32 bytes)
 */
const MAGIC = Buffer.from('CAIRNSC\0', 'latin1');
export const CACHE_FORMAT = 1;

/** One directory entry as listed: type d(ir) f(ile) l(ink) o(ther), or x (name not valid UTF-8). */
export interface ListingEntry {
  name: string;
  type: 'd' | 'f' | 'l' | 'o' | 'x';
}

export type DirStatRow = [mtimeNs: bigint, ctimeNs: bigint, ino: bigint, dev: bigint];

export interface CachedDir {
  stat: DirStatRow;
  /** In walk order (sorted by name, directories keyed with a trailing '/'). */
  listing: ListingEntry[];
}

export interface StatCacheData {
  files: Map<string, CachedFile>;
  dirs: Map<string, CachedDir>;
}

export function emptyCache(): StatCacheData {
  return { files: new Map(), dirs: new Map() };
}

interface CacheHeader {
  tool: 'cairn';
  root: string;
  optionsKey: string;
}

/** Default cache directory: `$XDG_CACHE_HOME/cairn/snapshots`, else `~/.cache/cairn/snapshots`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'cairn', 'snapshots');
}

/** One cache file per (root real path, output-changing options). */
export function cacheFilePath(cacheDir: string, rootReal: string, optionsKey: string): string {
  const id = oneShotHash('sha256', `${rootReal}\0${optionsKey}`, 'hex').slice(0, 40);
  return path.join(cacheDir, `${id}.cache`);
}

export type LoadOutcome = { data: StatCacheData; warning?: ScanWarning };

/** Loads a cache file; a missing file is an empty cache, anything unusable is an empty cache plus a notice. */
export function loadCache(file: string, rootReal: string, optionsKey: string): LoadOutcome {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return { data: emptyCache() };
    return { data: emptyCache(), warning: { code: 'CACHE_DISCARDED', message: `stat cache unreadable (${errnoCode(e) ?? 'error'}); hashing everything`, path: file } };
  }
  try {
    return { data: decode(buf, rootReal, optionsKey) };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { data: emptyCache(), warning: { code: 'CACHE_DISCARDED', message: `stat cache discarded (${why}); hashing everything`, path: file } };
  }
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
  i64(): bigint {
    const v = this.buf.readBigInt64LE(this.off);
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

function decode(buf: Buffer, rootReal: string, optionsKey: string): StatCacheData {
  if (buf.length < MAGIC.length + 8 + 32 || !buf.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a cairn stat cache');
  const body = buf.subarray(0, buf.length - 32);
  const sum = createHash('sha256').update(body).digest();
  if (!sum.equals(buf.subarray(buf.length - 32))) throw new Error('checksum mismatch: corrupt or truncated');
  const r = new Reader(body);
  r.off = MAGIC.length;
  const format = r.u32();
  if (format !== CACHE_FORMAT) throw new Error(`format ${format}, this cairn reads ${CACHE_FORMAT}`);
  const header = JSON.parse(r.bytes(r.u32()).toString('utf8')) as Partial<CacheHeader>;
  if (header.tool !== 'cairn' || header.root !== rootReal || header.optionsKey !== optionsKey) throw new Error('written for another root or other options');
  const nFiles = r.u32();
  const nDirs = r.u32();
  const nListing = r.u32();
  r.need(nFiles * (48 + 1 + 32) + nDirs * (32 + 4));
  const fileStats: StatRow[] = new Array<StatRow>(nFiles);
  for (let i = 0; i < nFiles; i++) fileStats[i] = [r.i64(), r.i64(), r.i64(), r.i64(), r.i64(), r.i64()];
  const hasSha = r.bytes(nFiles);
  const shas = r.bytes(nFiles * 32);
  const dirStats: DirStatRow[] = new Array<DirStatRow>(nDirs);
  for (let i = 0; i < nDirs; i++) dirStats[i] = [r.i64(), r.i64(), r.i64(), r.i64()];
  const listingLens: number[] = new Array<number>(nDirs);
  let listingTotal = 0;
  for (let i = 0; i < nDirs; i++) {
    const n = r.u32();
    listingLens[i] = n;
    listingTotal += n;
  }
  if (listingTotal !== nListing) throw new Error('listing count mismatch');
  const stringsLen = r.u32();
  const strings = r.bytes(stringsLen).toString('utf8');
  if (r.off !== body.length) throw new Error('trailing bytes');
  const parts = nFiles + nDirs + nListing === 0 ? [] : strings.split('\0');
  if (parts.length !== nFiles + nDirs + nListing) throw new Error('string table mismatch');
  const data = emptyCache();
  let p = 0;
  for (let i = 0; i < nFiles; i++) {
    const sha = hasSha[i] === 1 ? shas.subarray(i * 32, i * 32 + 32).toString('hex') : '';
    data.files.set(parts[p++]!, { stat: fileStats[i]!, sha });
  }
  const dirPaths = parts.slice(p, p + nDirs);
  p += nDirs;
  for (let i = 0; i < nDirs; i++) {
    const listing: ListingEntry[] = new Array<ListingEntry>(listingLens[i]!);
    for (let j = 0; j < listing.length; j++) {
      const item = parts[p++]!;
      const type = item.charAt(0);
      if (type !== 'd' && type !== 'f' && type !== 'l' && type !== 'o') throw new Error('bad listing entry');
      listing[j] = { type, name: item.slice(1) };
    }
    data.dirs.set(dirPaths[i]!, { stat: dirStats[i]!, listing });
  }
  return data;
}

export function encodeCache(data: StatCacheData, rootReal: string, optionsKey: string): Buffer {
  const header = Buffer.from(JSON.stringify({ tool: 'cairn', root: rootReal, optionsKey } satisfies CacheHeader), 'utf8');
  const nFiles = data.files.size;
  const nDirs = data.dirs.size;
  let nListing = 0;
  for (const d of data.dirs.values()) nListing += d.listing.length;
  const strings: string[] = [];
  const fixed = Buffer.allocUnsafe(MAGIC.length + 8 + header.length + 12 + nFiles * (48 + 1 + 32) + nDirs * (32 + 4) + 4);
  let off = MAGIC.copy(fixed, 0);
  off = fixed.writeUInt32LE(CACHE_FORMAT, off);
  off = fixed.writeUInt32LE(header.length, off);
  off += header.copy(fixed, off);
  off = fixed.writeUInt32LE(nFiles, off);
  off = fixed.writeUInt32LE(nDirs, off);
  off = fixed.writeUInt32LE(nListing, off);
  const hasShaOff = off + nFiles * 48;
  const shaOff = hasShaOff + nFiles;
  let i = 0;
  for (const [p, rec] of data.files) {
    strings.push(p);
    for (const v of rec.stat) off = fixed.writeBigInt64LE(v, off);
    if (rec.sha.length === 64) {
      fixed[hasShaOff + i] = 1;
      fixed.write(rec.sha, shaOff + i * 32, 32, 'hex');
    } else {
      fixed[hasShaOff + i] = 0;
      fixed.fill(0, shaOff + i * 32, shaOff + i * 32 + 32);
    }
    i++;
  }
  off = shaOff + nFiles * 32;
  for (const [p, d] of data.dirs) {
    strings.push(p);
    for (const v of d.stat) off = fixed.writeBigInt64LE(v, off);
  }
  for (const d of data.dirs.values()) {
    off = fixed.writeUInt32LE(d.listing.length, off);
    for (const e of d.listing) strings.push(e.type + e.name);
  }
  const blob = Buffer.from(strings.join('\0'), 'utf8');
  off = fixed.writeUInt32LE(blob.length, off);
  const sum = createHash('sha256').update(fixed.subarray(0, off)).update(blob).digest();
  return Buffer.concat([fixed.subarray(0, off), blob, sum]);
}

/**
 * Publishes the cache atomically (temp + rename), so a crash or abort never leaves a partial
 * file where the next run would look. Returns a notice instead of throwing: a cache that cannot
 * be written costs speed, not correctness.
 */
export function saveCache(file: string, data: StatCacheData, rootReal: string, optionsKey: string): ScanWarning | undefined {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileAtomicSync(file, encodeCache(data, rootReal, optionsKey), { fsync: false });
    return undefined;
  } catch (e) {
    return { code: 'CACHE_UNWRITABLE', message: `stat cache not saved (${errnoCode(e) ?? String(e)}); the next scan hashes everything again`, path: file };
  }
}
