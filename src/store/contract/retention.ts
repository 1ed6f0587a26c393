/** Retention rules shared by every backend's `prune`. */
import { SessionError } from './errors.js';
import type { PruneOptions } from './types.js';
import { inParallel } from './parallel.js';
import { uuidV7Timestamp } from './uuid.js';

/** Snapshots an age-based prune reads at once. */
const PRUNE_READS_IN_FLIGHT = 16;

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * The instant before which history is old: a Date, an ISO 8601 timestamp, or a duration back
 * from `now` such as `30m`, `12h`, `7d`, `2w`, `90s`.
 */
export function parseOlderThan(value: Date | string, now: number = Date.now()): number {
  if (value instanceof Date) {
    const t = value.getTime();
    if (Number.isNaN(t)) throw invalid(String(value));
    return t;
  }
  if (typeof value !== 'string') throw invalid(String(value));
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/.exec(value);
  if (m) return now - Number(m[1]) * UNIT_MS[m[2]!]!;
  // Only full dates count as ISO; Date.parse alone accepts too much ("1", "May").
  if (/^\d{4}-\d{2}-\d{2}/.test(value.trim())) {
    const t = Date.parse(value.trim());
    if (!Number.isNaN(t)) return t;
  }
  throw invalid(value);
}

function invalid(value: string): SessionError {
  return new SessionError(
    `olderThan '${value}' is not a duration or a date; use e.g. '30m', '12h', '7d', '2w' or an ISO 8601 time like '2026-01-31T00:00:00Z'`,
    { code: 'ERR_INVALID_OPTION' },
  );
}

export interface PrunePlan {
  keepLast: number | undefined;
  cutoff: number | undefined;
}

/** Validates prune options; at least one criterion is required so a bare prune never empties history. */
export function planPrune(options: PruneOptions, now: number = Date.now()): PrunePlan {
  const { keepLast, olderThan } = options;
  if (keepLast !== undefined && (!Number.isInteger(keepLast) || keepLast < 0)) {
    throw new SessionError(`keepLast must be a whole number >= 0, got ${String(keepLast)}`, { code: 'ERR_INVALID_OPTION' });
  }
  const cutoff = olderThan === undefined ? undefined : parseOlderThan(olderThan, now);
  if (keepLast === undefined && cutoff === undefined) {
    throw new SessionError('prune needs keepLast and/or olderThan; nothing was deleted', { code: 'ERR_INVALID_OPTION' });
  }
  return { keepLast, cutoff };
}

/** When a snapshot was made: its `createdAt`, else the timestamp inside a UUID v7 id, else unknown. */
export function snapshotTime(id: string, createdAt: string | undefined): number | undefined {
  if (createdAt !== undefined) {
    const t = Date.parse(createdAt);
    if (!Number.isNaN(t)) return t;
  }
  return uuidV7Timestamp(id);
}

/**
 * The ids a prune deletes, oldest first: with both criteria a snapshot goes only if it is
 * outside the newest `keepLast` AND older than the cutoff (restic's "keep if any rule keeps
 * it"), its time being its own createdAt, else its id's; a snapshot whose time cannot be told
 * is kept by the age rule. createdAt is read for up to `width` snapshots at once: on object
 * storage each read is a round trip, one at a time was the cost of an age-based prune.
 */
export async function selectPrunable(sortedIds: readonly string[], plan: PrunePlan, createdAtOf: (id: string) => Promise<string | undefined>, width = PRUNE_READS_IN_FLIGHT): Promise<string[]> {
  const protectedFrom = plan.keepLast === undefined ? sortedIds.length : Math.max(0, sortedIds.length - plan.keepLast);
  const candidates = sortedIds.slice(0, protectedFrom);
  const cutoff = plan.cutoff;
  if (cutoff === undefined) return candidates;
  const times = new Array<number | undefined>(candidates.length);
  await inParallel(candidates.length, width, async (i) => {
    const id = candidates[i]!;
    times[i] = snapshotTime(id, await createdAtOf(id));
  });
  return candidates.filter((_, i) => times[i] !== undefined && times[i] < cutoff);
}
