/** The seed's hard cap: frontmatter + body, in bytes, of the whole file. */
export const STAGE_SNAPSHOT_MAX_BYTES = 8192;

/** Appended (after a newline) to a cut body; the seed document's text. */
export const TRUNCATION_MARKER = '<!-- snapshot-truncated, full response in session jsonl -->';

/**
 * The marker the upstream shell writer actually emits (its code disagrees with its document).
 * Only recognised when checking files it wrote; cairn never writes it.
 */
export const UPSTREAM_TRUNCATION_MARKER = '<!-- snapshot-truncated, full ответ см. session jsonl -->';

/** TASK-ID rule of the seed (T-1 path traversal): a prefix, four digits, optional slug parts. */
export const TASK_ID_PATTERN = /^[A-Z]{2,10}-[0-9]{4}(-[A-Za-z0-9]+)*$/;

/** The upstream stage list; any other lowercase token matching STAGE_PATTERN is accepted too. */
export const UPSTREAM_STAGES = [
  'init', 'prd', 'plan', 'design', 'do', 'qa', 'verify', 'compliance', 'archive',
  'edit', 'publish', 'write', 'dream', 'doctor', 'optimize', 'auto',
] as const;

export const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

/** Who wrote a note: the seed's `--captured-by <agent|operator>`, enforced by every entry point. */
export const CAPTURED_BY_VALUES = ['agent', 'operator'] as const;
export type CapturedBy = (typeof CAPTURED_BY_VALUES)[number];

/** Where notes live under the root, as in the seed. */
export const DEFAULT_SNAPSHOT_DIR = 'datarim/snapshots';

export const ARTIFACT_NAME = 'stage-snapshot';
export const SCHEMA_VERSION = 1;

/** Lock wait when neither the option nor DR_SNAPSHOT_LOCK_TIMEOUT says otherwise, in seconds. */
export const DEFAULT_LOCK_TIMEOUT_SECONDS = 60;

/** Frontmatter fields in the seed's order. */
export const FRONTMATTER_FIELDS = [
  'task_id', 'artifact', 'schema_version', 'stage', 'command', 'captured_at',
  'captured_by', 'recommended_next', 'options', 'size_bytes', 'truncated',
] as const;

export function snapshotFileName(task: string): string {
  return `${task}.snapshot.md`;
}

export function lockDirName(task: string): string {
  return `.lock.${task}`;
}
