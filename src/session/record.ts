/**
 * The iteration record `{pre, post, diff}` as a snapshot-store document, so a finished iteration
 * outlives its directory and can be listed, shown and pruned with `cairn store …`.
 *
 * Location: `{sessionId, scope: 'agent', scopeId: 'iterations'}`; each record is saved as an
 * immutable history snapshot (id `uuidV7()`) and then as the latest.
 */
import type { JSONValue, ManagedSnapshotStorage, Snapshot, SnapshotLocation, SnapshotStorage } from '../store/types.js';
// The modules themselves, not the store's index: the CLI loads this at start-up (DEFAULT_SESSION_ID).
import { SNAPSHOT_SCHEMA_VERSION } from '../store/types.js';
import { uuidV7 } from '../store/uuid.js';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from './types.js';

export const ITERATION_SCOPE_ID = 'iterations';
export const DEFAULT_SESSION_ID = 'default';
export const ITERATION_RECORD_KIND = 'cairn.iteration/v1';

export interface IterationRecord {
  iterationDir: string;
  pre: PreSnapshot;
  post: PostSnapshot;
  diff: SnapshotDiff;
  /**
   * The review computed at post (`src/review/summary.ts`): the summary `session list` shows, the
   * per-file status and +/− counts, and the patch up to a bound (marked `cut` when over), so a
   * reader of the store on another machine sees the same report.
   */
  review?: unknown;
}

export function iterationLocation(sessionId: string = DEFAULT_SESSION_ID): SnapshotLocation {
  return { sessionId, scope: 'agent', scopeId: ITERATION_SCOPE_ID };
}

/** JSON round trip: drops `undefined`, and gives the store plain JSON values. */
function toJson(value: unknown): JSONValue {
  return JSON.parse(JSON.stringify(value)) as JSONValue;
}

/** `data.summary` (what store listings show) and `data.review` (files, patch), the summary kept once. */
function reviewFields(review: unknown): { summary?: JSONValue; review?: JSONValue } {
  if (typeof review !== 'object' || review === null) return {};
  const { summary, ...rest } = review as { summary?: unknown };
  return { summary: toJson(summary ?? null), review: toJson(rest) };
}

export function iterationSnapshot(record: IterationRecord): Snapshot {
  return {
    scope: 'agent',
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    createdAt: record.post.timestamp,
    data: {
      kind: ITERATION_RECORD_KIND,
      iterationDir: record.iterationDir,
      pre: toJson(record.pre),
      post: toJson(record.post),
      diff: toJson(record.diff),
      ...reviewFields(record.review),
    },
    appData: {},
  };
}

/** Saves the record as history (new UUIDv7) first, then as latest; returns the history id. */
export async function saveIterationRecord(storage: SnapshotStorage | ManagedSnapshotStorage, record: IterationRecord, sessionId: string = DEFAULT_SESSION_ID): Promise<{ location: SnapshotLocation; snapshotId: string }> {
  const location = iterationLocation(sessionId);
  const snapshot = iterationSnapshot(record);
  const snapshotId = uuidV7();
  await storage.saveSnapshot({ location, snapshotId, isLatest: false, snapshot });
  await storage.saveSnapshot({ location, snapshotId, isLatest: true, snapshot });
  return { location, snapshotId };
}
