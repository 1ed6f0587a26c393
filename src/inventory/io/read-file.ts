import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { fastStatHere, type FastStat } from './fast-stat.js';

/**
 * Per-file status codes of a hash batch. OK_* carry bytes/mode/stat; the others are skip reasons.
 */
export const STATUS = {
  OK_HASHED: 0,
  OK_CACHED: 1,
  OK_STAT_ONLY: 2,
  VANISHED: 3,
  UNREADABLE: 4,
  UNSTABLE: 5,
  NOT_REGULAR: 6,
} as const;

/**
 * Stat fields kept per file, in this order: size, mtime, ctime (ms as Node reports them, to a
 * fraction of a microsecond), inode, device, st_mode. Plain doubles, not BigInt: BigInt stats
 * cost a heap object per field and dominated the warm scan's garbage collection. The lost
 * nanoseconds do not matter for trust: an entry is only cached once its mtime/ctime are 2 s
 * old (the racy guard), so any later write moves ctime by more than that.
 */
export const STAT_FIELDS = 6;

/** Read buffer of one hashing thread: files up to this size are hashed in one shot. */
export const READ_BUFFER_BYTES = 1 << 20;

/** Files per batch: the size of every shared batch slot. */
export const BATCH_CAPACITY = 256;
/** Bytes of one batch slot (see batchViews for the layout). */
export const BATCH_SLOT_BYTES = BATCH_CAPACITY * 162;

/**
 * Typed-array views of one batch slot. Slots live in SharedArrayBuffers that the main thread
 * and a worker both see, so a batch crosses threads as a short message (slot number + paths)
 * and its numbers are never serialised: structured-cloning typed arrays cost ~10-40 µs a
 * message and dominated the main thread.
 */
export interface BatchViews {
  /** In: STAT_FIELDS per file, the cached stat when cachedHas[i] != 0. */
  cachedStats: Float64Array;
  /** Out: STAT_FIELDS per file for OK_* results. */
  stats: Float64Array;
  /** In: 32 bytes per file, the cached digest when cachedHas[i] == 2. */
  cachedShas: Uint8Array;
  /** Out: 32 bytes per file for OK_HASHED / OK_CACHED with digests on. */
  shas: Uint8Array;
  /** In: 0 no cache record, 1 stat only (the cached run had no digests), 2 stat + digest. */
  cachedHas: Uint8Array;
  /** Out: a STATUS code per file. */
  status: Uint8Array;
}

/** BatchViews.cachedHas: no cache record, a stat only (the cached run had no digests), a stat and a digest. */
export const CACHED = { NONE: 0, STAT: 1, STAT_AND_SHA: 2 } as const;

/** Views over a slot buffer (used by the main thread and the hash workers alike). */
export function batchViews(buffer: ArrayBufferLike, cap: number): BatchViews {
  const statBytes = cap * STAT_FIELDS * 8;
  return {
    cachedStats: new Float64Array(buffer, 0, cap * STAT_FIELDS),
    stats: new Float64Array(buffer, statBytes, cap * STAT_FIELDS),
    cachedShas: new Uint8Array(buffer, 2 * statBytes, cap * 32),
    shas: new Uint8Array(buffer, 2 * statBytes + cap * 32, cap * 32),
    cachedHas: new Uint8Array(buffer, 2 * statBytes + cap * 64, cap),
    status: new Uint8Array(buffer, 2 * statBytes + cap * 65, cap),
  };
}

/**
 * How one thread reads files: made once (per thread, scan or batch) and used for every file, so
 * the hot loop allocates nothing per file.
 */
export interface FileReader {
  /** Hash what is read (else a stat only, STATUS.OK_STAT_ONLY). */
  readonly withDigest: boolean;
  /** This thread's read buffer: a file smaller than it is hashed in one read. */
  readonly buf: Buffer;
  /** This thread's stat calls (fast-stat.ts). */
  readonly fast: FastStat;
  /** Rows for the fstats before and after a read. */
  readonly before: Float64Array;
  readonly after: Float64Array;
}

export function fileReader(withDigest: boolean, buf: Buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES), fast: FastStat = fastStatHere()): FileReader {
  return { withDigest, buf, fast, before: new Float64Array(STAT_FIELDS), after: new Float64Array(STAT_FIELDS) };
}

/** A cached row to confirm by lstat alone: its stat, and whether it holds a digest. */
export interface CachedFile {
  stat: ArrayLike<number>;
  hasSha: boolean;
}

/** Result of `processFile` for one path. */
export interface FileOutcome {
  status: number;
  detail?: string;
  /** Set for OK_*: size, mtime ms, ctime ms, ino, dev, mode. */
  stat?: number[];
  /** 32-byte digest for OK_HASHED with digests on. */
  sha?: Buffer;
  /** Content as text, only when asked (for .gitignore files). */
  text?: string;
}

/**
 * Reads and hashes one regular file (as `reader` says), or confirms a `cached` record by lstat
 * alone; `wantText` also returns the content as text (a .gitignore's rules). Runs on the main
 * thread and in the workers (hash-worker.ts, verify-worker.ts) alike.
 *
 * Safety: open with O_NOFOLLOW (a file swapped for a link is not followed) and O_NONBLOCK (a
 * file swapped for a FIFO does not hang us); fstat before and after reading, and if size,
 * mtime or ctime moved, read again (3 attempts), then give up with UNSTABLE rather than record
 * a hash that matches no state of the file.
 */
export function processFile(reader: FileReader, abs: string, cached: CachedFile | null = null, wantText = false): FileOutcome {
  const { withDigest, buf, fast } = reader;
  if (!wantText && (cached !== null || !withDigest)) {
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(abs, { throwIfNoEntry: false });
    } catch (e) {
      return failure(e);
    }
    if (st === undefined) return { status: STATUS.VANISHED, detail: 'ENOENT' };
    if ((st.mode & S_IFMT) !== S_IFREG) return { status: STATUS.UNSTABLE, detail: 'no longer a regular file' };
    const r = [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.dev, st.mode];
    if (!withDigest) return { status: STATUS.OK_STAT_ONLY, stat: r };
    const c = cached?.stat;
    if (c !== undefined && cached!.hasSha && c[0] === r[0] && c[1] === r[1] && c[2] === r[2] && c[3] === r[3] && c[4] === r[4] && c[5] === r[5]) {
      return { status: STATUS.OK_CACHED, stat: r };
    }
  }

  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (e) {
      return failure(e);
    }
    try {
      const { before, after } = reader;
      fast.fstat(fd, before);
      if ((before[5]! & S_IFMT) !== S_IFREG) return { status: STATUS.NOT_REGULAR, detail: 'not a regular file when opened' };
      const size = before[0]!;
      let total = 0;
      let sha: Buffer;
      let text: string | undefined;
      if (size < buf.length) {
        // One-shot hash. Read the size fstat gave, no extra read to see EOF: a file that grew
        // or shrank meanwhile changes size/mtime, which the second fstat catches (then retry).
        while (total < size) {
          const n = fs.readSync(fd, buf, total, size - total, null);
          if (n === 0) break;
          total += n;
        }
        const view = buf.subarray(0, total);
        sha = crypto.hash('sha256', view, 'buffer');
        if (wantText) text = view.toString('utf8');
      } else {
        const h = crypto.createHash('sha256');
        const parts: Buffer[] = [];
        for (;;) {
          const n = fs.readSync(fd, buf, 0, buf.length, null);
          if (n === 0) break;
          total += n;
          h.update(buf.subarray(0, n));
          if (wantText) parts.push(Buffer.from(buf.subarray(0, n)));
        }
        sha = h.digest();
        if (wantText) text = Buffer.concat(parts).toString('utf8');
      }
      fast.fstat(fd, after);
      if (total === size && after[0] === before[0] && after[1] === before[1] && after[2] === before[2]) {
        const out: FileOutcome = { status: withDigest ? STATUS.OK_HASHED : STATUS.OK_STAT_ONLY, stat: [before[0]!, before[1]!, before[2]!, before[3]!, before[4]!, before[5]!] };
        if (withDigest) out.sha = sha;
        if (text !== undefined) out.text = text;
        return out;
      }
    } catch (e) {
      return failure(e);
    } finally {
      fs.closeSync(fd);
    }
  }
  return { status: STATUS.UNSTABLE, detail: 'changed while being read (3 attempts)' };
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;

/** A failed open, read or stat as a skip: vanished, replaced by a link mid-read (unstable), else unreadable. */
function failure(e: unknown): FileOutcome {
  const c = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  const code = typeof c === 'string' ? c : 'EIO';
  if (code === 'ENOENT' || code === 'ENOTDIR') return { status: STATUS.VANISHED, detail: code };
  // O_NOFOLLOW on a path that became a symlink gives ELOOP: the file changed under us.
  if (code === 'ELOOP') return { status: STATUS.UNSTABLE, detail: 'replaced by a symlink during the scan' };
  return { status: STATUS.UNREADABLE, detail: code };
}

/**
 * Processes one batch: reads the requests from `v`, writes the results into `v`, returns the
 * error details (null when every file succeeded). Run by the hash workers (hash-worker.ts) and
 * directly by the synchronous scanner, so both paths run the same code.
 */
export function runBatch(reader: FileReader, paths: readonly string[], v: BatchViews): (string | null)[] | null {
  let details: (string | null)[] | null = null;
  const cached: CachedFile = { stat: v.cachedStats, hasSha: false };
  for (let i = 0; i < paths.length; i++) {
    const has = v.cachedHas[i]!;
    if (has !== CACHED.NONE) {
      cached.stat = v.cachedStats.subarray(i * STAT_FIELDS, i * STAT_FIELDS + STAT_FIELDS);
      cached.hasSha = has === CACHED.STAT_AND_SHA;
    }
    const o = processFile(reader, paths[i]!, has === CACHED.NONE ? null : cached);
    v.status[i] = o.status;
    if (o.stat !== undefined) for (let k = 0; k < STAT_FIELDS; k++) v.stats[i * STAT_FIELDS + k] = o.stat[k] ?? 0;
    if (o.status === STATUS.OK_HASHED && o.sha !== undefined) v.shas.set(o.sha, i * 32);
    else if (o.status === STATUS.OK_CACHED) v.shas.set(v.cachedShas.subarray(i * 32, i * 32 + 32), i * 32);
    if (o.detail !== undefined) {
      if (details === null) details = new Array<string | null>(paths.length).fill(null);
      details[i] = o.detail;
    }
  }
  return details;
}
