/**
 * The report of an iteration read back from the store (`cairn store show --report`): the
 * record `session post` saved holds pre, post, the diff and the review (per-file counts, the
 * bounded patch), so a reviewer on another machine — reading S3 or PostgreSQL, with no project
 * checkout — gets the same text report `session report` prints where the iteration ran.
 */
import * as path from 'node:path';
import { CairnError } from '../core/errors.js';
import { ITERATION_RECORD_KIND } from '../session/records/record.js';
import { renderIterationReport, type ReportFile } from '../session/records/report.js';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from '../session/types.js';
import type { Snapshot } from '../store/contract/types.js';

interface StoredRecord {
  iterationDir?: unknown;
  pre: PreSnapshot;
  post: PostSnapshot;
  diff: SnapshotDiff;
  review?: { files?: unknown; notCaptured?: unknown; patch?: { text?: unknown; cut?: unknown; chars?: unknown } };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The iteration record a snapshot holds; a snapshot that is not one is a usage error (exit 2). */
export function storedIterationRecord(snapshot: Snapshot): StoredRecord {
  const data = snapshot.data;
  if (!isObject(data) || data.kind !== ITERATION_RECORD_KIND || !isObject(data.pre) || !isObject(data.post) || !isObject(data.diff)) {
    throw new CairnError('ERR_USAGE', `this snapshot is not an iteration record (data.kind is not ${ITERATION_RECORD_KIND}); --report and --patch read the records \`cairn session post\` saves (session default, --scope-id iterations)`, { exitCode: 2 });
  }
  return data as unknown as StoredRecord;
}

function reviewFiles(record: StoredRecord): { files?: ReportFile[]; notCaptured?: string[] } {
  const review = record.review;
  if (!isObject(review) || !Array.isArray(review.files)) return {};
  const files = review.files.filter((f): f is ReportFile => isObject(f) && typeof f.path === 'string' && typeof f.status === 'string');
  const notCaptured = Array.isArray(review.notCaptured) ? review.notCaptured.filter((p): p is string => typeof p === 'string') : [];
  return { files, notCaptured };
}

/** The text report of a stored iteration record, as `cairn session report` prints it. */
export function renderStoredReport(snapshot: Snapshot): string {
  const record = storedIterationRecord(snapshot);
  const dir = typeof record.iterationDir === 'string' ? record.iterationDir : undefined;
  // Paths are shown relative to the project where the iteration ran, as `session report` run there shows them.
  const root = dir !== undefined && /[\\/]\.cairn[\\/]iterations[\\/][^\\/]+$/.test(dir) ? path.dirname(path.dirname(path.dirname(dir))) : undefined;
  const label = dir !== undefined && root !== undefined ? path.relative(root, dir) : dir;
  return renderIterationReport({
    ...(label === undefined ? {} : { iterationDir: label }),
    ...(root === undefined ? {} : { cwd: root }),
    pre: record.pre,
    post: record.post,
    diff: record.diff,
    ...reviewFiles(record),
  });
}

/** The patch kept with a stored record (cut at a bound when `cut`); null when the record has none. */
export function storedPatch(snapshot: Snapshot): { text: string; cut: boolean; chars: number } | null {
  const patch = storedIterationRecord(snapshot).review?.patch;
  if (!isObject(patch) || typeof patch.text !== 'string') return null;
  return { text: patch.text, cut: patch.cut === true, chars: typeof patch.chars === 'number' ? patch.chars : patch.text.length };
}
