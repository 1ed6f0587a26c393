/**
 * Rewind (`src/rewind/`): putting a project back to an iteration's pre or post state, safely.
 *
 * The model: three states per path — the target (an iteration's inventory), what cairn last
 * recorded (the latest post, or the pre of an iteration still open, then what restores wrote),
 * and the disk, read as pre and post read it (an inventory through the stat cache) so a change
 * made after the last record is seen without hashing the tree. A path changes only when the disk
 * still holds what cairn recorded; anything else is someone's work, and restore refuses (exit 3,
 * nothing changed) unless forced, and then keeps it. A path not even force can reach is named
 * (`unrestored`) and the restore fails (exit 1); one no inventory records is never touched; the
 * current directory and its ancestors are never removed. Every restore is a journal record
 * written before the first change, so a killed restore is finished by the next one and `--undo`
 * reverts the last one exactly. All tree access goes through held, no-follow directories
 * (src/core/contained-dir.ts), so a planted symlink never carries a write or delete outside.
 *
 * | file | job |
 * |---|---|
 * | `restore.ts` | restoreIteration / undoLastRestore: plan, conflicts, apply, recovery |
 * | `tree.ts` | the project tree through ContainedDir: read state, atomic write, delete, prune empty dirs |
 * | `journal.ts` | restore records under `.cairn/restores/` |
 */
export { restoreIteration, undoLastRestore } from './restore.js';
export type { RestoreAction, RestoreChange, RestoreOptions, RestoreResult } from './restore.js';
// The dry run's +/- counts come from the review's diff engine (one line-diff engine in cairn).
export { lineCounts } from '../review/diff.js';
export { standingRestores } from './journal.js';
export type { RestoreMark } from './journal.js';
export type { PathState } from './tree.js';
