import * as fs from 'node:fs';
import { debugChannel } from '../../core/debug.js';

/**
 * lstat of a path into a caller's row: `out[0..5]` = size, mtimeMs, ctimeMs, ino, dev, mode (type
 * bits included, as `Stats.mode`). Returns false when the path leads nowhere or cannot be looked
 * at (ENOENT, ENOTDIR, EACCES, ...): for the stat-cache check every such row is simply "changed",
 * and the walk that follows says why.
 */
export type LstatInto = (path: string, out: Float64Array) => boolean;

/** fstat of an open file into a caller's row (the same six fields); throws like `fs.fstatSync`. */
export type FstatInto = (fd: number, out: Float64Array) => void;

/** The stat calls of the hot loops, made once per thread; `via` says which implementation. */
export interface FastStat {
  lstat: LstatInto;
  fstat: FstatInto;
  via: 'binding' | 'stats';
}

/**
 * The fastest correct stat calls this process allows. The warm check is ~93k lstat calls on a
 * 76k-file tree and hashing fstats every file twice (the mid-read change guard), and the public
 * API spends ~20% of each call building a `Stats` object (and its Date fields) we read six
 * numbers from. Node's fs binding returns those numbers in one reused Float64Array (lstat 2.4 µs
 * a call against 2.9 µs here, bench/RESULTS.md), so it is used when it is there and answers
 * exactly like the public API on `probe` (lstat, fstat, and a missing path); otherwise, or under
 * the permission model (which the binding would bypass) or --pending-deprecation (where touching
 * it warns), the public API is (`allowBinding` false: always). Each thread makes its own
 * (fastStatHere), workers included.
 */
export function makeFastStat(fs: typeof import('node:fs'), probe: string, allowBinding = true): FastStat {
  const fromStats = (st: import('node:fs').Stats, out: Float64Array): void => {
    out[0] = st.size;
    out[1] = st.mtimeMs;
    out[2] = st.ctimeMs;
    out[3] = st.ino;
    out[4] = st.dev;
    out[5] = st.mode;
  };
  const noThrow = { throwIfNoEntry: false } as const;
  const viaStats: FastStat = {
    via: 'stats',
    lstat: (path, out) => {
      let st: import('node:fs').Stats | undefined;
      try {
        st = fs.lstatSync(path, noThrow);
      } catch {
        return false;
      }
      if (st === undefined) return false;
      fromStats(st, out);
      return true;
    },
    fstat: (fd, out) => fromStats(fs.fstatSync(fd), out),
  };
  type Binding = {
    lstat(path: string, bigint: false, req: undefined, throwIfNoEntry: false): Float64Array | undefined;
    fstat(fd: number, bigint: false, req: undefined, shouldNotThrow: false): Float64Array;
  };
  let binding: Binding | undefined;
  try {
    const proc = process as unknown as { binding?(name: string): unknown; permission?: unknown; execArgv: string[] };
    const flags = `${proc.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
    if (!allowBinding || proc.permission !== undefined || flags.includes('deprecation') || typeof proc.binding !== 'function') return viaStats;
    binding = proc.binding('fs') as Binding;
    if (typeof binding.lstat !== 'function' || typeof binding.fstat !== 'function') return viaStats;
  } catch {
    return viaStats;
  }
  const b = binding;
  // Stats computes mtimeMs as sec * 1e3 + nsec / 1e6; the same expression gives the same double.
  const fromValues = (s: Float64Array, out: Float64Array): void => {
    out[0] = s[8]!;
    out[1] = s[12]! * 1e3 + s[13]! / 1e6;
    out[2] = s[14]! * 1e3 + s[15]! / 1e6;
    out[3] = s[7]!;
    out[4] = s[0]!;
    out[5] = s[1]!;
  };
  const viaBinding: FastStat = {
    via: 'binding',
    lstat: (path, out) => {
      let s: Float64Array | undefined;
      try {
        s = b.lstat(path, false, undefined, false);
      } catch {
        return false;
      }
      if (s === undefined) return false;
      fromValues(s, out);
      return true;
    },
    fstat: (fd, out) => fromValues(b.fstat(fd, false, undefined, false), out),
  };
  let fd = -1;
  try {
    const a = new Float64Array(6);
    const c = new Float64Array(6);
    const same = (): boolean => a.every((x, i) => x === c[i]);
    const missing = `${probe}/\u0001cairn-probe-missing`;
    if (!viaStats.lstat(probe, a) || !viaBinding.lstat(probe, c) || !same() || viaStats.lstat(missing, a) || viaBinding.lstat(missing, c)) return viaStats;
    fd = fs.openSync(probe, fs.constants.O_RDONLY);
    viaStats.fstat(fd, a);
    viaBinding.fstat(fd, c);
    if (same()) return viaBinding;
  } catch {
    // an unexpected binding or an unreadable probe: the public API
  } finally {
    if (fd >= 0) fs.closeSync(fd);
  }
  return viaStats;
}

let here: FastStat | undefined;

/** The fast stat calls of the calling thread (made once; `CAIRN_DEBUG=inventory` says when they are the slower public API). */
export function fastStatHere(): FastStat {
  if (here === undefined) {
    here = makeFastStat(fs, '/');
    if (here.via === 'stats') debugChannel('inventory')?.('fallback: stat calls through the public API (Node\'s fs binding is not usable here)');
  }
  return here;
}
