import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError, errnoCode } from '../core/errors.js';
import { snapshotFileName } from './constants.js';
import { assertTaskId } from './input.js';
import { parseStageSnapshot } from './parse.js';
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

/** Where the note of `task` lives; validates the id (exit 2) and the root first. */
export function stageSnapshotPath(root: string, task: string, where: StageSnapshotLocation = {}): string {
  assertTaskId(task, 2);
  const rootReal = resolveRoot(root, 2);
  return path.join(snapshotDirPath(rootReal, where.dir), snapshotFileName(task));
}

/**
 * Reads one note. A symlink is refused (T-7: the writer never creates one, so it was planted),
 * a missing note is ERR_NOT_FOUND (exit 1), a malformed one ERR_CORRUPT (exit 2).
 */
export function readStageSnapshot(root: string, task: string, where: StageSnapshotLocation = {}): StageSnapshotNote {
  const { bodyBytes, ...note } = readStageSnapshotBytes(root, task, where);
  return { ...note, body: bodyBytes.toString('utf8') };
}

/** As readStageSnapshot, with the body as the exact bytes of the file (for printing it verbatim). */
export function readStageSnapshotBytes(root: string, task: string, where: StageSnapshotLocation = {}): Omit<StageSnapshotNote, 'body'> & { bodyBytes: Buffer } {
  const file = stageSnapshotPath(root, task, where);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') {
      throw new CairnError('ERR_NOT_FOUND', `no stage snapshot for ${task} at ${file}; write one with \`cairn stage write\``, { exitCode: 1, path: file });
    }
    throw new CairnError('ERR_IO', `cannot read ${file}: ${(e as Error).message}`, { exitCode: 1, path: file, cause: e });
  }
  if (st.isSymbolicLink()) throw new CairnError('ERR_SYMLINK', `${file} is a symlink; a stage snapshot must be a regular file (remove the link and write the note again)`, { exitCode: 2, path: file });
  if (!st.isFile()) throw new CairnError('ERR_CORRUPT', `${file} is not a regular file`, { exitCode: 2, path: file });
  const parsed = parseStageSnapshot(fs.readFileSync(file));
  if (!parsed.ok) throw new CairnError('ERR_CORRUPT', `${file}: ${parsed.problem}`, { exitCode: 2, path: file });
  return { task_id: task, path: file, frontmatter: parsed.note.frontmatter, bodyBytes: parsed.note.body };
}
