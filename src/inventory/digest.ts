import { createHash, hash } from 'node:crypto';
import type { RepoSnapshotBody, RepoSnapshotEntry } from './types.js';

/**
 * Every key that can occur in a body, in UTF-16 order. With this replacer list JSON.stringify
 * emits each object's keys in that order, and for this schema (strings, booleans, safe
 * integers) its output IS the RFC 8785 form: the digest needs no general canonicalizer on the
 * hot path (tests cross-check against the `canonicalize` reference implementation).
 */
const BODY_KEYS_SORTED = ['bytes', 'counts', 'files', 'kind', 'mode', 'path', 'sha256', 'truncated'];

/**
 * The body this one was made from by adding, removing or re-reading entries: `oldIndex[k]` is
 * the index, in the body whose digest is `digest`, of an entry equal to entry k of this one, or
 * -1 (new, or read again). The render memo of that body then holds every run of entries that
 * came through unchanged, already rendered.
 */
export interface RenderBasis {
  digest: string;
  oldIndex: Int32Array;
}

/**
 * What a scan knows of the body it returned, handed on explicitly: from the scan
 * (`scanForSnapshot`) to the document (`makeRepoSnapshot`: its digest, so a warm snapshot is
 * not re-serialised) and to the CLI's rendering (`writeRepoSnapshot`: the render memo, how the
 * body came from the memo's, the memo's bytes already being read). It describes one frozen file
 * list: given with any other body (another list, other counts, an extra key), it is ignored.
 */
export interface ScannedBody {
  /** The scan's frozen file list, which these facts are about. */
  readonly files: readonly RepoSnapshotEntry[];
  readonly digest: string;
  readonly bytes: number;
  readonly truncated: boolean;
  /** Where the scan's cache keeps the last rendering of such a document (see memo/render.ts). */
  readonly renderMemo: string | undefined;
  readonly basis: RenderBasis | undefined;
  /** The render memo's bytes, being read since the scan saw the tree change (see takeRenderRead). */
  renderRead: Promise<Buffer | null> | undefined;
  /** Entries the scan's memos are made in pieces of (ScanTuning.pieceEntries): the rendering's too. */
  readonly pieceEntries: number;
}

/** What a scan knows of the body it returned, for scannedBody. */
export interface BodyFacts {
  bytes: number;
  digest: string;
  truncated?: boolean;
  renderMemo?: string | undefined;
  basis?: RenderBasis | undefined;
  /** The render memo, already being read (see prefetchFile). */
  renderRead?: Promise<Buffer | null> | undefined;
  /** Default PIECE_ENTRIES. */
  pieceEntries?: number;
}

/**
 * The handle of the body `{ files, truncated, counts: { files: files.length, bytes } }`. `files`
 * is frozen here (entries included): the facts must stay true of the list they travel with.
 */
export function scannedBody(files: RepoSnapshotEntry[], facts: BodyFacts): ScannedBody {
  const { bytes, digest, truncated = false, renderMemo, basis, renderRead, pieceEntries = PIECE_ENTRIES } = facts;
  return { files: freezeFiles(files), digest, bytes, truncated, renderMemo, basis, renderRead, pieceEntries };
}

/** The handle when it describes exactly this body, else undefined. */
export function scannedFacts(body: RepoSnapshotBody, scanned: ScannedBody | undefined): ScannedBody | undefined {
  if (scanned === undefined || scanned.files !== body.files) return undefined;
  const exact = body.truncated === scanned.truncated && body.counts.files === body.files.length && body.counts.bytes === scanned.bytes && Object.keys(body).length === 3 && Object.keys(body.counts).length === 2;
  return exact ? scanned : undefined;
}

/** The render memo's bytes the scan started reading, handed out once (later renders read the memo as it then is). */
export function takeRenderRead(scanned: ScannedBody): Promise<Buffer | null> | undefined {
  const read = scanned.renderRead;
  scanned.renderRead = undefined;
  return read;
}

/** Freezes a result's file list (and its entries), so a digest noted for it stays true. */
export function freezeFiles(files: RepoSnapshotEntry[]): readonly RepoSnapshotEntry[] {
  if (Object.isFrozen(files)) return files; // frozen here already, entries first (~4 ms a pass on 76k)
  for (const f of files) Object.freeze(f);
  return Object.freeze(files);
}

/** RFC 8785 canonical JSON of a RepoSnapshot body. */
export function canonicalBody(body: RepoSnapshotBody): string {
  return JSON.stringify(body, BODY_KEYS_SORTED);
}

/** The digest of the body of these files (untruncated unless said), computed here (no memo lookup), `pieceEntries` at a time. */
export function computeDigestOf(files: readonly RepoSnapshotEntry[], bytes: number, truncated = false, pieceEntries = PIECE_ENTRIES): string {
  return digestInPieces({ files: files as RepoSnapshotEntry[], truncated, counts: { files: files.length, bytes } }, pieceEntries);
}

/** Any character outside ASCII (a regex scan is the cheapest test V8 offers: ~0.1 ms a MB). */
export const NON_ASCII = /[^\0-\x7f]/;

/** `text` as UTF-8 bytes; all-ASCII text (the usual case) as latin1: the same bytes, a plain copy, several times faster. */
export function textBytes(text: string): Buffer {
  return Buffer.from(text, NON_ASCII.test(text) ? 'utf8' : 'latin1');
}

/**
 * Entries serialised at a time, by the digest, its memo and the rendering (the default of
 * ScanTuning.pieceEntries): the canonical text of a 100k-file body is never held whole.
 */
export const PIECE_ENTRIES = 4096;

/**
 * sha256 of canonicalBody(body), fed to the hash in pieces of `pieceEntries` entries (the same
 * bytes: `{"counts":…,"files":[…],"truncated":…}` with each piece's entries as JSON.stringify
 * gives them), so memory stays flat however many files there are.
 */
function digestInPieces(body: RepoSnapshotBody, pieceEntries = PIECE_ENTRIES): string {
  const h = createHash('sha256');
  h.update(canonicalHead(body.counts));
  const files = body.files;
  for (let i = 0; i < files.length; i += pieceEntries) {
    if (i > 0) h.update(',');
    h.update(canonicalEntries(files, i, Math.min(files.length, i + pieceEntries)));
  }
  h.update(canonicalTail(body.truncated));
  return `sha256:${h.digest('hex')}`;
}

/** The canonical body's text before its entries. */
export function canonicalHead(counts: RepoSnapshotBody['counts']): string {
  return `{"counts":${JSON.stringify(counts, BODY_KEYS_SORTED)},"files":[`;
}

/** The canonical body's text after its entries. */
export function canonicalTail(truncated: boolean): string {
  return `],"truncated":${JSON.stringify(truncated)}}`;
}

/** Entries [from, to) in canonical form, separated by commas, as UTF-8 bytes. */
export function canonicalEntries(files: readonly RepoSnapshotEntry[], from: number, to: number): Buffer {
  return textBytes(JSON.stringify(files.slice(from, to), BODY_KEYS_SORTED).slice(1, -1));
}

/** A body with exactly the schema's keys, which digestInPieces reproduces byte for byte. */
function plainBody(body: RepoSnapshotBody): boolean {
  const keys = Object.keys(body);
  return keys.length === 3 && 'files' in body && 'truncated' in body && 'counts' in body && Array.isArray(body.files) && typeof body.truncated === 'boolean' && typeof body.counts === 'object' && body.counts !== null;
}

/** `sha256:` + hex sha256 of the canonical body — the seed's `snapshotDigest` (the scan's, when its handle describes this body). */
export function snapshotDigestOf(body: RepoSnapshotBody, scanned?: ScannedBody): string {
  const known = scannedFacts(body, scanned);
  if (known !== undefined) return known.digest;
  if (plainBody(body)) return digestInPieces(body);
  return `sha256:${hash('sha256', canonicalBody(body), 'hex')}`;
}
