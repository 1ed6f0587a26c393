/**
 * A sorted index of a location's history ids, kept beside (never inside) `immutable_history/`
 * as `.immutable_history.cairn-index`, so a page of a large history costs O(log n + page)
 * instead of a scan and sort of the whole directory (upstream's cost on every page).
 *
 * It is only a cache, never the truth:
 * - It records the history directory's identity and timestamps (dev, ino, mtime, ctime in ns)
 *   as they were when it was built, and is used only while they are unchanged. Creating,
 *   renaming or deleting anything in the directory (a save, a prune, a temp file, an upstream
 *   writer, a hand edit) changes the directory's mtime and ctime, so the index goes stale and
 *   listing falls back to the scan.
 * - Racy-timestamp guard (as git's racy-git rule): it is built only from a directory that had
 *   not changed for `quietMs`, so no later change can share the recorded timestamp even on a
 *   file system with a coarse clock, and only when the directory was unchanged across the scan.
 * - It is written atomically (unique temp, rename) and fully shape-checked on read; a torn,
 *   foreign or mismatching index is ignored.
 */
import type { BigIntStats } from 'node:fs';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { writeFileAtomic } from '../../../core/atomic-write.js';
import { errnoCode } from '../../../core/errors.js';

export const HISTORY_INDEX_NAME = '.immutable_history.cairn-index';

const HEADER_BYTES = 256;
const MAGIC = 'cairn-history-index';

export interface DirStamp {
  dev: string;
  ino: string;
  mtimeNs: string;
  ctimeNs: string;
}

export function stampOf(st: BigIntStats): DirStamp {
  return { dev: String(st.dev), ino: String(st.ino), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs) };
}

export function sameStamp(a: DirStamp, b: DirStamp): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** True when the directory has not changed for `quietMs` before `nowMs` (the racy guard). */
export function isQuiet(stamp: DirStamp, nowMs: number, quietMs: number): boolean {
  const nowNs = BigInt(Math.floor(nowMs)) * 1_000_000n;
  const quietNs = BigInt(Math.floor(quietMs)) * 1_000_000n;
  return nowNs - BigInt(stamp.mtimeNs) > quietNs && nowNs - BigInt(stamp.ctimeNs) > quietNs;
}

interface Header extends DirStamp {
  magic: string;
  v: number;
  count: number;
  width: number;
}

/** Serialises sorted ids into the fixed-width index format: a padded JSON header, then one padded id per line. */
export function encodeIndex(stamp: DirStamp, sortedIds: readonly string[]): Buffer {
  const width = sortedIds.reduce((w, id) => Math.max(w, id.length), 1);
  const header: Header = { magic: MAGIC, v: 1, ...stamp, count: sortedIds.length, width };
  const headerText = JSON.stringify(header);
  if (headerText.length >= HEADER_BYTES) throw new Error('history index header too long');
  const buf = Buffer.alloc(HEADER_BYTES + sortedIds.length * (width + 1), 0x20);
  buf.write(headerText, 0, 'latin1');
  buf[HEADER_BYTES - 1] = 0x0a;
  let pos = HEADER_BYTES;
  for (const id of sortedIds) {
    buf.write(id, pos, 'latin1');
    buf[pos + width] = 0x0a;
    pos += width + 1;
  }
  return buf;
}

export async function writeIndex(file: string, stamp: DirStamp, sortedIds: readonly string[], fsync: boolean): Promise<void> {
  await writeFileAtomic(file, encodeIndex(stamp, sortedIds), { fsync });
}

function parseHeader(buf: Buffer, size: number): Header | undefined {
  if (buf[HEADER_BYTES - 1] !== 0x0a) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(buf.toString('latin1', 0, HEADER_BYTES - 1).trimEnd());
  } catch {
    return undefined;
  }
  const h = header as Partial<Header>;
  if (h.magic !== MAGIC || h.v !== 1 || !Number.isInteger(h.count) || !Number.isInteger(h.width) || h.width! < 1) return undefined;
  if (typeof h.dev !== 'string' || typeof h.ino !== 'string' || typeof h.mtimeNs !== 'string' || typeof h.ctimeNs !== 'string') return undefined;
  if (size !== HEADER_BYTES + h.count! * (h.width! + 1)) return undefined;
  return h as Header;
}

/**
 * One page from the index at `file` if it is valid for a directory with `stamp`; undefined when
 * there is no usable index (missing, stale, torn, foreign).
 */
export async function pageFromIndex(file: string, stamp: DirStamp, after: string | undefined, limit: number | undefined): Promise<string[] | undefined> {
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT' || code === 'ELOOP') return undefined;
    throw e;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size < HEADER_BYTES) return undefined;
    const headBuf = Buffer.alloc(HEADER_BYTES);
    await fh.read(headBuf, 0, HEADER_BYTES, 0);
    const header = parseHeader(headBuf, st.size);
    if (header === undefined || !sameStamp(header, stamp)) return undefined;
    const { count, width } = header;
    const rec = width + 1;
    const recBuf = Buffer.alloc(width);
    const idAt = async (i: number): Promise<string> => {
      await fh.read(recBuf, 0, width, HEADER_BYTES + i * rec);
      return recBuf.toString('latin1').trimEnd();
    };
    // First record strictly after the cursor (binary search on the sorted records).
    let lo = 0;
    if (after !== undefined) {
      let hi = count;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((await idAt(mid)) > after) hi = mid;
        else lo = mid + 1;
      }
    }
    const take = Math.max(0, Math.min(count - lo, limit === undefined ? Infinity : Math.floor(limit)));
    if (take === 0) return [];
    const pageBuf = Buffer.alloc(take * rec);
    await fh.read(pageBuf, 0, pageBuf.length, HEADER_BYTES + lo * rec);
    const out: string[] = new Array<string>(take);
    for (let i = 0; i < take; i++) out[i] = pageBuf.toString('latin1', i * rec, i * rec + width).trimEnd();
    return out;
  } finally {
    await fh.close();
  }
}

/** Every id in the index if it is well-formed (for verify), with the stamp it claims; undefined if malformed. */
export async function readWholeIndex(file: string): Promise<{ stamp: DirStamp; ids: string[] } | undefined> {
  let buf: Buffer;
  try {
    const fh = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0));
    try {
      if (!(await fh.stat()).isFile()) return undefined;
      buf = await fh.readFile();
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
  if (buf.length < HEADER_BYTES) return undefined;
  const header = parseHeader(buf, buf.length);
  if (header === undefined) return undefined;
  const ids: string[] = [];
  const rec = header.width + 1;
  for (let i = 0; i < header.count; i++) ids.push(buf.toString('latin1', HEADER_BYTES + i * rec, HEADER_BYTES + i * rec + header.width).trimEnd());
  return { stamp: { dev: header.dev, ino: header.ino, mtimeNs: header.mtimeNs, ctimeNs: header.ctimeNs }, ids };
}
