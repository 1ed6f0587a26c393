import type { ScannedBody } from '../digest.js';
import type { FileOutcome } from '../io/read-file.js';
import type { RacyFrom } from '../rules/racy.js';
import type { ScanResult } from '../types.js';

/**
 * What an lstat pass that checked every cached row found, handed to the walk when it runs after
 * all (a .gitignore changed, too many rows changed, a change the update cannot place): the walk
 * then takes every confirmed row from the cache, and every file the pass read again as it was
 * read, without looking at either again.
 */
export interface Confirmed {
  /** Per file row of the cache (as the cache now stands): 1 when its lstat matched and it needs no read. */
  readonly verified: Uint8Array;
  /** The recorded directories whose stat moved (every other one was confirmed). */
  readonly changedDirs: ReadonlySet<string>;
  /** The changed files the pass already read again, by row path. */
  readonly preread: ReadonlyMap<string, FileOutcome>;
  /** The pass's racy instant: the walk measures racy files from it when it is earlier than its own. */
  readonly racyFrom: RacyFrom;
}

/**
 * What the fast path decided: the stored result handed back as it was (`reused`), or with the
 * rows that changed read again and the directories that moved listed again (`updated`), or the
 * walk, with the reason in a line (`CAIRN_DEBUG=inventory` prints it; tests assert it) and what
 * the lstat pass confirmed, when it checked every row.
 */
export type FastPathOutcome = { kind: 'reused' | 'updated'; result: ScanResult; body: ScannedBody | undefined; rowsChanged: number } | { kind: 'walk'; reason: string; confirmed: Confirmed | undefined };

/** Why the walk must decide, inside the fast path: a reason, never a bare null, so a slow run can say why. */
export interface Walk {
  readonly walk: string;
}

export function walk(reason: string): Walk {
  return { walk: reason };
}

export function isWalk(x: object): x is Walk {
  return 'walk' in x;
}
