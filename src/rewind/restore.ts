/**
 * `cairn session restore`: puts the working tree back to an iteration's pre (or post) state.
 *
 * What it compares, per path: T, the target state (the iteration's inventory at that side);
 * R, the state cairn last recorded (the latest iteration's post, or its pre while it runs,
 * overlaid with what later restores wrote); and D, what is on disk now. Paths are taken from the
 * Merkle diff of R's inventory against T's plus the paths restores wrote, so the work is
 * O(changed), never O(tree). D = T: nothing to do. D = R: the path is changed to T. Otherwise
 * someone changed it since cairn recorded it: a conflict, and nothing at all is changed (exit 3)
 * unless `--force`. Ignored files, `.git/`, `.cairn/` and unrecorded paths are never in either
 * inventory, so they are never touched; commits and refs are left in place and reported.
 *
 * How it changes things: the bytes of every state it writes or replaces go into the content
 * store first; then a record (journal.ts) lists the ops, `pending`; then deletes (deepest
 * first), empty directories the deletes left, and writes (temp name + rename, atomic per file);
 * then the record is `done`. A restore killed anywhere is found `pending` by the next restore or
 * `--undo`, which finishes it from the record (each op is either at `before`, at `after`, or its
 * temp file is left) and says so.
 */
import * as path from 'node:path';
import { ContainedDir } from '../core/contained-dir.js';
import { acquireDirLock } from '../core/lock.js';
import { CairnError } from '../core/errors.js';
import { commitsOf } from '../content/read.js';
import { openContentStore } from '../content/capture.js';
import { ContentResolver } from '../content/resolve.js';
import { sha256Of, type ContentItem } from '../content/store.js';
import { POST_SNAPSHOT_FILE, PRE_SNAPSHOT_FILE } from '../session/files.js';
import { InventoryStore, type InventoryEntry } from '../session/inventory-store/inventory-store.js';
import { iterationName, listIterationDirs, resolveIterationDir } from '../session/records/iterations.js';
import { readPostSnapshot, readPreSnapshot } from '../session/capture/snapshot-manager.js';
import type { PostSnapshot, PreSnapshot } from '../session/types.js';
import { nextRecordId, openRestoresDir, readRecords, writeRecord, type RestoreOp, type RestoreRecord } from './journal.js';
import { lineCounts } from '../review/diff.js';
import { ProjectTree, sameState, type PathState } from './tree.js';
import * as fs from 'node:fs';

export type RestoreAction = 'write' | 'delete' | 'mode' | 'symlink';

export interface RestoreChange {
  path: string;
  action: RestoreAction;
  additions?: number;
  deletions?: number;
}

export interface RestoreResult {
  iteration: string;
  to: 'pre' | 'post';
  dryRun: boolean;
  changes: RestoreChange[];
  conflicts: Array<{ path: string; reason?: string }>;
  notRestorable: Array<{ path: string; reason: string }>;
  commits: Array<{ id: string; subject: string }>;
  /** cairn: this was `--undo` (of restore `undid`). */
  undo?: boolean;
  undid?: string;
  /** cairn: the restore record written (absent for a dry run or when nothing changed). */
  restoreId?: string;
  /** cairn: newer iterations whose changes this restore also undoes. */
  alsoUndoes: string[];
  /** cairn: an interrupted restore found and finished first. */
  recovered?: { restoreId: string; conflicts: string[] };
  /** cairn: the git command that would move the branch back too (only when commits were made). */
  gitCommand?: string;
}

export interface RestoreOptions {
  root: string;
  iteration?: string;
  to?: 'pre' | 'post';
  dryRun?: boolean;
  force?: boolean;
  /** Where a relative iteration directory is resolved (default process.cwd()). */
  cwd?: string;
  /** How long to wait for another restore of the same project (default 10 s). */
  lockTimeoutMs?: number;
}

interface Iter {
  name: string;
  dir: string;
  pre: PreSnapshot;
  post: PostSnapshot | null;
}

function loadIteration(dir: string): Iter {
  const pre = readPreSnapshot(path.join(dir, PRE_SNAPSHOT_FILE));
  let post: PostSnapshot | null = null;
  if (fs.existsSync(path.join(dir, POST_SNAPSHOT_FILE))) post = readPostSnapshot(path.join(dir, POST_SNAPSHOT_FILE));
  return { name: iterationName(dir), dir, pre, post };
}

function isProtected(rel: string): boolean {
  const segments = rel.split('/');
  return segments[0] === '.cairn' || segments.includes('.git');
}

function stateOf(entry: InventoryEntry | undefined | null, links: Record<string, string> | undefined): PathState | null {
  if (entry === undefined || entry === null) return { kind: 'absent' };
  if (entry.kind === 'symlink') {
    const target = links?.[entry.path];
    return target === undefined ? null : { kind: 'symlink', target };
  }
  if (entry.sha256 === undefined) return null;
  return { kind: 'file', sha256: entry.sha256, mode: entry.mode };
}

function actionOf(before: PathState, after: PathState): RestoreAction {
  if (after.kind === 'absent') return 'delete';
  if (after.kind === 'symlink') return 'symlink';
  if (before.kind === 'file' && before.sha256 === after.sha256) return 'mode';
  return 'write';
}

interface PlannedOp {
  path: string;
  before: PathState;
  after: PathState;
  beforeBytes?: Buffer;
  afterBytes?: Buffer;
}

interface Context {
  root: string;
  tree: ProjectTree;
  inventories: InventoryStore;
  store: ReturnType<typeof openContentStore>;
  records: RestoreRecord[];
}

async function withRestoreLock<T>(root: string, timeoutMs: number, fn: (ctx: Context) => T): Promise<T> {
  const restores = openRestoresDir(root, true) as NonNullable<ReturnType<typeof openRestoresDir>>;
  // The lock is made through the opened .cairn (no link followed below the root), as the stage lock is.
  const cairn = ContainedDir.require(root, ['.cairn']);
  let lock: Awaited<ReturnType<typeof acquireDirLock>>;
  try {
    lock = await acquireDirLock(cairn.at('restore.lock'), {
      timeoutMs,
      shownPath: cairn.shown('restore.lock'),
      timeoutMessage: (ms) => `another restore of this project is running (lock ${cairn.shown('restore.lock')} held for ${Math.round(ms / 1000)} s); wait for it and retry`,
    });
  } catch (e) {
    cairn.close();
    restores.close();
    throw e;
  }
  const tree = new ProjectTree(root);
  try {
    const ctx: Context = {
      root,
      tree,
      inventories: new InventoryStore(path.join(root, '.cairn', 'inventories'), { within: root }),
      store: openContentStore(path.join(root, '.cairn')),
      records: readRecords(restores),
    };
    return fn(ctx);
  } finally {
    tree.close();
    restores.close();
    lock.releaseSync();
    cairn.close();
  }
}

function tmpName(id: string, i: number): string {
  return `.cairn-restore-${id}-${i}`;
}

/** Finishes a restore that was killed (state pending): each op still at `before` is made; ones changed by someone since are left and named. */
function recoverPending(ctx: Context): { restoreId: string; conflicts: string[] } | undefined {
  const pending = ctx.records.filter((r) => r.state === 'pending');
  if (pending.length === 0) return undefined;
  const conflicts: string[] = [];
  let last: string | undefined;
  const restores = openRestoresDir(ctx.root, true) as NonNullable<ReturnType<typeof openRestoresDir>>;
  try {
    for (const rec of pending) {
      last = rec.id;
      const todo: PlannedOp[] = [];
      for (const op of rec.ops) {
        ctx.tree.removeTemp(op.path, op.tmp);
        let disk = ctx.tree.read(op.path, sha256Of);
        if ('directory' in disk && op.before.kind === 'absent') {
          ctx.tree.pruneEmptyDirs(op.path);
          disk = ctx.tree.read(op.path, sha256Of);
        }
        if ('state' in disk && sameState(disk.state, op.after)) continue;
        if ('state' in disk && sameState(disk.state, op.before)) {
          const planned: PlannedOp = { path: op.path, before: op.before, after: op.after };
          if (op.after.kind === 'file') planned.afterBytes = ctx.store.get(op.after.sha256);
          todo.push(planned);
        } else conflicts.push(op.path);
      }
      applyOps(ctx, rec.id, todo, rec.ops);
      rec.state = 'done';
      rec.finishedAt = new Date().toISOString();
      writeRecord(restores, rec);
    }
  } finally {
    restores.close();
  }
  return { restoreId: last as string, conflicts };
}

/** Deletes (deepest first), empty directories they leave, then writes; each op through its temp name. */
function applyOps(ctx: Context, id: string, ops: readonly PlannedOp[], recorded: readonly RestoreOp[]): void {
  const tmpOf = new Map(recorded.map((op) => [op.path, op.tmp]));
  const deletes = ops.filter((op) => op.after.kind === 'absent').sort((a, b) => b.path.split('/').length - a.path.split('/').length || (a.path < b.path ? -1 : 1));
  const emptied = new Set<string>();
  for (const op of deletes) {
    if (ctx.tree.remove(op.path)) {
      const at = op.path.lastIndexOf('/');
      if (at > 0) emptied.add(op.path.slice(0, at));
    }
  }
  for (const dir of [...emptied].sort((a, b) => b.length - a.length)) ctx.tree.pruneEmptyDirs(dir);
  for (const op of ops) {
    const tmp = tmpOf.get(op.path) ?? tmpName(id, 0);
    if (op.after.kind === 'file') {
      if (actionOf(op.before, op.after) === 'mode') ctx.tree.chmod(op.path, op.after.mode);
      else ctx.tree.writeFile(op.path, op.afterBytes as Buffer, op.after.mode, tmp);
    } else if (op.after.kind === 'symlink') ctx.tree.writeSymlink(op.path, op.after.target, tmp);
  }
}

/** The state cairn last recorded, per path: the latest iteration's post (or pre), then what restores since wrote. */
function recordedBase(ctx: Context, latest: Iter): { digest: string; links: Record<string, string> | undefined; overlay: Map<string, PathState> } {
  const side = latest.post?.inventory !== undefined ? latest.post : latest.pre;
  const digest = side?.inventory?.digest;
  if (digest === undefined) throw new CairnError('ERR_NOT_FOUND', `iteration ${latest.name} has no inventory; restore needs iterations taken with the inventory on`);
  const since = side.timestamp;
  const overlay = new Map<string, PathState>();
  for (const rec of ctx.records) {
    if (rec.startedAt < since) continue;
    for (const op of rec.ops) overlay.set(op.path, op.after);
  }
  return { digest, links: side.content?.symlinks, overlay };
}

function commitList(iters: readonly Iter[]): Array<{ id: string; subject: string }> {
  const out: Array<{ id: string; subject: string }> = [];
  for (const it of iters) {
    for (const line of it.post?.commits ?? []) {
      const at = line.indexOf(' ');
      out.push(at < 0 ? { id: line, subject: '' } : { id: line.slice(0, at), subject: line.slice(at + 1) });
    }
  }
  return out;
}

/** Plans T against R and D; fills conflicts and notRestorable; returns the ops (conflicting ones only with force). */
function plan(
  ctx: Context,
  target: Map<string, PathState | null>,
  recorded: (p: string) => PathState | null,
  bytesOf: (p: string, s: PathState) => Buffer | null,
  force: boolean,
  result: RestoreResult,
): PlannedOp[] {
  const ops: PlannedOp[] = [];
  const dirsInWay: string[] = [];
  const filesInWay: Array<[string, string]> = [];
  for (const [p, t] of [...target].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (isProtected(p)) continue;
    if (t === null) {
      result.notRestorable.push({ path: p, reason: 'target state not recorded (symlink target or digest missing)' });
      continue;
    }
    const r = recorded(p);
    if (r !== null && sameState(r, t)) continue;
    const disk = ctx.tree.read(p, sha256Of);
    if ('blocked' in disk) {
      result.conflicts.push({ path: p, reason: disk.blocked });
      continue;
    }
    let current: PathState;
    if ('directory' in disk) {
      // A directory where a file goes back (the agent turned a file into a directory): fine when
      // cairn recorded no file there and every file in it is deleted by this restore (checked below).
      if (r === null || r.kind !== 'absent' || t.kind === 'absent') {
        result.conflicts.push({ path: p, reason: 'a directory is where cairn recorded a file' });
        continue;
      }
      dirsInWay.push(p);
      current = { kind: 'absent' };
    } else {
      current = disk.state;
      if (disk.fileInWay !== undefined) filesInWay.push([p, disk.fileInWay]);
    }
    if (sameState(current, t)) continue;
    const conflict = r === null ? current.kind !== t.kind : !sameState(current, r);
    if (conflict) {
      result.conflicts.push({ path: p });
      if (!force) continue;
    }
    const op: PlannedOp = { path: p, before: current, after: t };
    if ('bytes' in disk && disk.bytes !== undefined) op.beforeBytes = disk.bytes;
    if (t.kind === 'file' && actionOf(current, t) !== 'mode') {
      const bytes = bytesOf(p, t);
      if (bytes === null) {
        result.notRestorable.push({ path: p, reason: 'content not kept (over the size cap, unreadable at capture, or lost from git before cairn copied it)' });
        continue;
      }
      op.afterBytes = bytes;
    }
    ops.push(op);
  }
  if (dirsInWay.length === 0 && filesInWay.length === 0) return ops;
  const deleted = new Set(ops.filter((op) => op.after.kind === 'absent').map((op) => op.path));
  const blocked = new Set(dirsInWay.filter((d) => ctx.tree.filesUnder(d).some((f) => !deleted.has(f))));
  // A file where a directory of the target goes must itself be deleted by this restore.
  for (const [p, file] of filesInWay) {
    if (!deleted.has(file)) {
      blocked.add(p);
      result.conflicts.push({ path: p, reason: `${file} is a file where its directory goes back` });
    }
  }
  for (const d of dirsInWay) if (blocked.has(d)) result.conflicts.push({ path: d, reason: 'a directory holding files cairn did not record is where a file goes back' });
  return ops.filter((op) => !blocked.has(op.path));
}

function describe(ops: readonly PlannedOp[]): RestoreChange[] {
  return ops.map((op) => {
    const change: RestoreChange = { path: op.path, action: actionOf(op.before, op.after) };
    if ((change.action === 'write' || change.action === 'delete') && (op.before.kind === 'file' || op.after.kind === 'file')) {
      const counts = lineCounts(op.beforeBytes ?? null, op.afterBytes ?? null);
      if (counts !== null) Object.assign(change, counts);
    }
    return change;
  });
}

/** Stores every file state's bytes, writes the pending record, applies, marks it done. */
function commit(ctx: Context, kind: 'restore' | 'undo', iteration: string, to: 'pre' | 'post', ops: PlannedOp[], undoes?: string): string {
  const items: ContentItem[] = [];
  for (const op of ops) {
    if (op.before.kind === 'file' && op.beforeBytes !== undefined) items.push({ sha256: op.before.sha256, bytes: op.beforeBytes });
    if (op.after.kind === 'file' && op.afterBytes !== undefined) items.push({ sha256: op.after.sha256, bytes: op.afterBytes });
  }
  ctx.store.put(items);
  const id = nextRecordId(ctx.records);
  const recorded: RestoreOp[] = ops.map((op, i) => ({ path: op.path, before: op.before, after: op.after, tmp: tmpName(id, i) }));
  const keeps = [...new Set(ops.flatMap((op) => [op.before, op.after]).flatMap((s) => (s.kind === 'file' ? [s.sha256] : [])))];
  const record: RestoreRecord = { version: 1, id, kind, state: 'pending', iteration, to, startedAt: new Date().toISOString(), ops: recorded, keeps };
  if (undoes !== undefined) record.undoes = undoes;
  const restores = openRestoresDir(ctx.root, true) as NonNullable<ReturnType<typeof openRestoresDir>>;
  try {
    writeRecord(restores, record);
    applyOps(ctx, id, ops, recorded);
    record.state = 'done';
    record.finishedAt = new Date().toISOString();
    writeRecord(restores, record);
  } finally {
    restores.close();
  }
  ctx.records.push(record);
  return id;
}

/** `cairn session restore [ITERATION] [--to pre|post] [--dry-run] [--force]`. */
export async function restoreIteration(options: RestoreOptions): Promise<RestoreResult> {
  const root = path.resolve(options.root);
  const to = options.to ?? 'pre';
  if (to !== 'pre' && to !== 'post') throw new CairnError('ERR_USAGE', `--to must be pre or post, got ${JSON.stringify(to)}`);
  const targetDir = resolveIterationDir(root, options.iteration, options.cwd);
  const all = listIterationDirs(root).filter((d) => fs.existsSync(path.join(d, PRE_SNAPSHOT_FILE)));
  const target = loadIteration(targetDir);
  const latest = loadIteration(all[all.length - 1] ?? targetDir);
  const side = to === 'pre' ? target.pre : target.post;
  if (side === null) throw new CairnError('ERR_USAGE', `iteration ${target.name} has no post-snapshot yet; restore --to pre, or run \`cairn session post\` first`);
  if (side.inventory === undefined) throw new CairnError('ERR_NOT_FOUND', `iteration ${target.name} has no ${to} inventory (taken with --no-inventory); it cannot be restored`);
  const targetNumber = Number(target.name);
  const newer = all.filter((d) => Number(path.basename(d)) > targetNumber).map((d) => loadIteration(d));
  const span = to === 'pre' ? [target, ...newer] : newer;
  const result: RestoreResult = { iteration: target.name, to, dryRun: options.dryRun ?? false, changes: [], conflicts: [], notRestorable: [], commits: commitList(span), alsoUndoes: newer.map((i) => i.name) };
  const resetTo = to === 'pre' ? target.pre.git.commit : target.post?.git.commit;
  if (result.commits.length > 0 && resetTo !== undefined && resetTo !== 'unknown') result.gitCommand = `git reset ${resetTo}`;
  for (const n of [...notRestorableOf(target, to)]) result.notRestorable.push(n);

  return withRestoreLock(root, options.lockTimeoutMs ?? 10_000, (ctx) => {
    if (!result.dryRun) {
      const recovered = recoverPending(ctx);
      if (recovered !== undefined) result.recovered = recovered;
    }
    const base = recordedBase(ctx, latest);
    const targetDigest = side.inventory?.digest as string;
    const targetLinks = side.content?.symlinks;
    const states = new Map<string, PathState | null>();
    const baseEntries = new Map<string, InventoryEntry | null>();
    const targetEntries = new Map<string, InventoryEntry | null>();
    for (const c of ctx.inventories.changedEntries(base.digest, targetDigest)) {
      baseEntries.set(c.path, c.before);
      targetEntries.set(c.path, c.after);
    }
    const extra = [...base.overlay.keys()].filter((p) => !targetEntries.has(p));
    if (extra.length > 0) {
      const found = ctx.inventories.lookup(targetDigest, extra);
      for (const p of extra) targetEntries.set(p, found.get(p) ?? null);
    }
    for (const [p, e] of targetEntries) states.set(p, stateOf(e, targetLinks));
    const baseLookup = ctx.inventories.lookup(base.digest, extra);
    const recorded = (p: string): PathState | null => base.overlay.get(p) ?? stateOf(baseEntries.has(p) ? baseEntries.get(p) : (baseLookup.get(p) ?? null), base.links);
    const commits = [...new Set([...commitsOf(target.pre, target.post, to), ...newer.flatMap((i) => commitsOf(i.pre, i.post, 'pre'))])];
    const resolver = new ContentResolver(root, ctx.store, commits);
    const wanted = [...targetEntries.values()].filter((e): e is InventoryEntry => e !== null && e.kind === 'file');
    resolver.prefetch(wanted);
    const bytesOf = (p: string): Buffer | null => {
      const e = targetEntries.get(p);
      return e === null || e === undefined ? null : resolver.bytes(e);
    };
    const ops = plan(ctx, states, recorded, bytesOf, options.force ?? false, result);
    result.changes = describe(ops);
    if (result.dryRun || (result.conflicts.length > 0 && !(options.force ?? false)) || ops.length === 0) return result;
    result.restoreId = commit(ctx, 'restore', target.name, to, ops);
    return result;
  });
}

function notRestorableOf(it: Iter, to: 'pre' | 'post'): Array<{ path: string; reason: string }> {
  const rec = to === 'pre' ? it.pre.content : it.post?.content;
  const list = [...(rec?.notRestorable ?? []), ...(to === 'pre' ? (it.post?.content?.preNotRestorable ?? []) : [])];
  return list.map((n) => ({ path: n.path, reason: n.reason }));
}

/** `cairn session restore --undo`: reverts the most recent restore exactly (same conflict rule). */
export async function undoLastRestore(options: Omit<RestoreOptions, 'iteration' | 'to'>): Promise<RestoreResult> {
  const root = path.resolve(options.root);
  const all = listIterationDirs(root).filter((d) => fs.existsSync(path.join(d, PRE_SNAPSHOT_FILE)));
  return withRestoreLock(root, options.lockTimeoutMs ?? 10_000, (ctx) => {
    let recovered: { restoreId: string; conflicts: string[] } | undefined;
    if (!(options.dryRun ?? false)) recovered = recoverPending(ctx);
    const last = [...ctx.records].reverse().find((r) => r.kind === 'restore' && (r.state === 'done' || r.state === 'pending'));
    if (last === undefined) throw new CairnError('ERR_USAGE', 'there is no restore to undo', { exitCode: 2 });
    const result: RestoreResult = { iteration: last.iteration, to: last.to, dryRun: options.dryRun ?? false, changes: [], conflicts: [], notRestorable: [], commits: [], undo: true, undid: last.id, alsoUndoes: [] };
    if (recovered !== undefined) result.recovered = recovered;
    const latestDir = all[all.length - 1];
    if (latestDir !== undefined) {
      const latest = loadIteration(latestDir);
      const newest = latest.post?.timestamp ?? latest.pre.timestamp;
      if (newest > last.startedAt) {
        throw new CairnError('ERR_USAGE', `iteration ${latest.name} ran after restore ${last.id}; undoing the restore now would also undo that iteration's work: restore iteration ${latest.name} --to pre instead`, { exitCode: 2 });
      }
    }
    // What the restore wrote, as later records left it, is the recorded state.
    const recordedNow = new Map<string, PathState>();
    for (const rec of ctx.records) if (rec.startedAt >= last.startedAt) for (const op of rec.ops) recordedNow.set(op.path, op.after);
    const states = new Map<string, PathState | null>(last.ops.map((op) => [op.path, op.before]));
    const bytesOf = (_p: string, s: PathState): Buffer | null => {
      if (s.kind !== 'file') return null;
      try {
        return ctx.store.get(s.sha256);
      } catch {
        return null;
      }
    };
    const ops = plan(ctx, states, (p) => recordedNow.get(p) ?? null, bytesOf, options.force ?? false, result);
    result.changes = describe(ops);
    if (result.dryRun || (result.conflicts.length > 0 && !(options.force ?? false))) return result;
    if (ops.length > 0) result.restoreId = commit(ctx, 'undo', last.iteration, last.to, ops, last.id);
    const restores = openRestoresDir(root, true) as NonNullable<ReturnType<typeof openRestoresDir>>;
    try {
      last.state = 'undone';
      writeRecord(restores, last);
    } finally {
      restores.close();
    }
    return result;
  });
}
