import * as fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { writeFileAtomicSync } from '../core/atomic-write.js';
import { renderMemoOf, snapshotDigestOf } from './digest.js';
import type { RepoSnapshot } from './types.js';

/** First line of a render memo: this tag, the document's snapshotDigest, the CRC-32 of the text after the line. */
const MEMO_TAG = 'cairn-render 2';

/**
 * The CLI's text of a RepoSnapshot, `JSON.stringify(doc, null, 2)` plus a newline, as bytes.
 *
 * Warm snapshots of an unchanged tree are the common case, and the document is a pure function
 * of its body, which the snapshotDigest identifies. So for a document exactly as the scanner
 * and makeRepoSnapshot built it, the last rendering is kept beside the stat cache (a "render
 * memo") and reused when the digest matches: no 15 MB stringify and encode for a 76k-file tree.
 * The memo is checked against its CRC-32 before use (a private cache, like the stat cache: the
 * check is for torn or damaged files), so a damaged one is rendered again.
 */
export function renderRepoSnapshot(snapshot: RepoSnapshot): Buffer {
  // The memo first: only a scanner's own body has one, and then its digest is known (no hashing here).
  const known = renderMemoOf(snapshot.body);
  const memo = known !== undefined && engineDocument(snapshot) ? known : undefined;
  if (memo !== undefined) {
    const hit = readMemo(memo, snapshot.snapshotDigest);
    if (hit !== null) return hit;
  }
  const text = `${JSON.stringify(snapshot, null, 2)}\n`;
  // All-ASCII text (the usual case) encodes as latin1: a plain copy, several times faster than UTF-8.
  const bytes = Buffer.byteLength(text, 'utf8') === text.length ? Buffer.from(text, 'latin1') : Buffer.from(text, 'utf8');
  if (memo !== undefined) writeMemo(memo, snapshot.snapshotDigest, bytes);
  return bytes;
}

/** Exactly makeRepoSnapshot's shape and key order, with the digest its body really has. */
function engineDocument(s: RepoSnapshot): boolean {
  const keys = Object.keys(s);
  return (
    keys.length === 5 &&
    keys[0] === 'apiVersion' &&
    keys[1] === 'kind' &&
    keys[2] === 'root' &&
    keys[3] === 'snapshotDigest' &&
    keys[4] === 'body' &&
    s.apiVersion === 'axiom.dev/v2' &&
    s.kind === 'RepoSnapshot' &&
    Object.keys(s.root).length === 1 &&
    s.root.kind === 'relative' &&
    Object.keys(s.body).join() === 'files,truncated,counts' &&
    Object.keys(s.body.counts).join() === 'files,bytes' &&
    snapshotDigestOf(s.body) === s.snapshotDigest
  );
}

function readMemo(file: string, digest: string): Buffer | null {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return null;
  }
  const nl = buf.indexOf(0x0a);
  if (nl < 0 || nl > 200) return null;
  const head = buf.subarray(0, nl).toString('latin1').split(' ');
  const text = buf.subarray(nl + 1);
  if (`${head[0]} ${head[1]}` !== MEMO_TAG || head[2] !== digest || head[3] !== String(crc32(text))) return null;
  return text;
}

function writeMemo(file: string, digest: string, bytes: Buffer): void {
  const head = Buffer.from(`${MEMO_TAG} ${digest} ${crc32(bytes)}\n`, 'latin1');
  try {
    // A cache: no fsync (a lost or torn memo fails its checksum and is re-rendered); 0600 like the stat cache.
    writeFileAtomicSync(file, Buffer.concat([head, bytes]), { fsync: false, mode: 0o600 });
  } catch {
    // Not saved: the next run renders again.
  }
}
