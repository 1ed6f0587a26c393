/**
 * `cairn session restore`: puts the working tree back to an iteration's pre (or post) state.
 *
 * What it compares, per path: T, the target state (the iteration's inventory at that side);
 * R, the state cairn last recorded (the latest iteration's post, overlaid with what later
 * restores wrote); and D, what is on disk now. D is read as pre and post read it: an inventory
 * of the live tree through the engine's stat cache (a file whose stat is unchanged is not read),
 * so finding what changed since costs a scan, not a hash of every file. The paths looked at are
 * those the Merkle diffs R→T and D→T name and that T or R records, plus the paths restores wrote;
 * each of those is then read from disk itself (the scan only nominates). D = T: nothing to do.
 * D = R: the path is changed to T. Otherwise someone changed it since cairn recorded it: a
 * conflict, and nothing at all is changed (exit 3) unless `--force`. A path on disk that no
 * inventory involved records (a file made after post, an ignored one, `.git/`, `.cairn/`) is
 * never touched; commits and refs are left in place and reported.
 *
 * An open iteration (pre taken, post not: the agent is still at work or died) has recorded
 * nothing since its pre, so R is that pre: cairn cannot tell the agent's edits from anyone
 * else's, and every recorded path that changed since pre is a conflict. `--dry-run` lists them;
 * `--force` puts them back and keeps what it replaced for `--undo`; files made since pre are in
 * no inventory and stay. Taking the post first makes the same restore a plain one.
 *
 * A path restore cannot change even when forced (a directory holding files no inventory records
 * where a file goes back, a link cairn did not record where a directory goes back, the current
 * directory, bytes cairn never kept) is reported, and a restore that leaves one behind says which
 * (`unrestored`) and is a failure (exit 1), never a success.
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
import { SnapshotManager, readPostSnapshot, readPreSnapshot } from '../session/capture/snapshot-manager.js';
import type { PostSnapshot, PreSnapshot, SnapshotManagerOptions } from '../session/types.js';
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
  /**
   * cairn, `--dry-run` only: restores that were interrupted, which a real run finishes before it
   * plans (so its plan may differ from this one's, which sees the tree as they left it).
   */
  interrupted?: string[];
  /** cairn, `--undo` only: what it reverted was a forced undo (it brings back the edits that one replaced). */
  undidForcedUndo?: boolean;
  /** cairn: the git command that would move the branch back too (only when commits were made). */
  gitCommand?: string;
  /** cairn: paths this restore had to change and left as they are (forced past a conflict it cannot resolve, or bytes not kept). */
  unrestored: Array<{ path: string; reason: string }>;
  /** cairn: paths on disk that no inventory involved recorded (made since, or untracked by cairn), left alone; at most 20 named. */
  leftAlone?: { total: number; paths: string[] };
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
  /** The project's inventory excludes (config `exclude`), so the live scan shares pre's stat cache. */
  exclude?: string[];
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

/**
 * The current directories (this process's, and the caller's `cwd`) and their ancestors below
 * the root, relative to it: directories a restore never removes.
 */
function keptDirs(root: string, cwds: ReadonlyArray<string | undefined>): Set<string> {
  const out = new Set<string>();
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    return out;
  }
  for (const cwd of cwds) {
    if (cwd === undefined) continue;
    let rel: string;
    try {
      rel = path.relative(realRoot, fs.realpathSync(cwd));
    } catch {
      continue; // a current directory already gone keeps nothing
    }
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
    const parts = rel.split(path.sep);
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join('/'));
  }
  return out;
}

async function withRestoreLock<T>(root: string, timeoutMs: number, cwd: string | undefined, fn: (ctx: Context) => T): Promise<T> {
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
  const tree = new ProjectTree(root, keptDirs(root, [process.cwd(), cwd]));
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
/** A dry run finishes nothing: it names the interrupted restores a real run would finish first. */
function noteInterrupted(ctx: Context, result: RestoreResult): void {
  const pending = ctx.records.filter((r) => r.state === 'pending').map((r) => r.id);
  if (pending.length > 0) result.interrupted = pending;
}

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

/** Adds `path` to notRestorable once (the capture's record and the plan may both name it). */
function noteNotRestorable(result: RestoreResult, p: string, reason: string): void {
  if (!result.notRestorable.some((n) => n.path === p)) result.notRestorable.push({ path: p, reason });
}

const NOT_KEPT = 'content not kept (over the size cap, unreadable at capture, or lost from git before cairn copied it)';

/**
 * Plans T against R and D; fills conflicts, notRestorable and unrestored; returns the ops
 * (conflicting ones only with force). A conflict force cannot resolve (the path cannot be
 * reached or changed as restore is allowed to) is a conflict, and with force also unrestored.
 */
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
  const inWay: Array<[string, string]> = [];
  const conflicts = new Map<string, string | undefined>();
  const cannot = new Map<string, string>();
  for (const [p, t] of [...target].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (isProtected(p)) continue;
    if (t === null) {
      noteNotRestorable(result, p, 'target state not recorded (symlink target or digest missing)');
      continue;
    }
    const r = recorded(p);
    const disk = ctx.tree.read(p, sha256Of);
    if ('blocked' in disk) {
      cannot.set(p, disk.blocked);
      continue;
    }
    let current: PathState;
    if ('directory' in disk) {
      // As a file, the path is absent: the target's absence is already there.
      if (t.kind === 'absent') continue;
      // A directory where a file goes back (the agent turned a file into a directory): fine when
      // cairn recorded no file there and every file in it is deleted by this restore (checked below).
      if (r === null || r.kind !== 'absent') {
        cannot.set(p, 'a directory is where cairn recorded a file');
        continue;
      }
      dirsInWay.push(p);
      current = { kind: 'absent' };
    } else {
      current = disk.state;
      if (disk.inWay !== undefined) inWay.push([p, disk.inWay]);
    }
    if (sameState(current, t)) continue;
    const conflict = r === null ? current.kind !== t.kind : !sameState(current, r);
    if (conflict) {
      conflicts.set(p, undefined);
      if (!force) continue;
    }
    const op: PlannedOp = { path: p, before: current, after: t };
    if ('bytes' in disk && disk.bytes !== undefined) op.beforeBytes = disk.bytes;
    if (t.kind === 'file' && actionOf(current, t) !== 'mode') {
      const bytes = bytesOf(p, t);
      if (bytes === null) {
        noteNotRestorable(result, p, NOT_KEPT);
        result.unrestored.push({ path: p, reason: NOT_KEPT });
        continue;
      }
      op.afterBytes = bytes;
    }
    ops.push(op);
  }
  const deleted = new Set(ops.filter((op) => op.after.kind === 'absent').map((op) => op.path));
  for (const d of dirsInWay) {
    if (ctx.tree.kept(d)) cannot.set(d, 'a directory that is the current directory, or holds it, is where a file goes back');
    else if (ctx.tree.filesUnder(d).some((f) => !deleted.has(f))) cannot.set(d, 'a directory holding files no inventory recorded (new or ignored ones, which restore never deletes) is where a file goes back');
  }
  // A file or link where a directory of the target goes must itself be deleted by this restore.
  for (const [p, w] of inWay) if (!deleted.has(w)) cannot.set(p, `${w} (a file or link cairn does not remove here) stands where its directory goes back`);
  for (const [p, reason] of cannot) {
    conflicts.set(p, reason);
    if (force) result.unrestored.push({ path: p, reason });
  }
  for (const [p, reason] of [...conflicts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) result.conflicts.push(reason === undefined ? { path: p } : { path: p, reason });
  return ops.filter((op) => !cannot.has(op.path));
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
function commit(ctx: Context, kind: 'restore' | 'undo', iteration: string, to: 'pre' | 'post', ops: PlannedOp[], undoes?: string, forced: readonly string[] = []): string {
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
  if (forced.length > 0) record.forced = [...forced];
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
  const result: RestoreResult = { iteration: target.name, to, dryRun: options.dryRun ?? false, changes: [], conflicts: [], notRestorable: [], commits: commitList(span), alsoUndoes: newer.map((i) => i.name), unrestored: [] };
  const resetTo = to === 'pre' ? target.pre.git.commit : target.post?.git.commit;
  if (result.commits.length > 0 && resetTo !== undefined && resetTo !== 'unknown') result.gitCommand = `git reset ${resetTo}`;
  for (const n of notRestorableOf(target, to)) noteNotRestorable(result, n.path, n.reason);

  return withRestoreLock(root, options.lockTimeoutMs ?? 10_000, options.cwd, (ctx) => {
    if (!result.dryRun) {
      const recovered = recoverPending(ctx);
      if (recovered !== undefined) result.recovered = recovered;
    } else noteInterrupted(ctx, result);
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
    // What changed on disk since cairn recorded it: the live tree against R, not against T (a
    // path where disk and T differ differs from R or R from T, and R→T is walked above; the tree
    // is usually as R left it, the same digest, so this walk reads nothing). A path T records is
    // looked at; one only the disk has is looked at when a restore wrote it, else left alone (no
    // inventory has it).
    const leftAlone: string[] = [];
    const live = liveInventory(root, latest.pre.stateDir, options.exclude);
    let sinceRecorded: string[];
    try {
      sinceRecorded = ctx.inventories.changedEntries(live.digest, base.digest).map((c) => c.path).filter((p) => !targetEntries.has(p));
    } finally {
      live.store.release(live.digest);
    }
    if (sinceRecorded.length > 0) {
      const inTarget = ctx.inventories.lookup(targetDigest, sinceRecorded);
      for (const p of sinceRecorded) {
        const t = inTarget.get(p);
        if (t !== undefined) targetEntries.set(p, t);
        else if (!base.overlay.has(p)) leftAlone.push(p);
      }
    }
    if (leftAlone.length > 0) result.leftAlone = { total: leftAlone.length, paths: leftAlone.slice(0, 20) };
    const extra = [...base.overlay.keys()].filter((p) => !targetEntries.has(p));
    if (extra.length > 0) {
      const found = ctx.inventories.lookup(targetDigest, extra);
      for (const p of extra) targetEntries.set(p, found.get(p) ?? null);
    }
    for (const [p, e] of targetEntries) states.set(p, stateOf(e, targetLinks));
    const baseLookup = ctx.inventories.lookup(base.digest, [...targetEntries.keys()].filter((p) => !baseEntries.has(p)));
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

/**
 * The live tree's inventory, taken as pre and post take theirs (its stat cache, the state dir
 * and excludes they use), stored so the Merkle diff can walk it; released by the caller.
 */
function liveInventory(root: string, stateDir: string | undefined, exclude: string[] | undefined): { digest: string; store: InventoryStore } {
  const options: SnapshotManagerOptions = {};
  if (stateDir !== undefined) options.stateDir = stateDir;
  if (exclude !== undefined) options.exclude = exclude;
  const live = new SnapshotManager(root, options).inventoryNow(root);
  if (live === null) throw new CairnError('ERR_NOT_FOUND', 'the working tree could not be inventoried');
  return live;
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
  return withRestoreLock(root, options.lockTimeoutMs ?? 10_000, options.cwd, (ctx) => {
    let recovered: { restoreId: string; conflicts: string[] } | undefined;
    if (!(options.dryRun ?? false)) recovered = recoverPending(ctx);
    // The most recent restore; or a forced undo, whose replaced edits only undoing it brings back.
    const last = [...ctx.records].reverse().find((r) => (r.kind === 'restore' && (r.state === 'done' || r.state === 'pending')) || (r.kind === 'undo' && r.state === 'done' && (r.forced?.length ?? 0) > 0));
    if (last === undefined) throw new CairnError('ERR_USAGE', 'there is no restore to undo', { exitCode: 2 });
    const result: RestoreResult = { iteration: last.iteration, to: last.to, dryRun: options.dryRun ?? false, changes: [], conflicts: [], notRestorable: [], commits: [], undo: true, undid: last.id, alsoUndoes: [], unrestored: [] };
    if (last.kind === 'undo') result.undidForcedUndo = true;
    if (recovered !== undefined) result.recovered = recovered;
    if (result.dryRun) noteInterrupted(ctx, result);
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
    const forced = (options.force ?? false) ? result.conflicts.map((c) => c.path).filter((p) => !result.unrestored.some((u) => u.path === p)) : [];
    if (ops.length > 0) result.restoreId = commit(ctx, 'undo', last.iteration, last.to, ops, last.id, forced);
    const restores = openRestoresDir(root, true) as NonNullable<ReturnType<typeof openRestoresDir>>;
    try {
      // Undoing a forced undo does not put its restore back in force: the tree now holds edits
      // made after that restore, which undoing it again would replace with nothing to bring them back.
      last.state = 'undone';
      writeRecord(restores, last);
    } finally {
      restores.close();
    }
    return result;
  });
}
