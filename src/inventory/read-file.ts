import type * as FsModule from 'node:fs';
import type * as CryptoModule from 'node:crypto';

/**
 * Stat fields the cache trusts, as git does: a file whose size, mtime (ns), ctime (ns), inode,
 * device and mode all match was not rewritten since it was hashed.
 */
export type StatRow = [size: bigint, mtimeNs: bigint, ctimeNs: bigint, ino: bigint, dev: bigint, mode: bigint];

export interface CachedFile {
  stat: StatRow;
  /** Hex digest, or '' when the cached run had digests off. */
  sha: string;
}

export interface FileOutcome {
  /** undefined = ok; otherwise a SkipReason. */
  skip?: 'vanished' | 'unreadable' | 'unstable' | 'not-regular-file';
  detail?: string;
  bytes: number;
  /** Full st_mode. */
  mode: number;
  sha?: string;
  stat?: StatRow;
  /** True when the content was read (a cache miss). */
  hashed: boolean;
  /** Content as text, only when asked (used for .gitignore files). */
  text?: string;
}

/**
 * Reads and hashes one regular file, or confirms a cached digest by lstat.
 *
 * Runs in hash workers AND on the main thread (scanTreeSync, .gitignore files): it is shipped to
 * workers as source text (`processFile.toString()`), so it must stay self-contained — no
 * references to anything outside its own body; modules come in as parameters.
 *
 * Safety: open with O_NOFOLLOW (a file swapped for a link mid-scan is not followed), fstat
 * before and after reading; if size/mtime/ctime moved, read again (twice), then give up with
 * `unstable` rather than record a hash that matches no state of the file.
 */
export function processFile(
  fs: typeof FsModule,
  crypto: typeof CryptoModule,
  abs: string,
  cached: CachedFile | null,
  withDigest: boolean,
  buf: Buffer,
  wantText: boolean,
): FileOutcome {
  const errCode = (e: unknown): string => (typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : 'EIO');
  const failure = (e: unknown): FileOutcome => {
    const code = errCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { skip: 'vanished', detail: code, bytes: 0, mode: 0, hashed: false };
    // O_NOFOLLOW on a path that became a symlink gives ELOOP: the file changed under us.
    if (code === 'ELOOP') return { skip: 'unstable', detail: 'replaced by a symlink during the scan', bytes: 0, mode: 0, hashed: false };
    return { skip: 'unreadable', detail: code, bytes: 0, mode: 0, hashed: false };
  };
  const row = (st: FsModule.BigIntStats): [bigint, bigint, bigint, bigint, bigint, bigint] => [st.size, st.mtimeNs, st.ctimeNs, st.ino, st.dev, st.mode];
  const S_IFMT = 0o170000n;
  const S_IFREG = 0o100000n;

  if (!wantText && (cached !== null || !withDigest)) {
    let st: FsModule.BigIntStats | undefined;
    try {
      st = fs.lstatSync(abs, { bigint: true, throwIfNoEntry: false });
    } catch (e) {
      return failure(e);
    }
    if (st === undefined) return { skip: 'vanished', detail: 'ENOENT', bytes: 0, mode: 0, hashed: false };
    if ((st.mode & S_IFMT) !== S_IFREG) return { skip: 'unstable', detail: 'no longer a regular file', bytes: 0, mode: 0, hashed: false };
    const r = row(st);
    if (!withDigest) return { bytes: Number(st.size), mode: Number(st.mode), stat: r, hashed: false };
    const c = cached?.stat;
    if (c !== undefined && cached !== null && cached.sha !== '' && c[0] === r[0] && c[1] === r[1] && c[2] === r[2] && c[3] === r[3] && c[4] === r[4] && c[5] === r[5]) {
      return { bytes: Number(st.size), mode: Number(st.mode), sha: cached.sha, stat: r, hashed: false };
    }
  }

  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0));
    } catch (e) {
      return failure(e);
    }
    try {
      const before = fs.fstatSync(fd, { bigint: true });
      if ((before.mode & S_IFMT) !== S_IFREG) return { skip: 'not-regular-file', detail: 'not a regular file when opened', bytes: 0, mode: 0, hashed: false };
      const size = Number(before.size);
      let total = 0;
      let sha: string | undefined;
      let text: string | undefined;
      if (size < buf.length) {
        // One-shot: read to EOF (a file that grew past buf.length is caught by the fstat check).
        for (;;) {
          const n = fs.readSync(fd, buf, total, buf.length - total, null);
          if (n === 0) break;
          total += n;
          if (total === buf.length) break;
        }
        const view = buf.subarray(0, total);
        sha = crypto.hash('sha256', view, 'hex');
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
        sha = h.digest('hex');
        if (wantText) text = Buffer.concat(parts).toString('utf8');
      }
      const after = fs.fstatSync(fd, { bigint: true });
      if (total === size && after.size === before.size && after.mtimeNs === before.mtimeNs && after.ctimeNs === before.ctimeNs) {
        const out: FileOutcome = { bytes: size, mode: Number(before.mode), stat: row(before), hashed: true };
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
  return { skip: 'unstable', detail: 'changed while being read (3 attempts)', bytes: 0, mode: 0, hashed: false };
}
