/**
 * An iteration, found by number or directory as every `session` command addresses it
 * (`resolveIterationDir`), read back (pre, post, the diff of the two) and diffed file by file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError } from '../core/errors.js';
import { POST_SNAPSHOT_FILE, PRE_SNAPSHOT_FILE } from '../session/files.js';
import { iterationName, latestIterationDir, resolveIterationDir } from '../session/records/iterations.js';
import { SnapshotManager, readPostSnapshot, readPreSnapshot } from '../session/capture/snapshot-manager.js';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from '../session/types.js';
import { iterationContentSource, type ContentSource } from './content.js';
import { diffEntries, type DiffOptions, type FileChange } from './diff.js';

export interface LoadedIteration {
  /** `003` for numbered iterations, else the directory's name. */
  iteration: string;
  dir: string;
  pre: PreSnapshot;
  /** null while the iteration is still open (pre taken, post not yet). */
  post: PostSnapshot | null;
  diff: SnapshotDiff | null;
}

/** The iteration's label: its directory's name (`003`). */
export function iterationLabel(dir: string): string {
  return iterationName(dir);
}

/** `ITERATION` as the spec defines it: a number (`3`, `003`), a directory, or omitted (the latest). Unknown → ERR_USAGE, exit 2. */
export function resolveIteration(root: string, arg: string | undefined, options: { cwd?: string } = {}): string {
  return resolveIterationDir(root, arg, options.cwd);
}

/**
 * What a review says of an iteration still open (pre taken, no post yet): finish it, or name the
 * latest finished one instead. Exit 2, as for an unknown iteration: the latest iteration (what an
 * omitted ITERATION means) may be the open one an agent is working in.
 */
export function notFinishedError(root: string, it: { iteration: string }): CairnError {
  const finished = latestIterationDir(root, { needPost: true });
  const instead = finished === null ? 'no iteration is finished yet' : `or name ${iterationLabel(finished)}, the latest finished iteration`;
  return new CairnError('ERR_NOT_FOUND', `iteration ${it.iteration} is still open (no post-snapshot yet): finish it with \`cairn session post\`, ${instead}`, { exitCode: 2 });
}

export function loadIteration(root: string, dir: string): LoadedIteration {
  const pre = readPreSnapshot(path.join(dir, PRE_SNAPSHOT_FILE));
  const postFile = path.join(dir, POST_SNAPSHOT_FILE);
  const post = fs.existsSync(postFile) ? readPostSnapshot(postFile) : null;
  const diff = post === null ? null : new SnapshotManager(root).calculateDiff(pre, post);
  return { iteration: iterationLabel(dir), dir, pre, post, diff };
}

/**
 * What content a review of `it` reads. Iterations captured before cairn kept their content, or
 * without it, fall back to git and the working tree (checked against the recorded digests).
 */
export function contentSourceFor(root: string, it: LoadedIteration & { post: PostSnapshot }): ContentSource {
  return iterationContentSource(root, path.join(root, '.cairn'), it.pre, it.post);
}

/** The per-file changes of a finished iteration, pre → post, committed or not. */
export function iterationFileChanges(root: string, it: LoadedIteration, options: DiffOptions & { source?: ContentSource } = {}): FileChange[] {
  if (it.post === null) throw notFinishedError(root, it);
  const from = it.pre.inventory?.digest;
  const to = it.post.inventory?.digest;
  if (from === undefined || to === undefined) {
    throw new CairnError('ERR_NO_INVENTORY', `iteration ${it.iteration} was captured without working-tree inventories (--no-inventory), so cairn cannot tell how files changed; \`git diff ${it.pre.git.commit} ${it.post.git.commit}\` shows its commits`);
  }
  const store = new SnapshotManager(root).inventoryStore(root);
  const changes = store.changedEntries(from, to);
  return diffEntries(changes, options.source ?? contentSourceFor(root, { ...it, post: it.post }), options);
}
