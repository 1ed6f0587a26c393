/**
 * Where `-o/--out` (and `session report --html`) writes. A regular file (or a new name) gets an
 * atomic write: a temp file beside it, renamed over it. A device, FIFO or socket (`/dev/null`,
 * `/dev/stdout`, a named pipe a script reads) must be written into instead: renaming over it
 * would put a regular file where the device was (run as root, `-o /dev/null` replaced the
 * system's /dev/null) and leave its reader waiting. Such a target is also never handed to a
 * daemon, which would open it as its own process (its own stdout, its own terminal).
 *
 * The target is checked before any work: a directory given as FILE would have the temp file
 * made beside it (in the directory's parent, `/` for `/tmp`) and then fail to be renamed over,
 * and a missing directory fails in raw errno text that names the temp file. Both are said
 * here in words, as coded errors, with what to do.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError, errnoCode } from '../core/errors.js';

/** Whether `file` exists and is something to write into rather than replace (not a regular file or directory). */
export function writesInPlace(file: string): boolean {
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(file, { throwIfNoEntry: false });
  } catch {
    return false; // a link loop, a path through a file: the atomic write replaces the name or says why not
  }
  return st !== undefined && !st.isFile() && !st.isDirectory();
}

/**
 * Refuses an output FILE that cannot be written before anything is: an existing directory
 * (ERR_USAGE, exit 2), a name in a directory that does not exist or is not one (ERR_IO). `flag`
 * names the option in the message; `example` is a file name to suggest inside a directory.
 */
export function checkOutputFile(file: string, flag: string, example: string): void {
  const dir = path.dirname(file);
  let st: fs.Stats | undefined;
  try {
    if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() === true) {
      throw new CairnError('ERR_USAGE', `${flag} ${file} is a directory; name the file to write, such as ${path.join(file, example)}`, { path: file, exitCode: 2 });
    }
    st = fs.statSync(dir, { throwIfNoEntry: false });
  } catch (e) {
    throw outputWriteError(file, e);
  }
  if (st === undefined) throw new CairnError('ERR_IO', `cannot write ${file}: the directory ${dir} does not exist; create it first (mkdir -p ${dir}) or name a file in an existing directory`, { path: file, exitCode: 1 });
  if (!st.isDirectory()) throw new CairnError('ERR_IO', `cannot write ${file}: ${dir} is not a directory; name a file in a directory`, { path: file, exitCode: 1 });
}

/** A failed write of the output FILE as ERR_IO, said in words (never the temp file's name) with what to do. */
export function outputWriteError(file: string, e: unknown): CairnError {
  if (e instanceof CairnError) return e;
  const dir = path.dirname(file);
  let dirExists = false;
  try {
    dirExists = fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    // a path through a file: ENOTDIR says so below
  }
  const why: Record<string, string> = {
    ENOENT: dirExists ? `${dir} takes no new files; name a file elsewhere` : `the directory ${dir} does not exist; create it first (mkdir -p ${dir}) or name a file in an existing directory`,
    ENOTDIR: `a part of ${dir} is not a directory; name a file in a directory`,
    EISDIR: 'it is a directory; name the file to write inside it',
    EACCES: `permission denied in ${dir}; name a file in a directory you can write to`,
    EPERM: `permission denied in ${dir}; name a file in a directory you can write to`,
    EROFS: `${dir} is on a read-only file system; name a file elsewhere`,
    ENOSPC: 'no space left on the device; free some space or name a file on another one',
    EDQUOT: 'the disk quota is exhausted; free some space or name a file elsewhere',
  };
  const code = errnoCode(e);
  const reason = (code !== undefined ? why[code] : undefined) ?? `${e instanceof Error ? e.message : String(e)}`;
  return new CairnError('ERR_IO', `cannot write ${file}: ${reason}`, { path: file, cause: e, exitCode: 1 });
}
