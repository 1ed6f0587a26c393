import { CairnError } from '../core/errors.js';
import { entryMode } from './entry-mode.js';
import { HashPool } from './io/hash-pool.js';
import { abortError, endCacheSource, keepSaved, prepare, tellCacheState, type Prepared } from './walk/prepare.js';
import { earlierRacyFrom, isRacy, racyFromNow, type RacyFrom } from './rules/racy.js';
import { BATCH_CAPACITY, BATCH_SLOT_BYTES, batchViews, CACHED, fileReader, processFile, runBatch, STATUS, STAT_FIELDS, type BatchViews, type FileOutcome, type FileReader } from './io/read-file.js';
import { canonicalMemoPath, renderMemoPath } from './cache/artefacts.js';
import { emptyCache, ensureCacheDir, HAS_SHA, RACY, saveCache, type StatCacheData } from './cache/stat-cache.js';
import { LINK_ROW, sameRows, type StoredResult } from './cache/result.js';
import { tryStoredResult, tryStoredResultParallel, type Confirmed, type FastPathOutcome } from './fastpath/stored-result.js';
import { debugChannel, fallbackReason } from '../core/debug.js';
import { computeDigestOf, freezeFiles, scannedBody, type ScannedBody } from './digest.js';
import { digestWithMemo } from './memo/digest-memo.js';
import type { RepoSnapshotEntry, ScanOptions, ScanProgress, ScanResult, SkipReason, SkippedEntry } from './types.js';
import { Walker, type WalkItem } from './walk/walk.js';

export { ALWAYS_SKIP, resolveSnapshotRoot } from './walk/prepare.js';
export { SCAN_ENGINE_VERSION } from './cache/artefacts.js';

/** `CAIRN_DEBUG=inventory`: one line on stderr per scan saying which way it went, and why. */
const debug = debugChannel('inventory');

/**
 * What a scan hands on: its result and, when it made the body's digest (`scanForSnapshot`), the
 * handle the document and its rendering take it from (see ScannedBody).
 */
export interface Scanned {
  result: ScanResult;
  body: ScannedBody | undefined;
}

function explain(p: Prepared, fast: FastPathOutcome): void {
  if (debug === null) return;
  if (fast.kind === 'walk') debug(`walk: ${fast.reason} (${p.rootReal})`);
  else debug(`${fast.kind}: the stored result, ${fast.rowsChanged} row${fast.rowsChanged === 1 ? '' : 's'} read again (${p.rootReal})`);
}

const BATCH_FILES = BATCH_CAPACITY;
const BATCH_BYTES = 4 * 1024 * 1024;
/** Bytes charged to a file whose size is unknown yet (no cache record). */
const UNKNOWN_FILE_WEIGHT = 16 * 1024;
/** Files hashed on the main thread before worker threads are worth starting. */
const INLINE_FIRST_FILES = 400;

const SKIP_OF_STATUS: Record<number, SkipReason> = {
  [STATUS.VANISHED]: 'vanished',
  [STATUS.UNREADABLE]: 'unreadable',
  [STATUS.UNSTABLE]: 'unstable',
  [STATUS.NOT_REGULAR]: 'not-regular-file',
};

/** The digests a scan found, 32 bytes each, in the order they came. */
class DigestTable {
  private bytes = new Uint8Array(32 * 1024);
  private n = 0;

  add(src: Uint8Array, off: number): number {
    if ((this.n + 1) * 32 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes.set(src.subarray(off, off + 32), this.n * 32);
    return this.n++;
  }

  hex(): string {
    return Buffer.from(this.bytes.buffer, 0, this.n * 32).toString('hex');
  }
}

/** One candidate file in walk order and, once known, its result. */
type ScanSlot = WalkItem;

/** A batch being filled: the slots, their read paths and cache rows (-1: none). */
class PendingBatch {
  readonly slots: ScanSlot[] = [];
  readonly paths: string[] = [];
  readonly cacheRows: number[] = [];
  weight = 0;

  get full(): boolean {
    return this.slots.length >= BATCH_FILES || this.weight >= BATCH_BYTES;
  }
}

/** State of one scan, shared by the synchronous and the worker-thread drivers. */
class ScanRun {
  readonly slots: ScanSlot[] = [];
  readonly walker: Walker;
  private readonly walkSkips: { s: SkippedEntry; position: number }[] = [];
  private readonly next: StatCacheData = emptyCache();
  private readonly racyFrom: RacyFrom;
  /** rootReal + '/': a regular file's read path is this + its rel. */
  private readonly rootPrefix: string;
  /** This thread's reads: .gitignore files, and batches hashed here. */
  private readonly reader: FileReader;
  private knownSkips = 0;
  /**
   * Every directory and file this result depends on is in the new cache (directories not
   * racy; racy files flagged), with no symlinks and no I/O skips: only then is the result
   * stored for the stored-result fast path.
   */
  private trusted = true;
  private okBytes = 0;
  private cacheDirty = false;
  private readonly shaTable = new DigestTable();
  /** Set by storeResult when the body's digest was made (digestBody). */
  private scanned: ScannedBody | undefined;
  private readonly progress: ScanProgress = { phase: 'scan', filesSeen: 0, filesHashed: 0, bytesHashed: 0, filesCached: 0, filesDone: 0 };

  constructor(
    readonly p: Prepared,
    readonly options: ScanOptions,
    /** What the fast path's lstat pass confirmed before it left the decision to the walk. */
    private readonly confirmed: Confirmed | undefined,
    /** The caller makes a RepoSnapshot of the result: compute its digest once, store it with the result. */
    private readonly digestBody = false,
  ) {
    this.racyFrom = earlierRacyFrom(racyFromNow(p.racy), confirmed?.racyFrom);
    this.rootPrefix = p.rootReal.endsWith('/') ? p.rootReal : `${p.rootReal}/`;
    this.reader = fileReader(p.withDigest);
    this.walker = new Walker({
      rootReal: p.rootReal,
      include: p.include,
      exclude: p.exclude,
      excludeDirs: p.excludeDirs,
      respectGitignore: p.respectGitignore,
      skipNames: p.skipNames,
      previous: p.previous,
      next: this.next,
      racyFrom: this.racyFrom,
      changedDirs: confirmed?.changedDirs ?? null,
      readGitignore: (abs, key) => this.readGitignore(abs, key),
      onSkip: (s, position) => {
        this.walkSkips.push({ s, position });
        if (s.reason === 'unreadable-dir' || s.reason === 'vanished') this.trusted = false;
      },
      onUntrusted: () => {
        this.trusted = false;
      },
    });
  }

  /** More candidates are needed: the walk is not over and no budget is known to be exceeded. */
  wantMore(): boolean {
    return !this.walker.done && this.slots.length - this.knownSkips <= this.p.maxFiles && this.okBytes <= this.p.maxBytes;
  }

  checkAbort(): void {
    if (this.options.signal?.aborted) throw abortError();
  }

  /** Next candidate from the walk, or null at the end; already `done` when the walk knew the answer. */
  pull(): ScanSlot | null {
    const slot = this.walker.next();
    if (slot === null) return null;
    this.slots.push(slot);
    this.progress.filesSeen++;
    if (slot.unresolved) this.finishSlot(slot, { status: STATUS.OK_STAT_ONLY }, null, 0);
    else if (slot.outcome !== undefined) {
      const o = slot.outcome;
      slot.outcome = undefined; // the .gitignore text is not needed any more
      this.finishSlot(slot, o, o.stat ?? null, 0, o.sha ?? null, 0);
    }
    return slot;
  }

  isRacy(stats: ArrayLike<number>, off: number): boolean {
    return isRacy(this.racyFrom, stats[off + 1]!, stats[off + 2]!, stats[off + 4]!);
  }

  /** Reads a .gitignore for its rules; its stat goes into the cache even if it is itself ignored. */
  private readGitignore(abs: string, key: string): FileOutcome {
    const o = processFile(this.reader, abs, null, true);
    const st = o.stat;
    if (st === undefined) this.trusted = false;
    else if (this.p.cacheFile !== null) this.next.files.set(key, st, 0, o.sha ?? null, 0, this.isRacy(st, 0));
    return o;
  }

  /**
   * Finishes a slot from what the stored-result check found this run (see Confirmed):
   * the file it read again, or the cache row its lstat confirmed; false when the file must be
   * looked at.
   */
  takeVerified(slot: ScanSlot): boolean {
    const c = this.confirmed;
    if (c === undefined) return false;
    const v = c.verified;
    const key = slot.targetRel ?? slot.rel;
    // A changed file the check read again: that read stands (its stat and digest are this run's).
    const early = c.preread.get(key);
    if (early?.stat !== undefined && (early.status === STATUS.OK_HASHED || early.status === STATUS.OK_STAT_ONLY)) {
      this.finishSlot(slot, early, early.stat, 0, early.sha ?? null, 0);
      return true;
    }
    if (!this.p.withDigest) return false;
    const prev = this.p.previous.files;
    const i = prev.index.get(key);
    if (i === undefined || v[i] !== 1 || (prev.has[i]! & (HAS_SHA | RACY)) !== HAS_SHA) return false;
    this.finishSlot(slot, { status: STATUS.OK_CACHED }, prev.stats, i * STAT_FIELDS, prev.shas, i * 32);
    return true;
  }

  /** Adds a slot to a batch, noting its cache row if there is one. */
  addToBatch(batch: PendingBatch, slot: ScanSlot): void {
    batch.slots.push(slot);
    batch.paths.push(slot.target ?? this.rootPrefix + slot.rel);
    const prev = this.p.previous.files;
    const i = prev.index.get(slot.targetRel ?? slot.rel);
    batch.cacheRows.push(i ?? -1);
    batch.weight += i === undefined ? UNKNOWN_FILE_WEIGHT : prev.stats[i * STAT_FIELDS]!;
  }

  /** Writes a batch's cache records into a slot's request views. */
  fillRequest(batch: PendingBatch, v: BatchViews): void {
    const prev = this.p.previous.files;
    for (let j = 0; j < batch.slots.length; j++) {
      const i = batch.cacheRows[j]!;
      if (i < 0) {
        v.cachedHas[j] = CACHED.NONE;
        continue;
      }
      v.cachedStats.set(prev.stats.subarray(i * STAT_FIELDS, i * STAT_FIELDS + STAT_FIELDS), j * STAT_FIELDS);
      const flags = prev.has[i]!;
      if ((flags & RACY) !== 0) {
        v.cachedHas[j] = CACHED.NONE; // racy: read it again
        continue;
      }
      v.cachedHas[j] = (flags & HAS_SHA) !== 0 ? CACHED.STAT_AND_SHA : CACHED.STAT;
      if ((flags & HAS_SHA) !== 0) v.cachedShas.set(prev.shas.subarray(i * 32, i * 32 + 32), j * 32);
    }
  }

  /** Reads a finished batch's results out of its slot views. */
  applyBatch(batch: PendingBatch, v: BatchViews, details: (string | null)[] | null): void {
    for (let j = 0; j < batch.slots.length; j++) {
      const status = v.status[j]!;
      const o: { status: number; detail?: string } = { status };
      const d = details?.[j];
      if (d !== null && d !== undefined) o.detail = d;
      this.finishSlot(batch.slots[j]!, o, v.stats, j * STAT_FIELDS, status === STATUS.OK_HASHED || status === STATUS.OK_CACHED ? v.shas : null, j * 32);
    }
  }

  /** Hashes a batch on this thread. */
  runHere(batch: PendingBatch, v: BatchViews): void {
    this.fillRequest(batch, v);
    this.applyBatch(batch, v, runBatch(this.reader, batch.paths, v));
  }

  private finishSlot(slot: ScanSlot, o: { status: number; detail?: string }, stats: ArrayLike<number> | null, statOff: number, shas: Uint8Array | null = null, shaOff = 0): void {
    slot.done = true;
    const pr = this.progress;
    pr.filesDone++;
    const skip = SKIP_OF_STATUS[o.status];
    if (skip !== undefined) this.trusted = false;
    if (skip !== undefined) {
      slot.skip = skip;
      if (o.detail !== undefined) slot.detail = o.detail;
      this.knownSkips++;
      return;
    }
    if (slot.unresolved || stats === null) {
      slot.bytes = 0;
      slot.mode = 0o644;
      return;
    }
    const bytes = stats[statOff]!;
    slot.bytes = bytes;
    slot.mode = stats[statOff + 5]!;
    this.okBytes += bytes;
    if (shas !== null) slot.shaRow = this.shaTable.add(shas, shaOff);
    if (o.status === STATUS.OK_HASHED) {
      pr.filesHashed++;
      pr.bytesHashed += bytes;
    } else if (o.status === STATUS.OK_CACHED) pr.filesCached++;
    if (this.p.cacheFile === null) return;
    // Racy: changed too recently to trust that a same-tick rewrite would show. The row is kept,
    // flagged, so the file is re-read next time (and the whole-result fast path knows it).
    const key = slot.targetRel ?? slot.rel;
    const next = this.next.files;
    next.set(key, stats, statOff, shas, shaOff, this.isRacy(stats, statOff));
    if (!this.cacheDirty) {
      const prevIndex = this.p.previous.files.index.get(key);
      if (prevIndex === undefined || !next.sameRow(next.index.get(key)!, this.p.previous.files, prevIndex)) this.cacheDirty = true;
    }
  }

  /**
   * Records the result for the stored-result path: its entries are the cache rows, in order; a
   * symlink entry is LINK_ROW | its index in `links` (where it led: the target's row key, or null).
   */
  private storeResult(files: RepoSnapshotEntry[], bytes: number, skipped: SkippedEntry[], cut: 'files' | 'bytes' | undefined): void {
    const index = this.next.files.index;
    const rows = new Uint32Array(files.length);
    const links: [string, string | null, number][] = [];
    let li = 0;
    for (let k = 0; k < files.length; k++) {
      const f = files[k]!;
      if (f.kind === 'symlink') {
        while (this.slots[li]!.rel !== f.path) li++;
        const slot = this.slots[li]!;
        const target = slot.unresolved ? null : (slot.targetRel ?? null);
        const targetRow = target === null ? -1 : index.get(target);
        if (targetRow === undefined) return;
        rows[k] = LINK_ROW | links.length;
        links.push([f.path, target, targetRow]);
        continue;
      }
      const row = index.get(f.path);
      if (row === undefined) return;
      rows[k] = row;
    }
    const stored: StoredResult = { skipped, links };
    if (cut !== undefined) stored.cut = cut;
    if (this.digestBody) {
      freezeFiles(files);
      // A first scan digests before its cache is saved: the directory is made now, so the
      // canonical memo is too (else the first change would serialise every entry again).
      if (this.p.cacheFile !== null) {
        try {
          ensureCacheDir(this.p.cacheFile);
        } catch (e) {
          // no memo then; the cache save that follows gives the notice
          debug?.(`fallback: cache directory not made, no canonical memo (${fallbackReason(e) ?? 'ENOENT'})`);
        }
      }
      const pieceEntries = this.p.tuning.pieceEntries;
      stored.digest = this.p.cacheFile === null ? computeDigestOf(files, bytes, cut !== undefined, pieceEntries) : digestWithMemo(files, bytes, cut !== undefined, canonicalMemoPath(this.p.cacheFile), undefined, undefined, pieceEntries);
      this.scanned = scannedBody(files, { bytes, digest: stored.digest, truncated: cut !== undefined, renderMemo: this.p.cacheFile === null ? undefined : renderMemoPath(this.p.cacheFile), pieceEntries });
    }
    this.next.result = `${this.p.resultKey}\n${JSON.stringify(stored)}`;
    this.next.entryRows = rows;
  }

  emitProgress(): void {
    this.options.onProgress?.({ ...this.progress });
  }

  /** Cuts the result at the budget, reports skips in walk order, saves the cache. */
  finish(): Scanned {
    const p = this.p;
    const files: RepoSnapshotEntry[] = [];
    const slotSkips: { s: SkippedEntry; order: number }[] = [];
    let bytes = 0;
    let truncated = false;
    let cut = this.slots.length;
    // One hex string for every digest; each entry's is a slice of it (no conversion per file).
    const hex = this.shaTable.hex();
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i]!;
      if (!slot.done) throw new Error('internal: unresolved scan slot');
      if (slot.skip !== undefined) {
        const s: SkippedEntry = { path: slot.rel, reason: slot.skip };
        if (slot.detail !== undefined) s.detail = slot.detail;
        slotSkips.push({ s, order: 2 * i + 1 });
        continue;
      }
      // The seed's budget rule: stop at the first entry that does not fit.
      if (files.length >= p.maxFiles || bytes + slot.bytes > p.maxBytes) {
        truncated = true;
        cut = i;
        break;
      }
      // The seed's key order; the digest re-orders keys itself (digest.ts).
      const mode = entryMode(slot.mode);
      const { rel, kind } = slot;
      files.push(slot.shaRow >= 0 ? { path: rel, bytes: slot.bytes, sha256: hex.slice(slot.shaRow * 64, slot.shaRow * 64 + 64), mode, kind } : { path: rel, bytes: slot.bytes, mode, kind });
      bytes += slot.bytes;
    }
    if (!truncated && !this.walker.done) truncated = true; // stopped by the budget before the cut was seen
    const skips = [...this.walkSkips.filter((w) => w.position <= cut).map((w) => ({ s: w.s, order: 2 * w.position })), ...slotSkips.filter((x) => x.order < 2 * cut)];
    skips.sort((a, b) => a.order - b.order);
    const skipped = skips.map((x) => x.s);

    const warnings = [...p.warnings];
    if (p.cacheFile !== null) {
      const prev = p.previous;
      if (truncated) {
        // A capped run saw only part of the tree: keep what it did not see (still stat-checked on use).
        for (let i = 0; i < prev.files.size; i++) {
          const k = prev.files.paths[i]!;
          const flags = prev.files.has[i]!;
          if (!this.next.files.index.has(k)) this.next.files.set(k, prev.files.stats, i * STAT_FIELDS, (flags & HAS_SHA) !== 0 ? prev.files.shas : null, i * 32, (flags & RACY) !== 0);
        }
        for (const [k, v] of prev.dirs) if (!this.next.dirs.has(k)) this.next.dirs.set(k, v);
      }
      // A cut result is stored too (the seed's surface caps every big tree), with what cut it.
      const cutBy = !truncated ? undefined : cut < this.slots.length ? (files.length >= p.maxFiles ? 'files' : 'bytes') : null;
      if (this.trusted && cutBy !== null) this.storeResult(files, bytes, skipped, cutBy);
      let dirty = this.cacheDirty || this.next.files.size !== prev.files.size || this.next.dirs.size !== prev.dirs.size || this.next.result !== prev.result || !sameRows(this.next.entryRows, prev.entryRows);
      if (!dirty) for (const [k, v] of this.next.dirs) if (prev.dirs.get(k) !== v) dirty = true;
      if (dirty) {
        const w = saveCache(p.cacheFile, this.next, p.rootReal, p.optionsKey, keepSaved(p, this.next));
        if (w !== undefined) warnings.push(w);
      }
    }
    for (const w of warnings) this.options.onWarning?.(w);
    for (const s of skipped) this.options.onSkip?.(s);
    this.progress.phase = 'done';
    this.emitProgress();
    return { result: { files, truncated, counts: { files: files.length, bytes }, skipped, warnings }, body: this.scanned };
  }
}

/**
 * The uncapped scanning engine, single-threaded: the same walk, cache and per-file code as
 * `scanTree`, for callers that must stay synchronous (iteration snapshots).
 *
 * Returns every kept file and symlink of the tree (sorted by compareUtf8), `truncated`
 * (only with maxFiles/maxBytes), counts, the skipped paths with reasons, and cache notices.
 * Uses and updates the stat cache unless `cache: false`.
 */
export function scanTreeSync(root: string, options: ScanOptions = {}): ScanResult {
  const p = prepare(root, options);
  let result: ScanResult;
  try {
    result = runSync(p, options).result;
  } finally {
    endCacheSource(p); // also when the scan failed: the file it loaded from is let go
  }
  tellCacheState(p, options.knownUnchanged);
  return result;
}

function runSync(prepared: Prepared, options: ScanOptions): Scanned {
  if (options.signal?.aborted) {
    prepared.verifier?.stop();
    throw abortError();
  }
  const fast = tryStoredResult(prepared, options);
  explain(prepared, fast);
  if (fast.kind !== 'walk') return { result: fast.result, body: fast.body };
  const run = new ScanRun(prepared, options, fast.confirmed);
  const views = batchViews(new ArrayBuffer(BATCH_SLOT_BYTES), BATCH_CAPACITY);
  // With a budget, each result must be known before pulling more (files beyond it are not read).
  const batchFiles = Number.isFinite(prepared.maxFiles) || Number.isFinite(prepared.maxBytes) ? 1 : BATCH_FILES;
  let batch = new PendingBatch();
  const flush = (): void => {
    if (batch.slots.length === 0) return;
    run.runHere(batch, views);
    batch = new PendingBatch();
    run.emitProgress();
  };
  while (run.wantMore()) {
    run.checkAbort();
    const slot = run.pull();
    if (slot === null) break;
    if (slot.done || run.takeVerified(slot)) continue;
    run.addToBatch(batch, slot);
    if (batch.slots.length >= batchFiles || batch.full) flush();
  }
  flush();
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
 * fires (workers are stopped at once and no cache is written). `files` and its entries are
 * frozen.
 */
export async function scanTree(root: string, options: ScanOptions = {}): Promise<ScanResult> {
  return (await scanForSnapshot(root, options)).result;
}

/**
 * `scanTree`, with the handle of the body it returns (its digest, made with the canonical memo,
 * and the render memo's whereabouts), for `makeRepoSnapshot(body, scanned)` and
 * `writeRepoSnapshot(doc, to, scanned)`: a warm snapshot then serialises nothing it already has.
 */
export async function scanForSnapshot(root: string, options: ScanOptions = {}): Promise<Scanned> {
  const r = await scanWithWorkers(root, options);
  freezeFiles(r.result.files); // also where no digest was made: the list behaves the same every time
  return r;
}

async function scanWithWorkers(root: string, options: ScanOptions): Promise<Scanned> {
  const prepared = prepare(root, options);
  let scanned: Scanned;
  try {
    scanned = await scanPrepared(prepared, options);
  } finally {
    endCacheSource(prepared);
  }
  // As scanTreeSync: what the cache now holds (a save in the background: not known, null).
  tellCacheState(prepared, options.knownUnchanged);
  return scanned;
}

async function scanPrepared(prepared: Prepared, options: ScanOptions): Promise<Scanned> {
  if (prepared.jobs === 0) return runSync(prepared, options);
  if (options.signal?.aborted) {
    prepared.verifier?.stop();
    throw abortError();
  }
  const fast = await tryStoredResultParallel(prepared, options, true);
  explain(prepared, fast);
  if (fast.kind !== 'walk') return { result: fast.result, body: fast.body };
  // Workers cost ~30 ms each to start. A tree known to be small (from its cache) is hashed here; otherwise the pool starts now, so
  // its ~30 ms boot overlaps the walk instead of stalling it.
  const knownSmall = prepared.previous.files.size > 0 && prepared.previous.files.size < INLINE_FIRST_FILES;
  let pool: HashPool | null = knownSmall ? null : new HashPool(prepared.jobs);
  let abortListener: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    abortListener = () => reject(abortError());
    options.signal?.addEventListener('abort', abortListener, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    const run = new ScanRun(prepared, options, fast.confirmed, true);
    const inlineViews = batchViews(new ArrayBuffer(BATCH_SLOT_BYTES), BATCH_CAPACITY);
    let failure: Error | undefined;
    const inFlight = new Set<Promise<void>>();
    let batch = new PendingBatch();
    let inline = 0;
    const dispatch = async (): Promise<void> => {
      if (batch.slots.length === 0 || pool === null) return;
      while (pool.saturated && failure === undefined) await Promise.race([pool.whenFree(), aborted]);
      if (failure !== undefined) throw failure;
      const b = batch;
      batch = new PendingBatch();
      const { slot, views } = pool.acquire();
      run.fillRequest(b, views);
      const p = pool
        .submit(slot, b.paths, prepared.withDigest)
        .then((details) => {
          run.applyBatch(b, views, details);
          pool!.release(slot);
          run.emitProgress();
        })
        .catch((e: unknown) => {
          // Also catches a throwing onProgress callback: it must fail the scan, not go unhandled.
          failure ??= e instanceof Error ? e : new Error(String(e));
        });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    };
    for (;;) {
      while (run.wantMore()) {
        run.checkAbort();
        const slot = run.pull();
        if (slot === null) break;
        if (slot.done || run.takeVerified(slot)) continue;
        if (pool === null) {
          if (inline < INLINE_FIRST_FILES) {
            inline++;
            const one = new PendingBatch();
            run.addToBatch(one, slot);
            run.runHere(one, inlineViews);
            continue;
          }
          pool = new HashPool(prepared.jobs);
        }
        // A big file goes alone, so one long hash does not hold up a batch of small ones.
        const row = prepared.previous.files.index.get(slot.targetRel ?? slot.rel);
        if (row !== undefined && prepared.previous.files.stats[row * STAT_FIELDS]! >= BATCH_BYTES) await dispatch();
        run.addToBatch(batch, slot);
        if (batch.full) await dispatch();
        if (failure !== undefined) throw failure;
      }
      await dispatch();
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
