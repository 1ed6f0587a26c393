import type { MessagePort } from 'node:worker_threads';

/** The words the watcher thread and the capture thread share (an Int32Array over a SharedArrayBuffer). */
export const S = {
  /** The highest cookie number whose event the watcher has seen. */
  ACK: 0,
  /** How many events outside cairn's directory were seen (only ever grows). */
  CHANGES: 1,
  /** 1 while the watch set is complete; 0 while it is (re)built or after a doubt. */
  READY: 2,
  /** Counts complete watch sets: a change of epoch means events may have been missed in between. */
  EPOCH: 3,
  /** 1 once the watch set could not be built at all (the watcher is then of no use). */
  FAILED: 4,
  /** How many times the watcher doubted (overflow, an error, a change it could not follow). */
  DOUBTS: 5,
  /** Test hook: how many stalls the watcher thread finished. */
  STALLS: 6,
  /** Test hook: 1 while a stall is asked for; the watcher thread waits until it drops to 0. */
  GATE: 7,
  /** Test hook: 1 while the watcher thread is stalled. */
  STALLING: 8,
} as const;

export const STATE_WORDS = 10;

/** Cookie files: `<cairn dir>/<prefix><n>`, written and removed by the capture thread. */
export const COOKIE_PREFIX = 'watch-cookie-';

/**
 * A message on the port that starts with this (a NUL: never in a path) names the entry an event
 * was about (the rest of the message); the bare NUL says an event named no entry. Any other
 * message is a directory to look at again.
 */
export const NAMED = '\0';

export interface WatchWorkerData {
  root: string;
  /** cairn's directory relative to the root ('.cairn'): watched for cookies only. */
  cairnRel: string;
  state: SharedArrayBuffer;
  /** This watch's cookies are `<prefix><token>-<n>`: another process's cookies are not this one's proof. */
  token: string;
  /** Events in one read of the queue that count as an overflow (a quarter of max_queued_events). */
  burstLimit: number;
  /** Where the directories with events are named, one message each. */
  port: MessagePort;
  /** Test hook: every event of the tree is dropped as an overflowing queue drops them (and, as then, the watcher doubts). */
  drop?: 'overflow';
}
