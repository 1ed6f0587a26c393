/**
 * Stage notes: the Datarim stage-snapshot writer's contract (seed 003), with its defects fixed.
 *
 * Decisions, in short (details next to the code that carries them):
 * - the cap is exact: a body is cut only when the whole file would exceed 8192 bytes, at a UTF-8
 *   character boundary, so the file lands within one character of the cap (render.ts, utf8-cut.ts);
 * - the frontmatter round-trips through any YAML reader: simple tokens plain as in the seed,
 *   everything else double-quoted, option lines always quoted (yaml-scalar.ts);
 * - the per-task lock is a mkdir lock with an owner record; a dead owner's lock is taken over
 *   safely, and it is released on every exit path, signals included (core/lock.ts);
 * - any existing directory is a root; writes never leave `<root>/<dir>` (paths.ts);
 * - `--captured-at` must be ISO 8601 UTC (`Z` or `+00:00`) naming a real instant (input.ts);
 * - `--captured-by` must be agent or operator, in the writer, the checker and the MCP tool alike (input.ts);
 * - `stage write --help` exits 0 (upstream: 2); a flag without a value is a usage error (2).
 */
export {
  STAGE_SNAPSHOT_MAX_BYTES,
  TRUNCATION_MARKER,
  UPSTREAM_TRUNCATION_MARKER,
  TASK_ID_PATTERN,
  STAGE_PATTERN,
  UPSTREAM_STAGES,
  DEFAULT_SNAPSHOT_DIR,
  FRONTMATTER_FIELDS,
  CAPTURED_BY_VALUES,
} from './constants.js';
export type { CapturedBy } from './constants.js';
export { writeStageSnapshot, missingRequiredFlags } from './write.js';
export type { WriteStageSnapshotOptions, WriteStageSnapshotResult } from './write.js';
export { readStageSnapshot, readStageSnapshotAsync, readStageSnapshotBytes, stageSnapshotPath } from './read.js';
export type { StageSnapshotNote, StageSnapshotLocation } from './read.js';
export { validateStageSnapshot } from './validate.js';
export type { StageSnapshotCheck, ValidateStageSnapshotOptions } from './validate.js';
export { renderStageSnapshot } from './render.js';
export type { StageSnapshotFields, RenderedStageSnapshot } from './render.js';
export { parseStageSnapshot } from './parse.js';
export type { ParsedStageSnapshot } from './parse.js';
