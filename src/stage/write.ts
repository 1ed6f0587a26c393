import * as path from 'node:path';
import { removeStaleTemps, writeFileAtomic } from '../core/atomic-write.js';
import { ContainedDir, rootedAt } from '../core/contained-dir.js';
import { CairnError, isCairnError } from '../core/errors.js';
import { acquireDirLock, onTerminationSignal, type StaleLockInfo } from '../core/lock.js';
import { DEFAULT_LOCK_TIMEOUT_SECONDS, DEFAULT_SNAPSHOT_DIR, lockDirName, snapshotFileName } from './constants.js';
import { assertCapturedAt, assertCapturedBy, assertStage, assertTaskId, nowCapturedAt, readBodyFile, readOptionsFile, strictInputText } from './input.js';
import { ensureSnapshotDir, resolveRoot } from './paths.js';
import { renderStageSnapshot } from './render.js';

/** The seed's flags in camelCase; `body`/`options` are the in-memory alternatives to the files. */
export interface WriteStageSnapshotOptions {
  root: string;
  task: string;
  stage: string;
  command: string;
  capturedBy: string;
  recommendedNext: string;
  body?: string | Uint8Array;
  bodyFile?: string;
  options?: readonly string[];
  optionsFile?: string;
  /** ISO 8601 UTC; default now, to the second. */
  capturedAt?: string;
  /** Snapshot directory below the root; default `datarim/snapshots`. */
  dir?: string;
  /** Lock wait in seconds; default DR_SNAPSHOT_LOCK_TIMEOUT, else 60. 0 fails at once when held. */
  lockTimeoutSeconds?: number;
  /** Where DATARIM_DISABLE_SNAPSHOT and DR_SNAPSHOT_LOCK_TIMEOUT are read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Told when a dead writer's lock was taken over. */
  onStaleLock?: (info: StaleLockInfo) => void;
}

export interface WriteStageSnapshotResult {
  /** The published note; empty when the kill switch disabled the writer. */
  path: string;
  sizeBytes: number;
  truncated: boolean;
  /** True when DATARIM_DISABLE_SNAPSHOT=1 made the call a no-op. */
  disabled: boolean;
}

/** The required flags in the order the seed names them in its message. */
const REQUIRED: ReadonlyArray<[keyof WriteStageSnapshotOptions, string]> = [
  ['root', '--root'],
  ['task', '--task'],
  ['stage', '--stage'],
  ['command', '--command'],
  ['capturedBy', '--captured-by'],
  ['recommendedNext', '--recommended-next'],
  ['bodyFile', '--body-file'],
];

function usage(message: string, details?: Record<string, unknown>): CairnError {
  return new CairnError('ERR_USAGE', message, details === undefined ? { exitCode: 2 } : { exitCode: 2, details });
}

function isMissing(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

/** `missing required flag(s): --a --b`, all of them, in the seed's order; undefined when none. */
export function missingRequiredFlags(o: Partial<Record<keyof WriteStageSnapshotOptions, unknown>>): string[] {
  return REQUIRED.filter(([key]) => (key === 'bodyFile' ? isMissing(o.bodyFile) && o.body === undefined : isMissing(o[key]))).map(([, flag]) => flag);
}

export function lockTimeoutSeconds(o: Pick<WriteStageSnapshotOptions, 'lockTimeoutSeconds' | 'env'>): number {
  if (o.lockTimeoutSeconds !== undefined) {
    if (!Number.isFinite(o.lockTimeoutSeconds) || o.lockTimeoutSeconds < 0) throw usage(`lockTimeoutSeconds must be a number of seconds >= 0 (got ${o.lockTimeoutSeconds})`);
    return o.lockTimeoutSeconds;
  }
  const raw = (o.env ?? process.env).DR_SNAPSHOT_LOCK_TIMEOUT;
  if (raw === undefined || raw === '') return DEFAULT_LOCK_TIMEOUT_SECONDS;
  if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw usage(`DR_SNAPSHOT_LOCK_TIMEOUT must be a number of seconds >= 0 (got ${JSON.stringify(raw)})`);
  return Number(raw.trim());
}

/**
 * Writes `<root>/<dir>/<TASK-ID>.snapshot.md` whole: validates like the seed's writer, renders
 * the frontmatter and the capped body, takes the per-task lock, publishes atomically (unique
 * temp, fsync, mode 600, rename, directory fsync) and releases the lock on every path.
 * Rejects with a CairnError whose `exitCode` is the seed's: 1 validation/IO, 2 usage, 3 lock timeout.
 */
export async function writeStageSnapshot(o: WriteStageSnapshotOptions): Promise<WriteStageSnapshotResult> {
  const env = o.env ?? process.env;
  // The kill switch comes before any check, as upstream: even garbage input gives success.
  if (env.DATARIM_DISABLE_SNAPSHOT === '1') return { path: '', sizeBytes: 0, truncated: false, disabled: true };

  const missing = missingRequiredFlags(o);
  if (missing.length > 0) throw usage(`missing required flag(s): ${missing.join(' ')}`, { missing });
  if (o.body !== undefined && !isMissing(o.bodyFile)) throw usage('give either body or bodyFile, not both');
  if (o.options !== undefined && o.optionsFile !== undefined) throw usage('give either options or optionsFile, not both');
  const timeoutSeconds = lockTimeoutSeconds(o);

  // Validation in upstream order: task, stage, body file, root (captured-by, cairn's check, after stage).
  assertTaskId(o.task);
  assertStage(o.stage);
  assertCapturedBy(o.capturedBy);
  const body = o.body !== undefined ? (typeof o.body === 'string' ? Buffer.from(o.body, 'utf8') : o.body) : readBodyFile(o.bodyFile ?? '');
  strictInputText(body, 'body', o.bodyFile ?? '(body)');
  const rootReal = resolveRoot(o.root);
  const capturedAt = o.capturedAt ?? nowCapturedAt();
  assertCapturedAt(capturedAt);
  const options = o.options !== undefined ? [...o.options] : o.optionsFile !== undefined ? readOptionsFile(o.optionsFile) : [];

  // Render before locking: a note over the cap fails without touching the disk or the lock.
  const rendered = renderStageSnapshot(
    { task: o.task, stage: o.stage, command: o.command, capturedAt, capturedBy: o.capturedBy, recommendedNext: o.recommendedNext, options },
    body,
  );

  const dir = ensureSnapshotDir(rootReal, o.dir ?? DEFAULT_SNAPSHOT_DIR);
  const fileName = snapshotFileName(o.task);
  const target = path.join(dir, fileName);
  // Held open for the whole write: the lock, the temp file and the rename all go through the
  // opened directory (ContainedDir.at), so a stage directory swapped for a link meanwhile
  // cannot carry any of them outside the root.
  const { root: from, parts } = rootedAt(dir, rootReal);
  const held = ContainedDir.require(from, parts);
  // From here on a termination signal removes our temp file and (through the lock) our lock.
  const heldPath = path.dirname(held.at(fileName));
  const unguard = onTerminationSignal(() => removeStaleTemps(heldPath, [fileName], { onlyMine: true }));
  try {
    const lockShown = path.join(dir, lockDirName(o.task));
    const lockOptions: Parameters<typeof acquireDirLock>[1] = { timeoutMs: Math.round(timeoutSeconds * 1000), timeoutMessage: () => `lock timeout (${timeoutSeconds}s) on ${lockShown}` };
    const onStale = o.onStaleLock;
    if (onStale) lockOptions.onStaleTakeover = (info) => onStale({ ...info, lockPath: lockShown });
    const lock = await acquireDirLock(held.at(lockDirName(o.task)), { ...lockOptions, shownPath: lockShown });
    try {
      removeStaleTemps(heldPath, [fileName]);
      await writeFileAtomic(held.at(fileName), rendered.bytes, { mode: 0o600 });
    } finally {
      await lock.release();
    }
  } catch (e) {
    if (isCairnError(e)) throw e;
    throw new CairnError('ERR_IO', `cannot write ${target}: ${(e as Error).message}`, { exitCode: 1, path: target, cause: e });
  } finally {
    unguard();
    held.close();
  }
  return { path: target, sizeBytes: rendered.sizeBytes, truncated: rendered.truncated, disabled: false };
}
