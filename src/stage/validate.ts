import { isCairnError } from '../core/errors.js';
import { ARTIFACT_NAME, CAPTURED_BY_VALUES, SCHEMA_VERSION, STAGE_PATTERN, STAGE_SNAPSHOT_MAX_BYTES } from './constants.js';
import { isCapturedBy } from './input.js';
import { loadNote } from './load.js';
import { endsWithTruncationMarker } from './parse.js';
import { stageSnapshotPath, type StageSnapshotLocation } from './read.js';

export interface ValidateStageSnapshotOptions extends StageSnapshotLocation {
  /** Check every frontmatter field, not only that a note with a frontmatter block is there. */
  validateFrontmatter?: boolean;
}

export interface StageSnapshotCheck {
  task_id: string;
  /** Empty when the task id or root was rejected before a path could be formed. */
  path: string;
  status: 'valid' | 'missing' | 'invalid';
  /** The upstream validator's exit semantics: 0 valid, 1 missing, 2 invalid or a symlink. */
  exitCode: 0 | 1 | 2;
  problems: string[];
}

/** Scalar fields that must be present with a value (the upstream validator's list). */
const REQUIRED_SCALARS = ['task_id', 'artifact', 'schema_version', 'stage', 'command', 'captured_at', 'captured_by', 'recommended_next', 'size_bytes', 'truncated'] as const;

function result(task: string, file: string, problems: string[], missing = false): StageSnapshotCheck {
  if (missing) return { task_id: task, path: file, status: 'missing', exitCode: 1, problems };
  return problems.length === 0 ? { task_id: task, path: file, status: 'valid', exitCode: 0, problems } : { task_id: task, path: file, status: 'invalid', exitCode: 2, problems };
}

function frontmatterProblems(fm: Record<string, unknown>, task: string, size: number, body: Buffer): string[] {
  const problems: string[] = [];
  for (const key of REQUIRED_SCALARS) {
    const v = fm[key];
    if (v === undefined || v === null || v === '') problems.push(`field ${key} is missing or empty`);
    else if (typeof v === 'object') problems.push(`field ${key} must be a single value`);
  }
  if (!('options' in fm)) problems.push('field options is missing');
  else if (fm.options !== null && !(Array.isArray(fm.options) && fm.options.every((o) => typeof o === 'string'))) problems.push('field options must be a list of strings');
  if (fm.task_id !== undefined && fm.task_id !== task) problems.push(`task_id is ${JSON.stringify(fm.task_id)}, not ${task}`);
  if (fm.artifact !== undefined && fm.artifact !== ARTIFACT_NAME) problems.push(`artifact is ${JSON.stringify(fm.artifact)}, not ${ARTIFACT_NAME}`);
  if (fm.schema_version !== undefined && fm.schema_version !== SCHEMA_VERSION) problems.push(`schema_version is ${JSON.stringify(fm.schema_version)}, not ${SCHEMA_VERSION}`);
  if (typeof fm.stage === 'string' && !STAGE_PATTERN.test(fm.stage)) problems.push(`stage ${JSON.stringify(fm.stage)} does not match ${STAGE_PATTERN.source}`);
  if (fm.captured_by !== undefined && fm.captured_by !== null && fm.captured_by !== '' && !isCapturedBy(fm.captured_by)) {
    problems.push(`captured_by is ${JSON.stringify(fm.captured_by)}, not ${CAPTURED_BY_VALUES.join(' or ')}`);
  }
  if (fm.size_bytes !== undefined && fm.size_bytes !== size) problems.push(`size_bytes says ${JSON.stringify(fm.size_bytes)} but the file is ${size} bytes`);
  if (size > STAGE_SNAPSHOT_MAX_BYTES) problems.push(`the file is ${size} bytes, over the ${STAGE_SNAPSHOT_MAX_BYTES}-byte cap`);
  if (fm.truncated !== undefined) {
    if (typeof fm.truncated !== 'boolean') problems.push(`truncated must be true or false, not ${JSON.stringify(fm.truncated)}`);
    // Only one way round: `truncated: false` over a body ending with the marker is a body that
    // quotes it, which the writer copies byte for byte like any body that fits.
    else if (fm.truncated && !endsWithTruncationMarker(body)) problems.push('truncated is true but the body does not end with the truncation marker');
  }
  return problems;
}

/**
 * Checks the note of `task` the way the upstream validator does, and more: it rejects a bad
 * task id, a snapshot dir outside the root, a symlink, and with `validateFrontmatter` it proves `size_bytes` and `truncated`
 * against the file itself. Never throws for a bad note; the result carries the exit code.
 */
export function validateStageSnapshot(root: string, task: string, options: ValidateStageSnapshotOptions = {}): StageSnapshotCheck {
  let file: string;
  try {
    file = stageSnapshotPath(root, task, options);
  } catch (e) {
    if (isCairnError(e)) return result(task, '', [e.message]);
    throw e;
  }
  const loaded = loadNote(file);
  if (!loaded.ok) return result(task, file, [loaded.problem], loaded.failure === 'missing');
  if (!options.validateFrontmatter) return result(task, file, []);
  return result(task, file, frontmatterProblems(loaded.note.frontmatter, task, loaded.bytes.length, loaded.note.body));
}
