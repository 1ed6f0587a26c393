/**
 * An iteration, found by number or directory as every `session` command addresses it, read
 * back (pre, post, the diff of the two) and diffed file by file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError } from '../core/errors.js';
import { POST_SNAPSHOT_FILE, PRE_SNAPSHOT_FILE } from '../session/files.js';
import { iterationsRoot, listIterationDirs } from '../session/iterations.js';
import { SnapshotManager, readPostSnapshot, readPreSnapshot } from '../session/snapshot-manager.js';
import type { PostSnapshot, PreSnapshot, SnapshotDiff } from '../session/types.js';
import { gitAndWorkingTreeSource, type ContentSource } from './content.js';
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

/** The iteration's label: its number as three digits, or the directory name. */
export function iterationLabel(dir: string): string {
  const name = path.basename(dir);
  return /^\d+$/.test(name) ? name.padStart(3, '0') : name;
}

/**
 * `ITERATION` as the spec defines it: a number (`3`, `003`), a directory, or omitted (the latest
 * numbered iteration; with `needPost`, the latest finished one). Unknown → ERR_NOT_FOUND, exit 2.
 */
export function resolveIteration(root: string, arg: string | undefined, options: { cwd?: string; needPost?: boolean } = {}): string {
  const needPost = options.needPost ?? true;
  if (arg === undefined) {
    const dirs = listIterationDirs(root).reverse();
    const found = dirs.find((d) => fs.existsSync(path.join(d, PRE_SNAPSHOT_FILE)) && (!needPost || fs.existsSync(path.join(d, POST_SNAPSHOT_FILE))));
    if (found === undefined) {
      throw new CairnError('ERR_NOT_FOUND', `no ${needPost ? 'finished ' : ''}iteration under ${iterationsRoot(root)}; run \`cairn session pre\` and \`cairn session post\` first, or pass --root`, { exitCode: 2 });
    }
    return found;
  }
  if (/^\d{1,9}$/.test(arg)) {
    const wanted = Number(arg);
    const found = listIterationDirs(root).find((d) => Number(path.basename(d)) === wanted);
    if (found === undefined) {
      throw new CairnError('ERR_NOT_FOUND', `no iteration ${arg} under ${iterationsRoot(root)}; list them with \`cairn session list\``, { exitCode: 2 });
    }
    return found;
  }
  const dir = path.resolve(options.cwd ?? process.cwd(), arg);
  if (!fs.existsSync(path.join(dir, PRE_SNAPSHOT_FILE))) {
    throw new CairnError('ERR_NOT_FOUND', `${arg} is neither an iteration number nor an iteration directory (no ${PRE_SNAPSHOT_FILE} in it); list them with \`cairn session list\``, { exitCode: 2, path: dir });
  }
  return dir;
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
export function contentSourceFor(root: string, it: LoadedIteration): ContentSource {
  return gitAndWorkingTreeSource(root, { pre: it.pre.git.commit, post: it.post?.git.commit ?? 'unknown' });
}

/** The per-file changes of a finished iteration, pre → post, committed or not. */
export function iterationFileChanges(root: string, it: LoadedIteration, options: DiffOptions & { source?: ContentSource } = {}): FileChange[] {
  if (it.post === null) {
    throw new CairnError('ERR_NOT_FOUND', `iteration ${it.iteration} has no post-snapshot yet; run \`cairn session post\` first`, { exitCode: 2 });
  }
  const from = it.pre.inventory?.digest;
  const to = it.post.inventory?.digest;
  if (from === undefined || to === undefined) {
    throw new CairnError('ERR_NO_INVENTORY', `iteration ${it.iteration} was captured without working-tree inventories (--no-inventory), so cairn cannot tell how files changed; \`git diff ${it.pre.git.commit} ${it.post.git.commit}\` shows its commits`);
  }
  const store = new SnapshotManager(root).inventoryStore(root);
  const changes = store.diffEntries(from, to);
  return diffEntries(changes, options.source ?? contentSourceFor(root, it), options);
}
