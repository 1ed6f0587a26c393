/**
 * Blob ids from git's index file, read here without a git process: a hint for post's pre side.
 *
 * Post reads the pre bytes of the paths an iteration changed from git. Named `<commit>:<path>`,
 * git walks the commit's trees for every path (~30 µs a path on a packed 50k-file repository,
 * ~130 µs where recent commits are loose objects); named by blob id, it reads the blob alone.
 * While an agent has not staged or committed a file, the index still holds the blob the pre
 * commit had for it: the id is there, in a file of ~130 bytes an entry.
 *
 * Nothing read here is trusted. An id only says which blob to try first: its bytes are kept
 * only if their sha256 is the pre inventory's (capture.ts), and every path without a fitting id
 * is read from the commit as before. So an index of another repository, a damaged one or one
 * being rewritten costs a second read, never a wrong byte. Only plain index files (versions 2
 * and 3) are read: a version 4 index (prefix-compressed names) or a split index gives no ids.
 *
 * The same file also says which directories are gitlinks (submodules): pre must copy the files
 * below them, which no blob of this repository holds (gitlinksInIndex). There a miss would lose
 * bytes, so an index not read exactly is no answer, and git is asked.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readFileWithin } from '../core/contained-dir.js';

/** Index bytes worth reading per path looked up (a tree walk costs ~30 µs; reading and scanning the index ~1 ns a byte). */
const INDEX_BYTES_PER_PATH = 32 * 1024;
/** A `.git` file (`gitdir: …`) larger than this is not one git wrote. */
const GITFILE_MAX_BYTES = 4096;
const CONFIG_MAX_BYTES = 1 << 20;
// The index's layout (versions 2 and 3), shared with daemon/index-names.ts.
export const HEADER_BYTES = 12;
/** An entry: ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each), the object id, 2 bytes of flags, the name. */
export const ENTRY_STAT_BYTES = 40;
export const MODE_AT = 24;
const SIZE_AT = 36;
export const GITLINK_MODE = 0o160000;
/** Regular file, executable, symlink, gitlink (a sparse directory, 040000, is none of them). */
export const FILE_MODES: ReadonlySet<number> = new Set([0o100644, 0o100755, 0o120000, GITLINK_MODE]);
export const FLAG_EXTENDED = 0x4000;
export const NAME_MASK = 0x0fff;

export interface IndexWanted {
  /** POSIX, relative to the root. */
  path: string;
  /** The size the file had on disk when the id should be its content (the index records the size at staging). */
  bytes: number;
}

/** Where git keeps the repository of `root`: its git dir and the top of its work tree, or null. */
function findRepository(root: string): { gitDir: string; top: string } | null {
  for (let dir = path.resolve(root); ; ) {
    const dotGit = path.join(dir, '.git');
    const st = fs.lstatSync(dotGit, { throwIfNoEntry: false });
    if (st?.isDirectory()) return { gitDir: dotGit, top: dir };
    if (st?.isFile()) {
      // A linked work tree or a submodule: `gitdir: <path>`, relative to the file's directory.
      const m = /^gitdir: (.+?)\r?\n?$/.exec(readRegularFile(dotGit, GITFILE_MAX_BYTES)?.toString('utf8') ?? '');
      return m === null ? null : { gitDir: path.resolve(dir, m[1]!), top: dir };
    }
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** The length of the repository's object ids: 32 bytes under `objectformat = sha256`, else 20. */
export function indexIdBytes(gitDir: string): number {
  const commondir = readRegularFile(path.join(gitDir, 'commondir'), GITFILE_MAX_BYTES);
  const common = commondir === null ? gitDir : path.resolve(gitDir, commondir.toString('utf8').trim());
  const config = readRegularFile(path.join(common, 'config'), CONFIG_MAX_BYTES)?.toString('utf8') ?? '';
  return /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? 32 : 20;
}

/**
 * A regular file's bytes when it is no larger than `maxBytes`, else null: read as cairn reads its
 * own files (core/contained-dir.ts: non-blocking, so a FIFO planted there is not waited on; no
 * link followed at its name, since git writes these files itself, never as links).
 */
function readRegularFile(file: string, maxBytes: number): Buffer | null {
  try {
    return readFileWithin(file, undefined, { maxBytes });
  } catch {
    return null; // a link, not a regular file, too big: no hint
  }
}

/**
 * The blob id (hex) the index holds at stage 0 for each wanted path whose recorded size is
 * `bytes` (a staged or committed change recorded another size: its id would be the new content).
 * Paths it cannot vouch for are absent; an empty map when the index is not worth reading for so
 * few paths, or not a plain one.
 *
 * The entries are not decoded one by one (50k entries cost a fresh process ~8 ms in JavaScript):
 * the index lists names in byte order, so the wanted names, sorted the same way, are searched for
 * in turn (a native search, each from where the last one was found) and a match is taken only
 * where an entry's name lies: its length in the flags before it, a NUL after it, the entry's
 * place on the 8-byte grid, a file mode in its stat data.
 */
export function blobIdsInIndex(root: string, wanted: readonly IndexWanted[]): Map<string, string> {
  const out = new Map<string, string>();
  if (wanted.length === 0) return out;
  let repo: { gitDir: string; top: string } | null;
  try {
    repo = findRepository(root);
  } catch {
    return out;
  }
  if (repo === null) return out;
  const rel = path.relative(repo.top, path.resolve(root));
  if (rel.startsWith('..') || path.isAbsolute(rel)) return out;
  const prefix = rel === '' ? '' : `${rel.split(path.sep).join('/')}/`;
  const buf = readRegularFile(path.join(repo.gitDir, 'index'), wanted.length * INDEX_BYTES_PER_PATH);
  if (buf === null || buf.length < HEADER_BYTES || buf.toString('latin1', 0, 4) !== 'DIRC') return out;
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) return out;
  const idLength = indexIdBytes(repo.gitDir);
  // Names as the index spells them (from the top of the work tree), with the NUL that ends each
  // one there: sorted, they come in the index's order (NUL sorts before every other byte).
  const keys = wanted.map((w) => ({ w, key: Buffer.from(`${prefix}${w.path}\0`, 'utf8') })).sort((a, b) => Buffer.compare(a.key, b.key));
  // A name missing from the index is searched for to the end: past this many bytes, no more hints.
  let budget = 3 * buf.length;
  let from = HEADER_BYTES;
  for (const { w, key } of keys) {
    if (budget < 0) break;
    let found = false;
    for (let at = buf.indexOf(key, from); at >= 0; at = buf.indexOf(key, at + 1)) {
      const entry = entryNamed(buf, at, key.length - 1, idLength);
      if (entry < 0) continue;
      found = true;
      budget -= at + key.length - from;
      from = at + key.length;
      const flags = buf.readUInt16BE(entry + ENTRY_STAT_BYTES + idLength);
      // Stage 0 only (1-3: a conflict, no single blob); the size field holds the low 32 bits of
      // the file's size when the entry was last refreshed.
      if (((flags >> 12) & 3) === 0 && buf.readUInt32BE(entry + SIZE_AT) === w.bytes % 2 ** 32) {
        out.set(w.path, buf.toString('hex', entry + ENTRY_STAT_BYTES, entry + ENTRY_STAT_BYTES + idLength));
      }
      break;
    }
    if (!found) budget -= buf.length - from;
  }
  return out;
}

/**
 * The offset of the entry whose name (of `length` bytes) starts at `at`, or -1 when no entry's
 * name starts there: the flags before it (or the extended flags, version 3) must give that
 * length, the entry must start on the index's 8-byte grid, and its mode must be a file's.
 */
function entryNamed(buf: Buffer, at: number, length: number, idLength: number): number {
  for (const extended of [false, true]) {
    const flagsAt = at - 2 - (extended ? 2 : 0);
    const entry = flagsAt - idLength - ENTRY_STAT_BYTES;
    if (entry < HEADER_BYTES || (entry - HEADER_BYTES) % 8 !== 0) continue;
    const flags = buf.readUInt16BE(flagsAt);
    if (((flags & FLAG_EXTENDED) !== 0) !== extended) continue;
    if ((flags & NAME_MASK) !== Math.min(length, NAME_MASK)) continue;
    if (!FILE_MODES.has(buf.readUInt32BE(entry + MODE_AT))) continue;
    return entry;
  }
  return -1;
}

/** An index larger than this is not read here (git is asked instead). */
const GITLINK_INDEX_MAX_BYTES = 2 ** 31 - 1;
/** The low half of a gitlink's mode as the index stores it (32 bits, big-endian: `00 00 e0 00`). */
const GITLINK_MODE_LOW = Buffer.from([0xe0, 0]);

/** The last answer of gitlinksInIndex, by the index file's identity: a resident process reads an unchanged index once. */
let gitlinksMemo: { key: string; links: string[] } | null = null;

/** The identity of the file at `file` (no link followed), or null when there is none or it is no regular file. */
function fileKey(file: string): string | null {
  const st = fs.lstatSync(file, { bigint: true, throwIfNoEntry: false });
  return st?.isFile() === true ? `${file}\0${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : null;
}

/**
 * Whether a gitlink's mode occurs anywhere in the index's bytes (most indexes have none, and then
 * no entry needs decoding). Searched by its rare half, `e0 00` (~0.02 ms on a 4 MB index, where a
 * search for `00 00 e0 00` takes ~7 ms through the NULs), each hit checked for the `00 00` before it.
 */
function mayHoldGitlinks(buf: Buffer): boolean {
  for (let at = buf.indexOf(GITLINK_MODE_LOW, HEADER_BYTES + 2); at >= 0; at = buf.indexOf(GITLINK_MODE_LOW, at + 1)) {
    if (buf[at - 1] === 0 && buf[at - 2] === 0) return true;
  }
  return false;
}

/**
 * The gitlinks at or below `root` (submodules, and repositories `git add` took in whole), as
 * paths relative to it: directories whose files the outer repository's index and commits do not
 * hold (they hold one commit id of another repository). `[]` when there is no index; null when
 * the index cannot be read exactly here (a version 4 or split index, bytes that do not hold
 * together): the caller asks git. An index without a gitlink's mode anywhere in its bytes (most
 * of them) is not walked entry by entry; one read before, unchanged, is not read again.
 */
export function gitlinksInIndex(root: string): string[] | null {
  let repo: { gitDir: string; top: string } | null;
  try {
    repo = findRepository(root);
  } catch {
    return null;
  }
  if (repo === null) return [];
  const rel = path.relative(repo.top, path.resolve(root));
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const prefix = rel === '' ? '' : `${rel.split(path.sep).join('/')}/`;
  const file = path.join(repo.gitDir, 'index');
  let key: string | null;
  let buf: Buffer | null;
  let shared: boolean;
  try {
    // The identity is taken before the bytes: the answer kept is never older than its key says.
    key = fileKey(file);
    if (key !== null && gitlinksMemo?.key === key) return under(gitlinksMemo.links, prefix);
    buf = readFileWithin(file, undefined, { maxBytes: GITLINK_INDEX_MAX_BYTES });
    // A split index keeps most entries in `sharedindex.<id>`: not read here.
    shared = fs.readdirSync(repo.gitDir).some((name) => name.startsWith('sharedindex.'));
  } catch {
    return null;
  }
  if (buf === null) return [];
  if (shared || buf.length < HEADER_BYTES || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const links = mayHoldGitlinks(buf) ? gitlinkNames(buf, indexIdBytes(repo.gitDir)) : [];
  if (links === null) return null;
  if (key !== null) gitlinksMemo = { key, links };
  return under(links, prefix);
}

/** The names of `links` (from the top of the work tree) below `prefix`, made relative to it. */
function under(links: readonly string[], prefix: string): string[] {
  return links.filter((name) => name.startsWith(prefix)).map((name) => name.slice(prefix.length));
}

/** Every gitlink's name in a version 2 or 3 index, or null when the index is another version or its entries do not hold together. */
function gitlinkNames(buf: Buffer, idLength: number): string[] | null {
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) return null;
  const end = buf.length - idLength; // the trailing checksum
  const out: string[] = [];
  let at = HEADER_BYTES;
  for (let i = buf.readUInt32BE(8); i > 0; i--) {
    const flagsAt = at + ENTRY_STAT_BYTES + idLength;
    if (flagsAt + 2 > end) return null;
    const flags = buf.readUInt16BE(flagsAt);
    const nameAt = flagsAt + 2 + ((flags & FLAG_EXTENDED) !== 0 ? 2 : 0);
    const length = flags & NAME_MASK;
    const nameEnd = length < NAME_MASK ? nameAt + length : buf.indexOf(0, nameAt + NAME_MASK);
    if (nameEnd < nameAt || nameEnd >= end || buf[nameEnd] !== 0) return null;
    if (buf.readUInt32BE(at + MODE_AT) === GITLINK_MODE) out.push(buf.toString('utf8', nameAt, nameEnd));
    at += (nameEnd - at + 8) & ~7;
  }
  return out;
}
