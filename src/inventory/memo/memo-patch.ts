import * as fs from 'node:fs';
import * as os from 'node:os';
import { debugChannel, fallbackReason } from '../../core/debug.js';
import { writeAll, writeFileAtomicSync } from '../../core/atomic-write.js';
import { crc32 } from '../../core/crc32.js';
import { patchPath, patchTag } from '../cache/artefacts.js';

/** `CAIRN_DEBUG=inventory`: why a memo was not used or kept (each costs only speed). */
const debug = debugChannel('inventory');
const fellBack = (what: string, e: unknown): void => {
  const why = debug === null ? null : fallbackReason(e);
  if (why !== null) debug!(`fallback: ${what} (${why})`);
};

/**
 * A memo patch (`<memo>.patch`): the text of a newer body as its base memo's entries, in runs,
 * and the entries that are not in the base, kept in the patch's own text. A step that changed
 * a few hundred files then writes ~100 KB beside the memo instead of the memo's ~10-15 MB again
 * (writing both memos anew cost ~22 ms of a 1 % step on the bench tree); the base is rewritten
 * whole once more than PATCH_SHARE of the entries would be in the patch (each costs a little in
 * every later splice).
 *
 * A patch names its base by digest and CRC-32 (a base rewritten since, or damaged, does not
 * match and the patch is ignored), and is CRC-checked itself. Layout: a fixed-width first line
 * `<tag>+patch <digest> <base digest> <base crc, 10 digits> <crc of the rest, 10 digits>
 * <rest length, 12 digits>`, then (little-endian) u32 run count, per run i32 first base index
 * (-1: the next entries of the patch text) and u32 entry count, then u32 entry count of the
 * patch text and that many + 1 u32 offsets (where each entry starts, where the last ends), then
 * the patch text: its entries joined by the memo's separator.
 */
export interface MemoPatch {
  /** The digest of the body the patched text is of. */
  digest: string;
  baseDigest: string;
  baseCrc: number;
  /** Per entry of the body: its index in the base (≥ 0), or -(1 + j) for entry j of `text`. */
  from: Int32Array;
  text: Buffer;
  /** Where each entry of `text` starts, then where the last one ends. */
  starts: Uint32Array;
  /** One past the highest base index used. */
  baseEnd: number;
}

/** At most this share of a body's entries kept in a patch; past it the base is written again. */
export const PATCH_SHARE = 1 / 32;

const LITTLE_ENDIAN = os.endianness() === 'LE';

const DIGEST_CHARS = 'sha256:'.length + 64;

function headLength(tag: string): number {
  return patchTag(tag).length + 1 + DIGEST_CHARS + 1 + DIGEST_CHARS + 1 + 10 + 1 + 10 + 1 + 12 + 1;
}

function patchHead(tag: string, p: { digest: string; baseDigest: string; baseCrc: number }, crc: number, length: number): string {
  return `${patchTag(tag)} ${p.digest} ${p.baseDigest} ${String(p.baseCrc).padStart(10, '0')} ${String(crc).padStart(10, '0')} ${String(length).padStart(12, '0')}\n`;
}

/** The patch beside `memoFile` if there is a whole one of this tag, else null. */
export function readMemoPatch(memoFile: string, tag: string): MemoPatch | null {
  let buf: Buffer;
  try {
    // Not through a link, as the memos themselves are read (the cache directory is private anyway).
    const fd = fs.openSync(patchPath(memoFile), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      buf = fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    fellBack(`memo patch beside ${memoFile} not read`, e);
    return null;
  }
  return parseMemoPatch(buf, tag);
}

export function parseMemoPatch(buf: Buffer, tag: string): MemoPatch | null {
  const hl = headLength(tag);
  if (buf.length < hl) return null;
  const head = buf.toString('latin1', 0, hl);
  // Fixed widths after the tag (which may hold spaces itself).
  const prefix = `${patchTag(tag)} `;
  if (!head.startsWith(prefix)) return null;
  const digest = head.slice(prefix.length, prefix.length + DIGEST_CHARS);
  const baseDigest = head.slice(prefix.length + DIGEST_CHARS + 1, prefix.length + 2 * DIGEST_CHARS + 1);
  const baseCrc = Number(head.slice(-35, -25));
  const rest = buf.subarray(hl);
  if (!/^sha256:[0-9a-f]{64}$/.test(digest) || !/^sha256:[0-9a-f]{64}$/.test(baseDigest) || !Number.isInteger(baseCrc)) return null;
  // The whole line must be as written for these values, the CRC and length of the rest included.
  if (head !== patchHead(tag, { digest, baseDigest, baseCrc }, crc32(rest), rest.length)) return null;
  // The runs, the entry count and the starts: 32-bit words, copied out aligned.
  const words = (from: number, count: number): Int32Array | null => {
    if (rest.length < 4 * (from + count)) return null;
    const out = new Int32Array(count);
    const raw = Buffer.from(out.buffer);
    raw.set(rest.subarray(4 * from, 4 * (from + count)));
    if (!LITTLE_ENDIAN) raw.swap32();
    return out;
  };
  const nRuns = words(0, 1)?.[0];
  if (nRuns === undefined || nRuns < 0) return null;
  const runs = words(1, 2 * nRuns);
  const np = words(1 + 2 * nRuns, 1)?.[0];
  if (runs === null || np === undefined || np < 0) return null;
  const startWords = words(2 + 2 * nRuns, np + 1);
  if (startWords === null) return null;
  const starts = new Uint32Array(startWords.buffer);
  const text = rest.subarray(4 * (3 + 2 * nRuns + np));
  for (let j = 1; j <= np; j++) if (starts[j]! < starts[j - 1]!) return null;
  if (starts[np]! > text.length) return null;
  let total = 0;
  let baseEnd = 0;
  for (let r = 0; r < nRuns; r++) {
    const first = runs[2 * r]!;
    const count = runs[2 * r + 1]!;
    if (first < -1 || count <= 0) return null;
    total += count;
    if (first >= 0) baseEnd = Math.max(baseEnd, first + count);
  }
  const from = new Int32Array(total);
  let k = 0;
  let next = 0;
  for (let r = 0; r < nRuns; r++) {
    const first = runs[2 * r]!;
    const count = runs[2 * r + 1]!;
    if (first >= 0) for (let c = 0; c < count; c++) from[k++] = first + c;
    else for (let c = 0; c < count; c++) from[k++] = -1 - next++;
  }
  if (next !== np) return null;
  return { digest, baseDigest, baseCrc, from, text, starts, baseEnd };
}

/** True when every base index the patch uses is one of the base's `baseCount` entries. */
export function patchFits(patch: MemoPatch, baseCount: number): boolean {
  return patch.baseEnd <= baseCount;
}

/** Drops the patch beside `memoFile` (after the base was written anew). */
export function removeMemoPatch(memoFile: string): void {
  try {
    fs.rmSync(patchPath(memoFile), { force: true });
  } catch (e) {
    // a stale patch names a base that is gone, and is ignored
    fellBack(`stale memo patch beside ${memoFile} not removed`, e);
  }
}

/**
 * Collects a patch from the parts of a text as they are written (the same parts a whole memo
 * would get): runs copied from the base are noted by index; every other entry is compared with
 * the base entry expected where it stands (after the last base run, counting the entries since)
 * and noted by index when it is the same bytes (a file edited and then restored, or read again
 * without a change, comes back to its base text and leaves the patch); the rest are kept.
 * Frame and separator parts (no entries) are skipped. Written at commit, in one piece.
 */
export class MemoPatchWriter {
  private readonly runs: [number, number][] = [];
  private readonly texts: Buffer[] = [];
  private readonly starts: number[] = [];
  private length = 0;
  /** The base entry the next entry would be, were it unchanged since the base. */
  private nextBase = 0;
  private failed = false;

  constructor(
    private readonly memoFile: string,
    private readonly tag: string,
    private readonly base: { digest: string; crc: number; text: Buffer; starts: Uint32Array },
    private readonly separator: Buffer,
  ) {}

  put(part: { bytes: Buffer; count?: number; starts?: ArrayLike<number> | null; base?: number }): void {
    const count = part.count ?? 0;
    if (count === 0 || this.failed) return;
    if (part.base !== undefined) {
      this.baseRun(part.base, count);
      return;
    }
    const rel = part.starts;
    if (rel === null || rel === undefined || rel.length !== count) {
      this.failed = true; // entries that cannot be told apart: no patch (the next run renders them)
      return;
    }
    const sep = this.separator.length;
    for (let j = 0; j < count; j++) {
      const entry = part.bytes.subarray(rel[j], j + 1 < count ? rel[j + 1]! - sep : part.bytes.length);
      if (this.isBaseEntry(this.nextBase, entry)) this.baseRun(this.nextBase, 1);
      else this.patchEntry(entry);
    }
  }

  private baseRun(first: number, count: number): void {
    const last = this.runs[this.runs.length - 1];
    if (last !== undefined && last[0] >= 0 && last[0] + last[1] === first) last[1] += count;
    else this.runs.push([first, count]);
    this.nextBase = first + count;
  }

  private patchEntry(entry: Buffer): void {
    if (this.length > 0) {
      this.texts.push(this.separator);
      this.length += this.separator.length;
    }
    this.starts.push(this.length);
    this.texts.push(entry);
    this.length += entry.length;
    const last = this.runs[this.runs.length - 1];
    if (last !== undefined && last[0] === -1) last[1] += 1;
    else this.runs.push([-1, 1]);
    this.nextBase++;
  }

  private isBaseEntry(b: number, entry: Buffer): boolean {
    const { text, starts } = this.base;
    const count = starts.length - 1;
    if (b >= count) return false;
    const end = b + 1 < count ? starts[b + 1]! - this.separator.length : starts[count]!;
    return end - starts[b]! === entry.length && text.compare(entry, 0, entry.length, starts[b], end) === 0;
  }

  /** Publishes the patch as the text of the body of digest `digest`; false when it could not be. */
  commit(digest: string): boolean {
    if (this.failed) return false;
    const np = this.starts.length;
    // Runs, entry count, starts and end as one block of 32-bit words (little-endian, as written).
    const words = new Int32Array(1 + 2 * this.runs.length + 1 + np + 1);
    let w = 0;
    words[w++] = this.runs.length;
    for (const [first, count] of this.runs) {
      words[w++] = first;
      words[w++] = count;
    }
    words[w++] = np;
    words.set(this.starts, w);
    words[w + np] = this.length;
    const raw = Buffer.from(words.buffer);
    if (!LITTLE_ENDIAN) raw.swap32(); // the format is little-endian
    const rest = Buffer.concat([raw, ...this.texts]);
    const head = Buffer.from(patchHead(this.tag, { digest, baseDigest: this.base.digest, baseCrc: this.base.crc }, crc32(rest), rest.length), 'latin1');
    try {
      writeFileAtomicSync(
        patchPath(this.memoFile),
        (fd) => {
          writeAll(fd, head);
          writeAll(fd, rest);
        },
        { fsync: false, mode: 0o600 },
      );
      return true;
    } catch (e) {
      fellBack(`memo patch beside ${this.memoFile} not written`, e);
      return false; // the temp file is gone; the next run serialises what the patch would have held
    }
  }

  abort(): void {
    this.failed = true;
  }
}
