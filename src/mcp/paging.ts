/**
 * Results an agent can afford. A tool that can return a list of unbounded length (paths,
 * iterations, restore changes, a stored document's text) returns one page of it: at most `limit`
 * items and at most PAGE_CHARS characters of them as JSON, the total, the count of the rest and a
 * cursor for the next page (the index of its first item, as a decimal string). Everything else in
 * a result is a fixed set of counts or a capped list, so a whole result stays under RESULT_BOUND
 * characters of JSON whatever the size of the tree; each tool's description states its bound.
 */
import { CairnError } from '../core/errors.js';

/** Most characters of items (as JSON) in one page. */
export const PAGE_CHARS = 32 * 1024;
/** What every paged tool's whole result stays under, as JSON text (its description says so). */
export const RESULT_BOUND = 64 * 1024;
/** Short lists shown whole up to this many entries, then cut with a count (commits, failing tests). */
export const SHORT_LIST = 20;

export interface Page<T> {
  items: T[];
  total: number;
  remaining: number;
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** The index a cursor names; a cursor no tool gave is refused with what to do instead. */
export function cursorStart(cursor: string | undefined, total: number): number {
  if (cursor === undefined) return 0;
  if (!/^\d{1,9}$/.test(cursor) || Number(cursor) > total) {
    throw new CairnError('ERR_INVALID_OPTION', `cursor ${JSON.stringify(cursor)} is not one this tool gave; pass the nextCursor of the previous page, or omit it for the first page`);
  }
  return Number(cursor);
}

/** One page of `items` from `cursor`: at most `limit` of them and PAGE_CHARS of their JSON (always at least one). */
export function pageOf<T>(items: readonly T[], cursor: string | undefined, limit: number, maxChars = PAGE_CHARS): Page<T> {
  const start = cursorStart(cursor, items.length);
  let end = start;
  let chars = 0;
  while (end < items.length && end - start < limit) {
    const size = JSON.stringify(items[end]).length + 1;
    if (end > start && chars + size > maxChars) break;
    chars += size;
    end++;
  }
  return { items: items.slice(start, end), total: items.length, remaining: items.length - end, nextCursor: end < items.length ? String(end) : null };
}

/** A list cut to its first SHORT_LIST entries, with its full length. */
export function shortList<T>(items: readonly T[] | undefined, max = SHORT_LIST): { items: T[]; total: number } {
  const all = items ?? [];
  return { items: all.slice(0, max), total: all.length };
}

/** A string cut to `max` characters with an ellipsis (messages, subjects). */
export function clip(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
