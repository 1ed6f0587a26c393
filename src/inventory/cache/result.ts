/**
 * The stored result: what the last whole scan of a root returned, kept in its stat cache (the
 * result JSON behind a key line, see FORMATS.md) so that the next scan can hand it back when
 * nothing it depended on changed (fastpath/). Its entries are rows of the cache's file table;
 * a symlink entry is LINK_ROW | its index in `links`.
 */
import type { SkippedEntry } from '../types.js';

/** What the stored result keeps besides its entry rows. */
export interface StoredResult {
  skipped: SkippedEntry[];
  /** Per symlink entry (entry row LINK_ROW | i): its path and the file-table key and row of its target (null, -1: bytes 0, no digest). */
  links: [path: string, target: string | null, targetRow: number][];
  /** The snapshotDigest of these entries as a body, when the scan that stored them knew it. */
  digest?: string;
  /**
   * Set when the result was cut by the budget (a prefix of the tree): at maxFiles, or at the
   * first entry over maxBytes. It stays valid only while no directory or ignore rule changed
   * and, for a cut by bytes, no file changed size (the cut would move).
   */
  cut?: 'files' | 'bytes';
}

/** Entry-row bit marking a symlink entry; the low bits index `StoredResult.links`. */
export const LINK_ROW = 0x80000000;

export function sameRows(a: Uint32Array | undefined, b: Uint32Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
