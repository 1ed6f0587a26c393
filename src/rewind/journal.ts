/**
 * Restore records, `.cairn/restores/<000001>.json`: what one restore (or undo) changes, written
 * BEFORE the first change (state `pending`) and marked `done` after the last. Each op names the
 * path, its state before and after, and the temp name the change goes through, and every file
 * state's bytes are in the content store before the record is written, so the next restore or
 * `--undo` can finish a killed one from the record alone. `keeps` lists those digests for the
 * content store's gc.
 */
import { ContainedDir } from '../core/contained-dir.js';
import type { PathState } from './tree.js';

export const RESTORES_PARTS = ['.cairn', 'restores'] as const;

export interface RestoreOp {
  path: string;
  before: PathState;
  after: PathState;
  tmp: string;
}

export interface RestoreRecord {
  version: 1;
  id: string;
  kind: 'restore' | 'undo';
  /** pending: changes may be half made; done: all made; undone: a later undo reverted it. */
  state: 'pending' | 'done' | 'undone';
  iteration: string;
  to: 'pre' | 'post';
  /** For an undo: the restore (or forced undo) it reverts. */
  undoes?: string;
  /**
   * Paths this change was forced over (changed since cairn recorded them; their bytes are in
   * `ops[].before`). An undo with any is itself what the next `--undo` reverts (once), so
   * forcing an undo can be taken back as forcing a restore can.
   */
  forced?: string[];
  startedAt: string;
  finishedAt?: string;
  ops: RestoreOp[];
  keeps: string[];
}

const RECORD_NAME = /^(\d{6})\.json$/;

export function openRestoresDir(root: string, create: boolean): ContainedDir | null {
  return ContainedDir.open(root, [...RESTORES_PARTS], create ? { create: true } : {});
}

/** Every readable record, oldest first. */
export function readRecords(dir: ContainedDir | null): RestoreRecord[] {
  if (dir === null) return [];
  const out: RestoreRecord[] = [];
  for (const entry of dir.entries()) {
    if (!RECORD_NAME.test(entry.name)) continue;
    try {
      const rec = JSON.parse((dir.readFile(entry.name) as Buffer).toString('utf8')) as RestoreRecord;
      if (rec.version === 1 && Array.isArray(rec.ops)) out.push(rec);
    } catch {
      // written atomically: a record either parses or was never published
    }
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

export function nextRecordId(records: readonly RestoreRecord[]): string {
  const last = records.length === 0 ? 0 : Number(records[records.length - 1]?.id);
  return String(last + 1).padStart(6, '0');
}

export function writeRecord(dir: ContainedDir, record: RestoreRecord): void {
  dir.writeFile(`${record.id}.json`, `${JSON.stringify(record)}\n`, { fsync: true });
}

/** A restore that targeted an iteration and was not undone: what `session list` and the reports show. */
export interface RestoreMark {
  to: 'pre' | 'post';
  /** The restore record's id (`000002`). */
  restore: string;
  /** When it finished (ISO 8601). */
  at: string;
}

/**
 * Per iteration name (`003`), the latest finished restore that targeted it and still stands (an
 * undo marks its restore `undone`). Read-only; a project without restores, or whose restores
 * directory cannot be read, has none.
 */
export function standingRestores(root: string): Map<string, RestoreMark> {
  const out = new Map<string, RestoreMark>();
  let dir: ContainedDir | null = null;
  try {
    dir = openRestoresDir(root, false);
    for (const r of readRecords(dir)) {
      if (r.kind === 'restore' && r.state === 'done') out.set(r.iteration, { to: r.to, restore: r.id, at: r.finishedAt ?? r.startedAt });
    }
  } catch {
    // a restores directory cairn cannot open (planted link, permissions): shown as not restored
  } finally {
    dir?.close();
  }
  return out;
}
