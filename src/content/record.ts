// The `content` record a pre- or post-snapshot carries: the vocabulary of content, in a module
// that imports nothing, so the session's types (src/session/types.ts) can name it without importing
// the capture, which itself stands on the session's inventory store (that was an import cycle).
export type NotRestorableReason = 'over-size-cap' | 'unreadable' | 'changed-while-captured' | 'not-in-git' | 'symlink-target-not-utf8' | 'not-captured';

export interface NotRestorable {
  path: string;
  reason: NotRestorableReason;
}

/** The `content` field of a pre- or post-snapshot. */
export interface ContentRecord {
  version: 1;
  /** The per-file cap applied, in bytes. */
  capBytes: number;
  /** Objects (and their raw bytes) this capture added to the store, and the pack bytes written. */
  objectsWritten: number;
  rawBytes: number;
  packBytes: number;
  /** Inside git: the commit that holds the tracked files this capture left to git. */
  gitCommit?: string;
  /** Target of every symlink of the inventory, by path. */
  symlinks?: Record<string, string>;
  /** Paths whose bytes at this side cannot be put back, and why. */
  notRestorable?: NotRestorable[];
  /** Post only: paths whose pre-side bytes could not be secured at post. */
  preNotRestorable?: NotRestorable[];
}
