import * as fs from 'node:fs';
import { errnoCode } from '../core/errors.js';
import { parseStageSnapshot, type ParsedStageSnapshot } from './parse.js';

/** Why a note could not be loaded; the reader turns it into an error, the validator into a verdict. */
export type NoteFailure = 'missing' | 'symlink' | 'not-a-file' | 'unreadable' | 'malformed';

export type LoadedNote = { ok: true; bytes: Buffer; note: ParsedStageSnapshot } | { ok: false; failure: NoteFailure; problem: string; cause?: unknown };

const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/**
 * Opens and parses the note at `file` without following a link at the file itself: it is opened
 * with O_NOFOLLOW (a symlink is refused, T-7: the writer never creates one, so it was planted)
 * and O_NONBLOCK (a FIFO planted there cannot hang the reader), and fstat of the open descriptor
 * decides whether it is a regular file, so nothing can be swapped in between the check and the
 * read. Never throws.
 */
export function loadNote(file: string): LoadedNote {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, failure: 'missing', problem: 'no snapshot file', cause: e };
    if (code === 'ELOOP' || isSymlink(file)) return { ok: false, failure: 'symlink', problem: 'the snapshot is a symlink; it must be a regular file', cause: e };
    return { ok: false, failure: 'unreadable', problem: `cannot open the file: ${(e as Error).message}`, cause: e };
  }
  let bytes: Buffer;
  try {
    if (!fs.fstatSync(fd).isFile()) return { ok: false, failure: 'not-a-file', problem: 'the snapshot is not a regular file' };
    bytes = fs.readFileSync(fd);
  } catch (e) {
    return { ok: false, failure: 'unreadable', problem: `cannot read the file: ${(e as Error).message}`, cause: e };
  } finally {
    fs.closeSync(fd);
  }
  const parsed = parseStageSnapshot(bytes);
  if (!parsed.ok) return { ok: false, failure: 'malformed', problem: parsed.problem };
  return { ok: true, bytes, note: parsed.note };
}

/** loadNote without blocking the event loop: the same open flags, fstat and verdicts. */
export async function loadNoteAsync(file: string): Promise<LoadedNote> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, failure: 'missing', problem: 'no snapshot file', cause: e };
    if (code === 'ELOOP' || isSymlink(file)) return { ok: false, failure: 'symlink', problem: 'the snapshot is a symlink; it must be a regular file', cause: e };
    return { ok: false, failure: 'unreadable', problem: `cannot open the file: ${(e as Error).message}`, cause: e };
  }
  let bytes: Buffer;
  try {
    if (!(await handle.stat()).isFile()) return { ok: false, failure: 'not-a-file', problem: 'the snapshot is not a regular file' };
    bytes = await handle.readFile();
  } catch (e) {
    return { ok: false, failure: 'unreadable', problem: `cannot read the file: ${(e as Error).message}`, cause: e };
  } finally {
    await handle.close();
  }
  const parsed = parseStageSnapshot(bytes);
  if (!parsed.ok) return { ok: false, failure: 'malformed', problem: parsed.problem };
  return { ok: true, bytes, note: parsed.note };
}

/** For the platforms whose O_NOFOLLOW error is not ELOOP (EMLINK on the BSDs). */
function isSymlink(file: string): boolean {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}
