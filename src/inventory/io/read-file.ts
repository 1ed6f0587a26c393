import type * as FsModule from 'node:fs';
import type * as CryptoModule from 'node:crypto';
import type { FastStat } from './fast-stat.js';

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

/** Views over a slot buffer. Self-contained: also shipped to workers as text. */
export function batchViews(buffer: ArrayBufferLike, cap: number): BatchViews {
  return {
    cachedStats: new Float64Array(buffer, 0, cap * 6),
    stats: new Float64Array(buffer, cap * 48, cap * 6),
    cachedShas: new Uint8Array(buffer, cap * 96, cap * 32),
    shas: new Uint8Array(buffer, cap * 128, cap * 32),
    cachedHas: new Uint8Array(buffer, cap * 160, cap),
    status: new Uint8Array(buffer, cap * 161, cap),
  };
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
 * Reads and hashes one regular file, or confirms a cached record by lstat alone.
 *
 * Runs in hash workers AND on the main thread: it is shipped to workers as source text
 * (`processFile.toString()`), so it must stay self-contained — nothing from outside its body;
 * modules come in as parameters.
 *
 * Safety: open with O_NOFOLLOW (a file swapped for a link is not followed) and O_NONBLOCK (a
 * file swapped for a FIFO does not hang us); fstat before and after reading, and if size,
 * mtime or ctime moved, read again (3 attempts), then give up with UNSTABLE rather than record
 * a hash that matches no state of the file.
 */
export function processFile(
  fs: typeof FsModule,
  crypto: typeof CryptoModule,
  abs: string,
  cachedStat: ArrayLike<number> | null,
  cachedHasSha: boolean,
  withDigest: boolean,
  buf: Buffer,
  wantText: boolean,
  /** This thread's stat calls (fast-stat.ts: makeFastStat). */
  fast: FastStat,
  /** Rows for the two fstats: a batch passes one pair for all its files (no allocation per file). */
  rows: { before: Float64Array; after: Float64Array } = { before: new Float64Array(6), after: new Float64Array(6) },
): FileOutcome {
  const failure = (e: unknown): FileOutcome => {
    const c = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
    const code = typeof c === 'string' ? c : 'EIO';
    if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 3, detail: code };
    // O_NOFOLLOW on a path that became a symlink gives ELOOP: the file changed under us.
    if (code === 'ELOOP') return { status: 5, detail: 'replaced by a symlink during the scan' };
    return { status: 4, detail: code };
  };
  const S_IFMT = 0o170000;
  const S_IFREG = 0o100000;

  if (!wantText && (cachedStat !== null || !withDigest)) {
    let st: FsModule.Stats | undefined;
    try {
      st = fs.lstatSync(abs, { throwIfNoEntry: false });
    } catch (e) {
      return failure(e);
    }
    if (st === undefined) return { status: 3, detail: 'ENOENT' };
    if ((st.mode & S_IFMT) !== S_IFREG) return { status: 5, detail: 'no longer a regular file' };
    const r = [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.dev, st.mode];
    if (!withDigest) return { status: 2, stat: r };
    const c = cachedStat;
    if (c !== null && cachedHasSha && c[0] === r[0] && c[1] === r[1] && c[2] === r[2] && c[3] === r[3] && c[4] === r[4] && c[5] === r[5]) {
      return { status: 1, stat: r };
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
      const { before, after } = rows;
      fast.fstat(fd, before);
      if ((before[5]! & S_IFMT) !== S_IFREG) return { status: 6, detail: 'not a regular file when opened' };
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
        const out: FileOutcome = { status: withDigest ? 0 : 2, stat: [before[0]!, before[1]!, before[2]!, before[3]!, before[4]!, before[5]!] };
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
  return { status: 5, detail: 'changed while being read (3 attempts)' };
}

/**
 * Processes one batch: reads the requests from `v`, writes the results into `v`, returns the
 * error details (null when every file succeeded). Shipped to workers as text next to
 * `processFile` (which it calls by name) and called directly by the synchronous scanner, so
 * both paths run the same code.
 */
export function runBatch(fs: typeof FsModule, crypto: typeof CryptoModule, buf: Buffer, paths: readonly string[], v: BatchViews, withDigest: boolean, fast: FastStat): (string | null)[] | null {
  let details: (string | null)[] | null = null;
  const rows = { before: new Float64Array(6), after: new Float64Array(6) };
  for (let i = 0; i < paths.length; i++) {
    const has = v.cachedHas[i]!;
    const cached = has === 0 ? null : v.cachedStats.subarray(i * 6, i * 6 + 6);
    const o = processFile(fs, crypto, paths[i]!, cached, has === 2, withDigest, buf, false, fast, rows);
    v.status[i] = o.status;
    if (o.stat !== undefined) for (let k = 0; k < 6; k++) v.stats[i * 6 + k] = o.stat[k] ?? 0;
    if (o.status === 0 && o.sha !== undefined) v.shas.set(o.sha, i * 32);
    else if (o.status === 1) v.shas.set(v.cachedShas.subarray(i * 32, i * 32 + 32), i * 32);
    if (o.detail !== undefined) {
      if (details === null) details = new Array<string | null>(paths.length).fill(null);
      details[i] = o.detail;
    }
  }
  return details;
}
