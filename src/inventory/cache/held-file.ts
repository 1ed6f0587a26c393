import * as fs from 'node:fs';

/**
 * A cache file this process holds open, with its stat as it was when taken. While it is open its
 * inode cannot be reused by another file: a path naming that inode, with that size and those
 * times, names the very file (resident.ts).
 */
export interface HeldFile {
  readonly fd: number;
  readonly stat: fs.BigIntStats;
}

/** Holds `fd` (open on a cache file): its stat now is what a later look at the path must find. */
export function holdFile(fd: number): HeldFile {
  return { fd, stat: fs.fstatSync(fd, { bigint: true }) };
}

export function releaseFile(held: HeldFile): void {
  try {
    fs.closeSync(held.fd);
  } catch {
    // already closed: nothing is held
  }
}

