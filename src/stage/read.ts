import * as path from 'node:path';
import { CairnError } from '../core/errors.js';
import { snapshotFileName } from './constants.js';
import { assertTaskId } from './input.js';
import { loadNote, loadNoteAsync, type LoadedNote } from './load.js';
import { resolveRoot, snapshotDirPath } from './paths.js';

export interface StageSnapshotLocation {
  /** Snapshot directory below the root; default `datarim/snapshots`. */
  dir?: string;
}

export interface StageSnapshotNote {
  task_id: string;
  path: string;
  frontmatter: Record<string, unknown>;
  body: string;
}

/**
 * Where the note of `task` lives: the real path of the snapshot dir, proved inside the root
 * (a `datarim` link that leads out of it, or dangles, is ERR_CONTAINMENT, exit 2), joined with
 * the note's name, which is not resolved: a link there is the reader's to refuse. Validates the
 * id (exit 2) and the root first.
 */
export function stageSnapshotPath(root: string, task: string, where: StageSnapshotLocation = {}): string {
  assertTaskId(task, 2);
  const rootReal = resolveRoot(root, 2);
  return path.join(snapshotDirPath(rootReal, where.dir, 2), snapshotFileName(task));
}

/**
 * Reads one note. A symlink is refused (ERR_SYMLINK, exit 2), a missing note is ERR_NOT_FOUND
 * (exit 1), a malformed one ERR_CORRUPT (exit 2), a snapshot dir outside the root ERR_CONTAINMENT.
 */
export function readStageSnapshot(root: string, task: string, where: StageSnapshotLocation = {}): StageSnapshotNote {
  const { bodyBytes, ...note } = readStageSnapshotBytes(root, task, where);
  return { ...note, body: bodyBytes.toString('utf8') };
}

/**
 * readStageSnapshot without blocking the event loop, as writeStageSnapshot: resolves to the same
 * note, rejects with the same errors and exit codes.
 */
export async function readStageSnapshotAsync(root: string, task: string, where: StageSnapshotLocation = {}): Promise<StageSnapshotNote> {
  const file = stageSnapshotPath(root, task, where);
  const { bodyBytes, ...note } = noteOrThrow(task, file, await loadNoteAsync(file));
  return { ...note, body: bodyBytes.toString('utf8') };
}

/** As readStageSnapshot, with the body as the exact bytes of the file (for printing it verbatim). */
export function readStageSnapshotBytes(root: string, task: string, where: StageSnapshotLocation = {}): Omit<StageSnapshotNote, 'body'> & { bodyBytes: Buffer } {
  const file = stageSnapshotPath(root, task, where);
  return noteOrThrow(task, file, loadNote(file));
}

function noteOrThrow(task: string, file: string, loaded: LoadedNote): Omit<StageSnapshotNote, 'body'> & { bodyBytes: Buffer } {
  if (loaded.ok) return { task_id: task, path: file, frontmatter: loaded.note.frontmatter, bodyBytes: loaded.note.body };
  switch (loaded.failure) {
    case 'missing':
      throw new CairnError('ERR_NOT_FOUND', `no stage snapshot for ${task} at ${file}; write one with \`cairn stage write\``, { exitCode: 1, path: file });
    case 'symlink':
      throw new CairnError('ERR_SYMLINK', `${file} is a symlink; a stage snapshot must be a regular file (remove the link and write the note again)`, { exitCode: 2, path: file });
    case 'not-a-file':
      throw new CairnError('ERR_CORRUPT', `${file} is not a regular file`, { exitCode: 2, path: file });
    case 'malformed':
      throw new CairnError('ERR_CORRUPT', `${file}: ${loaded.problem}`, { exitCode: 2, path: file });
    case 'unreadable':
      throw new CairnError('ERR_IO', `cannot read ${file}: ${(loaded.cause as Error | undefined)?.message ?? loaded.problem}`, { exitCode: 1, path: file, cause: loaded.cause });
  }
}
