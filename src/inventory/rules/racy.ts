import * as fs from 'node:fs';
import { debugChannel, fallbackReason } from '../../core/debug.js';

/**
 * The racy-timestamp rule (git's "racy git"): an entry whose mtime or ctime is not some margin
 * older than the moment it was looked at may still change within the same clock tick without
 * its stat showing it, so it is recorded but not trusted next time (read or listed again).
 *
 * The margin must cover the file system's timestamp granularity plus the lag of the kernel's
 * coarse clock behind the wall clock this process reads. Local Linux file systems stamp times
 * from that clock at a tick of at most 10 ms (CONFIG_HZ=100; nanoseconds with multigrain
 * timestamps since 6.13), so 100 ms is ten ticks. Elsewhere (FAT's 2 s, network file systems
 * stamped by another host's clock, FUSE, overlay) 2 s, as before. A mount inside the tree has
 * another device number than the root and gets the 2 s margin too.
 */
export const RACY_MARGIN_MS = 2000;
export const RACY_MARGIN_LOCAL_MS = 100;

/** statfs types of local file systems stamped from the kernel clock: ext2/3/4, XFS, Btrfs, tmpfs, F2FS. */
const FINE_CLOCK_FS: ReadonlySet<number> = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010]);

/** The margins of one scan: `nearMs` for entries on the root's device `dev`, `farMs` for any other. */
export interface RacyMargins {
  nearMs: number;
  farMs: number;
  dev: number;
}

/** Entries with mtime or ctime at or after these instants are racy (`near` on device `dev`). */
export interface RacyFrom {
  near: number;
  far: number;
  dev: number;
}

/** The margin for what lies on the file system holding `file` (the far one when it cannot be told). */
export function racyMarginOf(file: string): number {
  try {
    return FINE_CLOCK_FS.has(fs.statfsSync(file).type) ? RACY_MARGIN_LOCAL_MS : RACY_MARGIN_MS;
  } catch (e) {
    debugChannel('inventory')?.(`fallback: the far racy margin for ${file}, its file system unknown (${fallbackReason(e) ?? 'ENOENT'})`);
    return RACY_MARGIN_MS;
  }
}

/** The margins for a root: as given (every device), else by the root's file system. */
export function racyMarginsFor(rootReal: string, givenMs: number | undefined): RacyMargins {
  let dev = -1;
  try {
    dev = fs.statSync(rootReal).dev;
  } catch (e) {
    // unknown: the far margin everywhere
    debugChannel('inventory')?.(`fallback: the far racy margin everywhere, ${rootReal} not stat-able (${fallbackReason(e) ?? 'ENOENT'})`);
  }
  if (givenMs !== undefined) return { nearMs: givenMs, farMs: givenMs, dev };
  return { nearMs: dev === -1 ? RACY_MARGIN_MS : racyMarginOf(rootReal), farMs: RACY_MARGIN_MS, dev };
}

/** The racy instants for a look taken now (or at `now`). */
export function racyFromNow(m: RacyMargins, now = Date.now()): RacyFrom {
  return { near: now - m.nearMs, far: now - m.farMs, dev: m.dev };
}

/** The stricter of two (the earlier instants): reads made at the earlier moment are judged by it. */
export function earlierRacyFrom(a: RacyFrom, b: RacyFrom | undefined): RacyFrom {
  return b === undefined ? a : { near: Math.min(a.near, b.near), far: Math.min(a.far, b.far), dev: a.dev };
}

export function isRacy(from: RacyFrom, mtimeMs: number, ctimeMs: number, dev: number): boolean {
  const t = dev === from.dev ? from.near : from.far;
  return mtimeMs >= t || ctimeMs >= t;
}
