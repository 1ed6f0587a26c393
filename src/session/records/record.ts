/**
 * The iteration record `{pre, post, diff}` as a snapshot-store document, so a finished iteration
 * outlives its directory and can be listed, shown and pruned with `cairn store …`.
 *
 * Location: `{sessionId, scope: 'agent', scopeId: 'iterations'}`; each record is saved as an
 * immutable history snapshot (id `uuidV7()`) and then as the latest.
 */
import type { JSONValue, ManagedSnapshotStorage, Snapshot, SnapshotLocation, SnapshotStorage } from '../../store/contract/types.js';
// The modules themselves, not the store's index: the CLI loads this at start-up (DEFAULT_SESSION_ID).
import { SNAPSHOT_SCHEMA_VERSION } from '../../store/contract/types.js';
import { uuidV7 } from '../../store/contract/uuid.js';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from '../types.js';

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
  /** The agent turn this iteration was (recorded by `cairn hook <agent>`): its session id and transcript. */
  agent?: { name: string; sessionId: string; transcriptPath?: string };
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
      ...(record.agent === undefined ? {} : { agent: toJson(record.agent) }),
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

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The review's summary (files, +/− lines, commits, tests), when the record carries one. */
function reviewSummaryLine(summary: unknown): string | null {
  if (typeof summary !== 'object' || summary === null) return null;
  const s = summary as { filesChanged?: unknown; additions?: unknown; deletions?: unknown; commits?: unknown; tests?: { passed?: number; failed?: number } };
  if (typeof s.filesChanged !== 'number') return null;
  const lines = typeof s.additions === 'number' && typeof s.deletions === 'number' ? ` (+${s.additions} -${s.deletions} lines)` : '';
  const tests = s.tests === undefined ? 'tests: none found' : `tests: ${s.tests.passed ?? 0} passed, ${s.tests.failed ?? 0} failed`;
  return `${plural(s.filesChanged, 'file')} changed${lines}, ${plural(typeof s.commits === 'number' ? s.commits : 0, 'commit')}, ${tests}`;
}

/**
 * One line about a stored snapshot for listings: an iteration record's files changed, commits and
 * tests (from the review's summary when the record has one, else from its diff); any other
 * snapshot's scope and top-level data keys.
 */
export function storedSnapshotSummary(snapshot: Snapshot): string {
  const data = snapshot.data as Record<string, unknown> | null;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return `${snapshot.scope} snapshot`;
  if (data.kind !== ITERATION_RECORD_KIND) return `${snapshot.scope} snapshot: ${Object.keys(data).slice(0, 5).join(', ') || 'no data'}`;
  if (typeof data.summary === 'string') return data.summary;
  const reviewed = reviewSummaryLine(data.summary);
  if (reviewed !== null) return reviewed;
  const diff = (data.diff ?? {}) as Partial<SnapshotDiff>;
  const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0);
  const [added, modified, deleted] = [count(diff.filesAdded), count(diff.filesModified), count(diff.filesDeleted)];
  const files = added + modified + deleted;
  const t = diff.testSummary;
  const tests =
    t === undefined || t === null
      ? 'tests: none found'
      : typeof t.total === 'number'
        ? `tests: ${t.passed ?? 0}/${t.total} passed${t.failed ? `, ${t.failed} failed` : ''}`
        : `tests: ${t.type} output found`;
  const commits = typeof diff.commitCount === 'number' ? diff.commitCount : 0;
  return `${files} file${files === 1 ? '' : 's'} changed (+${added} ~${modified} -${deleted}), ${commits} commit${commits === 1 ? '' : 's'}, ${tests}`;
}
