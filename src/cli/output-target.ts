/**
 * Where `-o/--out` writes. A regular file (or a new name) gets an atomic write: a temp file
 * beside it, renamed over it. A device, FIFO or socket (`/dev/null`, `/dev/stdout`, a named
 * pipe a script reads) must be written into instead: renaming over it would put a regular file
 * where the device was (run as root, `-o /dev/null` replaced the system's /dev/null) and leave
 * its reader waiting. Such a target is also never handed to a daemon, which would open it as
 * its own process (its own stdout, its own terminal).
 */
import * as fs from 'node:fs';

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
