import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError, errnoCode } from '../core/errors.js';
import { compileGlobs, validateGlob, type PathMatcher } from './glob.js';
import { HashPool, type HashJob } from './hash-pool.js';
import { processFile, type CachedFile, type FileOutcome } from './read-file.js';
import { cacheFilePath, defaultCacheDir, emptyCache, loadCache, saveCache, type StatCacheData } from './stat-cache.js';
import type { RepoSnapshotEntry, ScanOptions, ScanProgress, ScanResult, ScanWarning, SkippedEntry } from './types.js';
import { Walker, type WalkItem } from './walk.js';

/** Bumped when the scan's output for the same tree could change: old caches are then foreign. */
export const ENGINE_VERSION = 1;

/** Directory names never descended into, whatever the ignore rules say. */
export const ALWAYS_SKIP: readonly string[] = ['.git', '.cairn'];

/**
 * Racy-timestamp margin (git's "racy git" problem): a file or directory whose mtime/ctime is
 * not at least this much older than the scan start may still change within the same clock
 * tick after we looked, so it is not trusted from the cache next time. 2 s covers coarse
 * clocks (FAT, SMB/NFS, CONFIG_HZ) and is cheap: only just-touched files are re-read.
 */
const RACY_MARGIN_NS = 2_000_000_000n;

const BATCH_FILES = 32;
const BATCH_BYTES = 4 * 1024 * 1024;
/** Bytes charged to a file whose size is unknown yet (no cache record). */
const UNKNOWN_FILE_WEIGHT = 16 * 1024;
const READ_BUFFER_BYTES = 1 << 20;

interface Prepared {
  rootReal: string;
  include: PathMatcher | null;
  exclude: PathMatcher | null;
  respectGitignore: boolean;
  withDigest: boolean;
  skipNames: Set<string>;
  maxFiles: number;
  maxBytes: number;
  jobs: number;
  cacheFile: string | null;
  optionsKey: string;
  previous: StatCacheData;
  warnings: ScanWarning[];
}

function invalidOption(message: string, details: Record<string, unknown>): CairnError {
  return new CairnError('ERR_INVALID_OPTION', message, { details });
}

/** Resolves and checks the root: it must exist and be a directory; returns its real path. */
export function resolveRoot(root: string): string {
  if (typeof root !== 'string' || root === '') throw new CairnError('ERR_ROOT_REQUIRED', 'a root directory is required: pass the directory to snapshot');
  const abs = path.resolve(root);
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') throw new CairnError('ERR_ROOT_NOT_FOUND', `root ${abs} does not exist (or is a dangling link): pass an existing directory`, { path: abs });
    throw new CairnError('ERR_ROOT_NOT_FOUND', `root ${abs} cannot be accessed (${code ?? 'error'})`, { path: abs, cause: e });
  }
  if (!st.isDirectory()) throw new CairnError('ERR_ROOT_NOT_DIR', `root ${abs} is not a directory: pass the directory that holds the files`, { path: abs });
  return fs.realpathSync.native(abs);
}

function checkLimit(name: string, value: number | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw invalidOption(`${name} must be an integer >= ${min} (got ${String(value)})`, { option: name, value: String(value) });
  }
  return value;
}

function prepare(root: string, options: ScanOptions): Prepared {
  const include = options.include ?? [];
  const exclude = options.exclude ?? [];
  for (const g of [...include, ...exclude]) validateGlob(g);
  const maxFiles = checkLimit('maxFiles', options.maxFiles, 1) ?? Number.POSITIVE_INFINITY;
  const maxBytes = checkLimit('maxBytes', options.maxBytes, 0) ?? Number.POSITIVE_INFINITY;
  const jobs = checkLimit('jobs', options.jobs, 0) ?? 2;
  if (jobs > 64) throw invalidOption('jobs must be at most 64', { option: 'jobs', value: jobs });
  const skipNames = new Set([...ALWAYS_SKIP, ...(options.alwaysSkip ?? [])]);
  const rootReal = resolveRoot(root);
  const respectGitignore = options.respectGitignore !== false;
  const withDigest = options.withContentDigest !== false;
  const optionsKey = JSON.stringify({ engine: ENGINE_VERSION, include, exclude, respectGitignore, withDigest, skip: [...skipNames].sort() });
  const warnings: ScanWarning[] = [];
  let cacheFile: string | null = null;
  let previous = emptyCache();
  if (options.cache !== false) {
    const dir = path.resolve(options.cacheDir ?? defaultCacheDir());
    if (isInside(rootReal, realpathOrSelf(dir))) {
      // Read-only toward the root, always: a cache inside it would also show up in the snapshot.
      warnings.push({ code: 'CACHE_DISABLED', message: `stat cache not used: ${dir} is inside the snapshotted root`, path: dir });
    } else {
      cacheFile = cacheFilePath(dir, rootReal, optionsKey);
      const loaded = loadCache(cacheFile, rootReal, optionsKey);
      previous = loaded.data;
      if (loaded.warning !== undefined) warnings.push(loaded.warning);
    }
  }
  return { rootReal, include: compileGlobs(include), exclude: compileGlobs(exclude), respectGitignore, withDigest, skipNames, maxFiles, maxBytes, jobs, cacheFile, optionsKey, previous, warnings };
}

function realpathOrSelf(p: string): string {
  // The cache dir may not exist yet: resolve its nearest existing ancestor.
  let cur = p;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(cur), ...rest.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return p;
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

function isInside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith('/') ? root : `${root}/`);
}

interface ScanSlot {
  item: WalkItem;
  outcome?: FileOutcome;
}

/** State of one scan, shared by the synchronous and the worker-thread drivers. */
class ScanRun {
  readonly slots: ScanSlot[] = [];
  readonly walker: Walker;
  private readonly walkSkips: { s: SkippedEntry; position: number }[] = [];
  private readonly next: StatCacheData = emptyCache();
  private readonly racyFromNs: bigint;
  private readonly buf = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  private knownSkips = 0;
  private okBytes = 0;
  private cacheDirty = false;
  private readonly progress: ScanProgress = { phase: 'scan', filesSeen: 0, filesHashed: 0, bytesHashed: 0, filesCached: 0, filesDone: 0 };

  constructor(
    readonly p: Prepared,
    readonly options: ScanOptions,
  ) {
    this.racyFromNs = BigInt(Date.now()) * 1_000_000n - RACY_MARGIN_NS;
    this.walker = new Walker({
      rootReal: p.rootReal,
      include: p.include,
      exclude: p.exclude,
      respectGitignore: p.respectGitignore,
      skipNames: p.skipNames,
      previous: p.previous,
      next: this.next,
      racyFromNs: this.racyFromNs,
      readGitignore: (abs) => this.hashHere(abs, null, true),
      onSkip: (s, position) => this.walkSkips.push({ s, position }),
    });
  }

  /** More candidates are needed: the walk is not over and no budget is known to be exceeded. */
  wantMore(): boolean {
    return !this.walker.done && this.slots.length - this.knownSkips <= this.p.maxFiles && this.okBytes <= this.p.maxBytes;
  }

  checkAbort(): void {
    if (this.options.signal?.aborted) throw new CairnError('ERR_ABORTED', 'the scan was aborted; nothing was cached', { exitCode: 1 });
  }

  /** Next slot from the walk (already resolved when the walk knew the answer), or null. */
  pull(): ScanSlot | null {
    const item = this.walker.next();
    if (item === null) return null;
    const slot: ScanSlot = { item };
    this.slots.push(slot);
    this.progress.filesSeen++;
    if (item.outcome !== undefined) this.resolve(slot, item.outcome);
    return slot;
  }

  cachedFor(slot: ScanSlot): CachedFile | null {
    return this.p.previous.files.get(slot.item.cacheKey) ?? null;
  }

  hashHere(abs: string, cached: CachedFile | null, wantText: boolean): FileOutcome {
    return processFile(fs, crypto, abs, cached, this.p.withDigest, this.buf, wantText);
  }

  resolve(slot: ScanSlot, outcome: FileOutcome): void {
    slot.outcome = outcome;
    const pr = this.progress;
    pr.filesDone++;
    if (outcome.skip !== undefined) {
      this.knownSkips++;
      return;
    }
    this.okBytes += outcome.bytes;
    if (outcome.hashed) {
      pr.filesHashed++;
      pr.bytesHashed += outcome.bytes;
    } else if (outcome.sha !== undefined) pr.filesCached++;
    const st = outcome.stat;
    if (st === undefined || this.p.cacheFile === null) return;
    if (st[1] >= this.racyFromNs || st[2] >= this.racyFromNs) return; // racy: re-read next time
    const key = slot.item.cacheKey;
    const sha = outcome.sha ?? '';
    const old = this.p.previous.files.get(key);
    if (old === undefined || old.sha !== sha || old.stat.some((v, i) => v !== st[i])) this.cacheDirty = true;
    this.next.files.set(key, { stat: st, sha });
  }

  emitProgress(): void {
    this.options.onProgress?.({ ...this.progress });
  }

  /** Cuts the result at the budget, reports skips in walk order, saves the cache. */
  finish(): ScanResult {
    const p = this.p;
    const files: RepoSnapshotEntry[] = [];
    const slotSkips: { s: SkippedEntry; order: number }[] = [];
    let bytes = 0;
    let truncated = false;
    let cut = this.slots.length;
    for (let i = 0; i < this.slots.length; i++) {
      const { item, outcome } = this.slots[i]!;
      if (outcome === undefined) throw new Error('internal: unresolved scan slot');
      if (outcome.skip !== undefined) {
        const s: SkippedEntry = { path: item.rel, reason: outcome.skip };
        if (outcome.detail !== undefined) s.detail = outcome.detail;
        slotSkips.push({ s, order: 2 * i + 1 });
        continue;
      }
      // The seed's budget rule: stop at the first entry that does not fit.
      if (files.length >= p.maxFiles || bytes + outcome.bytes > p.maxBytes) {
        truncated = true;
        cut = i;
        break;
      }
      // The seed's key order; the digest re-orders keys itself (digest.ts).
      const mode = (outcome.mode & 0o100) !== 0 ? '0755' : '0644';
      files.push(
        outcome.sha !== undefined
          ? { path: item.rel, bytes: outcome.bytes, sha256: outcome.sha, mode, kind: item.kind }
          : { path: item.rel, bytes: outcome.bytes, mode, kind: item.kind },
      );
      bytes += outcome.bytes;
    }
    if (!truncated && !this.walker.done) truncated = true; // stopped by the budget before the cut was seen
    const skips = [...this.walkSkips.filter((w) => w.position <= cut).map((w) => ({ s: w.s, order: 2 * w.position })), ...slotSkips.filter((x) => x.order < 2 * cut)];
    skips.sort((a, b) => a.order - b.order);
    const skipped = skips.map((x) => x.s);

    const warnings = [...p.warnings];
    if (p.cacheFile !== null) {
      if (truncated) {
        // A capped run saw only part of the tree: keep what it did not see (still stat-checked on use).
        for (const [k, v] of p.previous.files) if (!this.next.files.has(k)) this.next.files.set(k, v);
        for (const [k, v] of p.previous.dirs) if (!this.next.dirs.has(k)) this.next.dirs.set(k, v);
      }
      let dirty = this.cacheDirty || this.next.files.size !== p.previous.files.size || this.next.dirs.size !== p.previous.dirs.size;
      if (!dirty) for (const [k, v] of this.next.dirs) if (p.previous.dirs.get(k) !== v) dirty = true;
      if (dirty) {
        const w = saveCache(p.cacheFile, this.next, p.rootReal, p.optionsKey);
        if (w !== undefined) warnings.push(w);
      }
    }
    for (const w of warnings) this.options.onWarning?.(w);
    for (const s of skipped) this.options.onSkip?.(s);
    this.progress.phase = 'done';
    this.emitProgress();
    return { files, truncated, counts: { files: files.length, bytes }, skipped, warnings };
  }
}

/**
 * The uncapped scanning engine, single-threaded: the same walk, cache and results as
 * `scanTree`, for callers that must stay synchronous (iteration snapshots).
 *
 * Returns every kept file and symlink of the tree (sorted by compareUtf8), `truncated`
 * (only with maxFiles/maxBytes), counts, and the skipped paths with reasons. Uses and updates
 * the stat cache unless `cache: false`.
 */
export function scanTreeSync(root: string, options: ScanOptions = {}): ScanResult {
  const run = new ScanRun(prepare(root, options), options);
  let sinceProgress = 0;
  while (run.wantMore()) {
    run.checkAbort();
    const slot = run.pull();
    if (slot === null) break;
    if (slot.outcome === undefined) run.resolve(slot, run.hashHere(slot.item.readPath, run.cachedFor(slot), false));
    if (++sinceProgress >= 256) {
      sinceProgress = 0;
      run.emitProgress();
    }
  }
  return run.finish();
}

/**
 * The uncapped scanning engine: the main thread walks (readdir, sort, ignore rules) and feeds
 * byte-balanced batches to `jobs` worker threads (default 2) that stat, read and hash. Same
 * results as `scanTreeSync`.
 *
 * Stable API (used by iteration snapshots): `scanTree(root, { include?, exclude?,
 * respectGitignore?, withContentDigest?, alwaysSkip?, maxFiles?, maxBytes?, cache?, cacheDir?,
 * jobs?, signal?, onProgress?, onSkip?, onWarning? })` →
 * `{ files, truncated, counts, skipped, warnings }`. Rejects with `ERR_ABORTED` when the signal
 * fires (workers are stopped at once and no cache is written).
 */
export async function scanTree(root: string, options: ScanOptions = {}): Promise<ScanResult> {
  const prepared = prepare(root, options);
  // Spawn before walking: worker start-up overlaps the first directory listings.
  const pool = prepared.jobs > 0 ? new HashPool(prepared.jobs, prepared.withDigest) : null;
  let abortListener: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    abortListener = () => reject(new CairnError('ERR_ABORTED', 'the scan was aborted; nothing was cached', { exitCode: 1 }));
    options.signal?.addEventListener('abort', abortListener, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    const run = new ScanRun(prepared, options);
    if (pool === null) {
      // jobs: 0 — hash on this thread, yielding now and then so the signal can fire.
      let n = 0;
      while (run.wantMore()) {
        run.checkAbort();
        const slot = run.pull();
        if (slot === null) break;
        if (slot.outcome === undefined) run.resolve(slot, run.hashHere(slot.item.readPath, run.cachedFor(slot), false));
        if (++n % 256 === 0) {
          run.emitProgress();
          await new Promise<void>((r) => setImmediate(r));
        }
      }
      run.checkAbort();
      return run.finish();
    }
    let failure: Error | undefined;
    const inFlight = new Set<Promise<void>>();
    let batch: ScanSlot[] = [];
    let jobs: HashJob[] = [];
    let weight = 0;
    const dispatch = (): void => {
      if (batch.length === 0) return;
      const slots = batch;
      const p = pool.submit(jobs).then(
        (outs) => {
          for (let i = 0; i < slots.length; i++) run.resolve(slots[i]!, outs[i]!);
          run.emitProgress();
        },
        (e: unknown) => {
          failure ??= e instanceof Error ? e : new Error(String(e));
        },
      );
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      batch = [];
      jobs = [];
      weight = 0;
    };
    for (;;) {
      while (run.wantMore()) {
        run.checkAbort();
        const slot = run.pull();
        if (slot === null) break;
        if (slot.outcome !== undefined) continue;
        const cached = run.cachedFor(slot);
        const size = cached !== null ? Number(cached.stat[0]) : UNKNOWN_FILE_WEIGHT;
        // A big file goes alone, so one long hash does not hold up a batch of small ones.
        if (size >= BATCH_BYTES) dispatch();
        batch.push(slot);
        jobs.push({ path: slot.item.readPath, cached });
        weight += size;
        if (batch.length >= BATCH_FILES || weight >= BATCH_BYTES) dispatch();
        while (pool.saturated && failure === undefined) await Promise.race([pool.whenProgress(), aborted]);
        if (failure !== undefined) throw failure;
      }
      dispatch();
      while (inFlight.size > 0) await Promise.race([Promise.all(inFlight), aborted]);
      if (failure !== undefined) throw failure;
      run.checkAbort();
      if (!run.wantMore()) break;
    }
    return run.finish();
  } catch (e) {
    if (e instanceof CairnError) throw e;
    throw new CairnError('ERR_IO', `scan failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e, exitCode: 1 });
  } finally {
    if (abortListener !== undefined) options.signal?.removeEventListener('abort', abortListener);
    await pool?.close();
  }
}
