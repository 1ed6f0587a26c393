import type { RepoSnapshotEntry } from './types.js';

/**
 * An entry's mode from a file's st_mode: the owner execute bit decides (git's rule), so a file
 * gets the same mode however it was found (scan, stored result, a session's supplement).
 */
export function entryMode(stMode: number): RepoSnapshotEntry['mode'] {
  return (stMode & 0o100) !== 0 ? '0755' : '0644';
}
