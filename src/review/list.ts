/** `cairn session list`: every iteration of a project at a glance, oldest first. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { standingRestores, type RestoreMark } from '../rewind/journal.js';
import { formatDuration } from '../session/duration.js';
import { PRE_SNAPSHOT_FILE } from '../session/files.js';
import { listIterationDirs } from '../session/records/iterations.js';
import { loadIteration } from './iteration.js';
import { buildReview, readSavedReview, summarise, type IterationSummary } from './summary.js';

export interface ListedIteration extends IterationSummary {
  /** False while the iteration is open (pre taken, no post yet). */
  finished: boolean;
  /** The restore that put the project back to this iteration's pre or post, unless undone; null: never restored. */
  restored: RestoreMark | null;
}

/**
 * The summaries of every numbered iteration. A finished iteration's counts come from its saved
 * review; one finished before reviews were saved is diffed now (and, if that fails, listed with
 * its file count only). A directory whose snapshots cannot be read is skipped.
 */
export function listIterations(root: string): ListedIteration[] {
  const out: ListedIteration[] = [];
  const restores = standingRestores(root);
  for (const dir of listIterationDirs(root)) {
    if (!fs.existsSync(path.join(dir, PRE_SNAPSHOT_FILE))) continue;
    let it;
    try {
      it = loadIteration(root, dir);
    } catch {
      continue;
    }
    if (it.post === null) {
      out.push({ ...summarise(it, []), finished: false, restored: null });
      continue;
    }
    const saved = readSavedReview(dir, root);
    if (saved !== null) {
      out.push({ ...saved.summary, finished: true, restored: restores.get(it.iteration) ?? null });
      continue;
    }
    let summary: IterationSummary;
    try {
      summary = buildReview(root, it).summary;
    } catch {
      summary = summarise(it, null);
    }
    out.push({ ...summary, finished: true, restored: restores.get(it.iteration) ?? null });
  }
  return out;
}

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').slice(0, 19);
}

/** One line per iteration, aligned columns, UTC times. */
export function renderIterationList(rows: readonly ListedIteration[]): string {
  if (rows.length === 0) return 'no iterations yet; run `cairn session pre` before the agent works and `cairn session post` after\n';
  const table = rows.map((r) => [
    r.iteration,
    when(r.startedAt),
    r.finished ? formatDuration(r.durationMs) : 'open',
    `${r.filesChanged} file${r.filesChanged === 1 ? '' : 's'}`,
    `+${r.additions} -${r.deletions}`,
    `${r.commits} commit${r.commits === 1 ? '' : 's'}`,
    r.tests === undefined ? 'no tests' : `${r.tests.passed} passed, ${r.tests.failed} failed`,
    r.restored === null ? '-' : `to ${r.restored.to}`,
  ]);
  const head = ['ITER', 'STARTED (UTC)', 'TOOK', 'FILES', 'LINES', 'COMMITS', 'TESTS', 'RESTORED'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...table.map(line)].join('\n')}\n`;
}
