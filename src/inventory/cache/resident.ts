import * as fs from 'node:fs';
import type { StatCacheData } from './stat-cache.js';
import type { CacheState, RepoSnapshotEntry } from '../types.js';
import { releaseFile, type HeldFile } from './held-file.js';

/**
 * The decoded stat cache a process keeps between its scans of a root (a long-running caller:
 * the MCP server's capture worker, `cairn daemon`), so its next scan starts from the rows in
 * memory instead of decoding the file again (~16 ms and ~10 MB of garbage at 50k files).
 *
 * The rows are reused only while the file on disk is provably the one they were loaded from or
 * saved as: this process holds that file open (so its inode cannot be reused by another file),
 * and the path still names that inode with the size and times it had. Every cairn writer
 * replaces a cache by renaming a new file over it (a new inode), so another process's save, a
 * crash's leftovers or a removal all show as another inode or none, and the file is decoded.
 */

/**
 * The entries the scan that kept the rows built from them and returned (frozen), with their
 * bytes: a next scan that finds nothing changed takes them instead of building every entry again
 * (~5 ms and as much garbage at 30k files). Kept only with rows left exactly as they were.
 */
export interface BuiltEntries {
  files: readonly RepoSnapshotEntry[];
  bytes: number;
}

interface Resident {
  data: StatCacheData;
  held: HeldFile;
  state: CacheState;
  built?: BuiltEntries;
}

/** Caches kept at once, the oldest dropped first: a library scanning many roots keeps a few, not all. */
const MAX_RESIDENT = 4;

const residents = new Map<string, Resident>();

/** Takes that found rows kept and the file still theirs (`reused`), or kept rows whose file had changed (`stale`): for tests. */
export const residentCounts = { reused: 0, stale: 0 };

function keyOf(file: string, rootReal: string, optionsKey: string): string {
  return `${file}\0${rootReal}\0${optionsKey}`;
}

/** True when `file` still names the held inode, unwritten since (same size, mtime and ctime to the nanosecond). */
function stillAt(file: string, held: HeldFile): boolean {
  let now: fs.BigIntStats | undefined;
  try {
    now = fs.lstatSync(file, { bigint: true, throwIfNoEntry: false });
  } catch {
    return false;
  }
  const was = held.stat;
  return now !== undefined && now.isFile() && now.dev === was.dev && now.ino === was.ino && now.size === was.size && now.mtimeNs === was.mtimeNs && now.ctimeNs === was.ctimeNs;
}

/**
 * The rows this process kept for the cache `file` still holds, taken out of the keeping (the
 * scan changes them in place; it gives them back with keepResident once they are on disk, or
 * leaves them). Undefined when none are kept or the file is not the one they were kept with.
 */
export function takeResident(file: string, rootReal: string, optionsKey: string): Resident | undefined {
  const key = keyOf(file, rootReal, optionsKey);
  const r = residents.get(key);
  if (r === undefined) return undefined;
  residents.delete(key);
  if (stillAt(file, r.held)) {
    residentCounts.reused++;
    return r;
  }
  residentCounts.stale++;
  releaseFile(r.held);
  return undefined;
}

/**
 * Keeps `data` as the rows of the cache `file`, which `held` holds open (the file they were
 * just saved as, or loaded from and left unchanged); returns the state it now stands for.
 * `built`: the entries the scan returned, built from these very rows as they are now.
 * Nothing may change `data` afterwards but a scan that took it (takeResident).
 */
export function keepResident(file: string, rootReal: string, optionsKey: string, data: StatCacheData, held: HeldFile, built?: BuiltEntries): CacheState {
  const key = keyOf(file, rootReal, optionsKey);
  const old = residents.get(key);
  if (old !== undefined) {
    residents.delete(key);
    if (old.held.fd !== held.fd) releaseFile(old.held);
  }
  const state: CacheState = Object.freeze({});
  residents.set(key, built === undefined ? { data, held, state } : { data, held, state, built });
  for (const [k, r] of residents) {
    if (residents.size <= MAX_RESIDENT) break;
    residents.delete(k);
    releaseFile(r.held);
  }
  return state;
}

/** Drops every kept cache (tests; a caller that wants its memory back). */
export function dropResidents(): void {
  for (const r of residents.values()) releaseFile(r.held);
  residents.clear();
}
