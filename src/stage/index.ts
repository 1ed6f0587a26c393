export {
  STAGE_SNAPSHOT_MAX_BYTES,
  TRUNCATION_MARKER,
  UPSTREAM_TRUNCATION_MARKER,
  TASK_ID_PATTERN,
  STAGE_PATTERN,
  UPSTREAM_STAGES,
  DEFAULT_SNAPSHOT_DIR,
  FRONTMATTER_FIELDS,
} from './constants.js';
export { writeStageSnapshot, missingRequiredFlags } from './write.js';
export type { WriteStageSnapshotOptions, WriteStageSnapshotResult } from './write.js';
export { readStageSnapshot, stageSnapshotPath } from './read.js';
export type { StageSnapshotNote, StageSnapshotLocation } from './read.js';
export { validateStageSnapshot } from './validate.js';
export type { StageSnapshotCheck, ValidateStageSnapshotOptions } from './validate.js';
export { renderStageSnapshot } from './render.js';
export type { StageSnapshotFields, RenderedStageSnapshot } from './render.js';
export { parseStageSnapshot } from './parse.js';
export type { ParsedStageSnapshot } from './parse.js';
