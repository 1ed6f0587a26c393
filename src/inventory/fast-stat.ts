import * as fs from 'node:fs';

/**
 * lstat of a path into a caller's row: `out[0..5]` = size, mtimeMs, ctimeMs, ino, dev, mode (type
 * bits included, as `Stats.mode`). Returns false when the path leads nowhere or cannot be looked
 * at (ENOENT, ENOTDIR, EACCES, ...): for the stat-cache check every such row is simply "changed",
 * and the walk that follows says why.
 */
export type LstatInto = (path: string, out: Float64Array) => boolean;

/**
 * The fastest correct LstatInto this process allows. The warm check is ~93k lstat calls on a
 * 76k-file tree, and `fs.lstatSync` spends ~20% of each one building a `Stats` object (and its
 * Date fields) we read six numbers from. Node's fs binding returns those numbers in one reused
 * Float64Array (2.4 µs a call against 2.9 µs here, bench/RESULTS.md), so it is used when it is
 * there and answers exactly like `lstatSync` on `probe` (and on a missing path); otherwise, or
 * under the permission model (which the binding would bypass) or --pending-deprecation (where
 * touching it warns), `lstatSync` is (`allowBinding` false: always). Self-contained: also runs in the verifying worker as text.
 */
export function makeLstatInto(fs: typeof import('node:fs'), probe: string, allowBinding = true): LstatInto {
  const noThrow = { throwIfNoEntry: false } as const;
  const viaStats: LstatInto = (path, out) => {
    let st: import('node:fs').Stats | undefined;
    try {
      st = fs.lstatSync(path, noThrow);
    } catch {
      return false;
    }
    if (st === undefined) return false;
    out[0] = st.size;
    out[1] = st.mtimeMs;
    out[2] = st.ctimeMs;
    out[3] = st.ino;
    out[4] = st.dev;
    out[5] = st.mode;
    return true;
  };
  type Binding = { lstat(path: string, bigint: false, req: undefined, throwIfNoEntry: false): Float64Array | undefined };
  let binding: Binding | undefined;
  try {
    const proc = process as unknown as { binding?(name: string): unknown; permission?: unknown; execArgv: string[] };
    const flags = `${proc.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
    if (!allowBinding || proc.permission !== undefined || flags.includes('deprecation') || typeof proc.binding !== 'function') return viaStats;
    binding = proc.binding('fs') as Binding;
    if (typeof binding.lstat !== 'function') return viaStats;
  } catch {
    return viaStats;
  }
  const b = binding;
  // Stats computes mtimeMs as sec * 1e3 + nsec / 1e6; the same expression gives the same double.
  const viaBinding: LstatInto = (path, out) => {
    let s: Float64Array | undefined;
    try {
      s = b.lstat(path, false, undefined, false);
    } catch {
      return false;
    }
    if (s === undefined) return false;
    out[0] = s[8]!;
    out[1] = s[12]! * 1e3 + s[13]! / 1e6;
    out[2] = s[14]! * 1e3 + s[15]! / 1e6;
    out[3] = s[7]!;
    out[4] = s[0]!;
    out[5] = s[1]!;
    return true;
  };
  try {
    const a = new Float64Array(6);
    const c = new Float64Array(6);
    const same = viaStats(probe, a) && viaBinding(probe, c) && a.every((x, i) => x === c[i]);
    const missing = `${probe}/\u0001cairn-probe-missing`;
    if (same && !viaStats(missing, a) && !viaBinding(missing, c)) return viaBinding;
  } catch {
    // an unexpected binding: the public API
  }
  return viaStats;
}

/**
 * fstat of an open file into a caller's row (the same six fields as LstatInto); throws like
 * `fs.fstatSync`. The hash path fstats every file twice (before and after reading, the
 * mid-read change guard), so the same binding shortcut saves ~10% of a small file's cost.
 * Self-contained: also runs in hash workers as text.
 */
export type FstatInto = (fd: number, out: Float64Array) => void;

export function makeFstatInto(fs: typeof import('node:fs'), probe: string, allowBinding = true): FstatInto {
  const viaStats: FstatInto = (fd, out) => {
    const st = fs.fstatSync(fd);
    out[0] = st.size;
    out[1] = st.mtimeMs;
    out[2] = st.ctimeMs;
    out[3] = st.ino;
    out[4] = st.dev;
    out[5] = st.mode;
  };
  type Binding = { fstat(fd: number, bigint: false, req: undefined, shouldNotThrow: false): Float64Array };
  let binding: Binding | undefined;
  try {
    const proc = process as unknown as { binding?(name: string): unknown; permission?: unknown; execArgv: string[] };
    const flags = `${proc.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
    if (!allowBinding || proc.permission !== undefined || flags.includes('deprecation') || typeof proc.binding !== 'function') return viaStats;
    binding = proc.binding('fs') as Binding;
    if (typeof binding.fstat !== 'function') return viaStats;
  } catch {
    return viaStats;
  }
  const b = binding;
  const viaBinding: FstatInto = (fd, out) => {
    const s = b.fstat(fd, false, undefined, false);
    out[0] = s[8]!;
    out[1] = s[12]! * 1e3 + s[13]! / 1e6;
    out[2] = s[14]! * 1e3 + s[15]! / 1e6;
    out[3] = s[7]!;
    out[4] = s[0]!;
    out[5] = s[1]!;
  };
  let fd = -1;
  try {
    fd = fs.openSync(probe, fs.constants.O_RDONLY);
    const a = new Float64Array(6);
    const c = new Float64Array(6);
    viaStats(fd, a);
    viaBinding(fd, c);
    if (a.every((x, i) => x === c[i])) return viaBinding;
  } catch {
    // an unexpected binding or an unreadable probe: the public API
  } finally {
    if (fd >= 0) fs.closeSync(fd);
  }
  return viaStats;
}

let here: { fstat: FstatInto } | undefined;

/** The fast stat calls of the calling thread (made once). */
export function fastStatHere(): { fstat: FstatInto } {
  here ??= { fstat: makeFstatInto(fs, '/') };
  return here;
}
