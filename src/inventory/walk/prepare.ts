import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError, errnoCode } from '../../core/errors.js';
import { compileDirectoryExcludes, compileGlobs, validateGlob, type PathMatcher } from '../rules/glob.js';
import { cacheFilePath, defaultStatCacheDir, SCAN_ENGINE_VERSION } from '../cache/artefacts.js';
import { emptyCache, loadCache, type StatCacheData } from '../cache/stat-cache.js';
import { keepResident, takeResident, type BuiltEntries } from '../cache/resident.js';
import { releaseFile, type HeldFile } from '../cache/held-file.js';
import { racyMarginsFor, type RacyMargins } from '../rules/racy.js';
import type { CacheState, KnownUnchanged, ScanOptions, ScanTuning, ScanWarning } from '../types.js';
import { Verifier } from '../io/verifier.js';
import { resolveTuning } from './tuning.js';

/** Directory names never descended into, whatever the ignore rules say. */
export const ALWAYS_SKIP: readonly string[] = ['.git', '.cairn'];

/**
 * Where a scan's cache rows came from and what the cache holds once the scan is done: `held`,
 * the file they were loaded from (or kept with: resident.ts), open until the scan ends; `from`,
 * the state they stood for when kept from an earlier scan of this process; `left`, the state
 * this scan left (the rows saved, or loaded and left as they were), once it says.
 */
export interface CacheSource {
  held: HeldFile | null;
  readonly from: CacheState | null;
  left: CacheState | null;
  /** With `from`: the entries the scan that kept the rows built from them (resident.ts). */
  readonly built?: BuiltEntries;
  /** The save a scan handed to KnownUnchanged.deferSave instead of making it (see tellCacheState). */
  deferred?: () => void;
}

/** The save's `keep` callback: the rows `data` saved are kept for this process's next scan (resident.ts), with the entries built from them as saved (frozen), if any. */
export function keepSaved(p: Prepared, data: StatCacheData, built?: BuiltEntries): ((held: HeldFile) => void) | undefined {
  const source = p.cacheSource;
  if (source === undefined || p.cacheFile === null) return undefined;
  return (held) => (source.left = keepResident(p.cacheFile!, p.rootReal, p.optionsKey, data, held, built));
}

/** The scan left the rows it started from unchanged, on disk and in memory: they are kept as they are, with the entries it built from them (frozen). */
export function keepUnchanged(p: Prepared, built?: BuiltEntries): void {
  const source = p.cacheSource;
  if (source === undefined || source.held === null || p.cacheFile === null) return;
  source.left = keepResident(p.cacheFile, p.rootReal, p.optionsKey, p.previous, source.held, built);
  source.held = null;
}

/** After a scan that ended well: a watching caller is told the state the cache is left in, now, or by the save the scan deferred once it ran. */
export function tellCacheState(p: Prepared, known: KnownUnchanged | undefined): void {
  if (known === undefined) return;
  const save = p.cacheSource?.deferred;
  if (save === undefined || known.deferSave === undefined) {
    known.onCacheState(p.cacheSource?.left ?? null);
    return;
  }
  known.deferSave(() => {
    save();
    known.onCacheState(p.cacheSource?.left ?? null);
  });
}

/** At the end of a scan, whatever its outcome: the file it loaded from is let go unless kept; returns the state it left (null: not known). */
export function endCacheSource(p: Prepared): CacheState | null {
  const source = p.cacheSource;
  if (source === undefined) return null;
  if (source.held !== null) releaseFile(source.held);
  source.held = null;
  return source.left;
}

/**
 * A scan's context: its validated options, the resolved root and the loaded cache. Read-only:
 * what the fast path finds is handed on as values (fastpath/outcome.ts), never written here.
 * `previous` is the one piece of state: the cache as loaded, which the fast path brings up to
 * date in place (rows read again, listings, entry rows) and saves, and the walk reads from.
 */
export interface Prepared {
  readonly rootReal: string;
  readonly include: PathMatcher | null;
  readonly exclude: PathMatcher | null;
  readonly excludeDirs: PathMatcher | null;
  readonly respectGitignore: boolean;
  readonly withDigest: boolean;
  readonly skipNames: ReadonlySet<string>;
  readonly maxFiles: number;
  readonly maxBytes: number;
  readonly jobs: number;
  /** Where the scan changes strategy (the defaults unless options.tuning says otherwise). */
  readonly tuning: Readonly<Required<ScanTuning>>;
  readonly cacheFile: string | null;
  readonly optionsKey: string;
  /** The limits, which the cached whole result also depends on. */
  readonly resultKey: string;
  readonly previous: StatCacheData;
  /** The racy-timestamp margins of this root (racy.ts). */
  readonly racy: RacyMargins;
  /** A verifying worker started before the (big) cache was loaded; the stored-result check uses and stops it. */
  readonly verifier?: Verifier;
  /** With options.knownUnchanged and the cache loaded being its bytes: directories whose rows need no lstat. */
  readonly trustDir?: (rel: string) => boolean;
  /** With trustDir: true when it holds for every directory. */
  readonly trustEveryDir?: () => boolean;
  /** With trustDir: the file rows of the other directories that need no lstat either (KnownUnchanged.entry). */
  readonly trustEntry?: (rel: string) => boolean;
  /** With a cache file: where the rows came from and what the scan left (endCacheSource lets the file go). */
  readonly cacheSource?: CacheSource;
  /** Notices of the preparation (a cache discarded or not used), reported with the result. */
  readonly warnings: readonly ScanWarning[];
}

function invalidOption(message: string, details: Record<string, unknown>): CairnError {
  return new CairnError('ERR_INVALID_OPTION', message, { details });
}

/** Resolves and checks the root: it must exist and be a directory; returns its real path. */
export function resolveSnapshotRoot(root: string): string {
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

/** Validates options (ERR_INVALID_OPTION, ERR_CONTAINMENT), resolves the root, loads the cache. */
export function prepare(root: string, options: ScanOptions): Prepared {
  const include = options.include ?? [];
  const exclude = options.exclude ?? [];
  for (const g of [...include, ...exclude]) validateGlob(g);
  const maxFiles = checkLimit('maxFiles', options.maxFiles, 1) ?? Number.POSITIVE_INFINITY;
  const maxBytes = checkLimit('maxBytes', options.maxBytes, 0) ?? Number.POSITIVE_INFINITY;
  const jobs = checkLimit('jobs', options.jobs, 0) ?? 2;
  if (jobs > 64) throw invalidOption('jobs must be at most 64', { option: 'jobs', value: jobs });
  const tuning = resolveTuning(options.tuning);
  const skipNames = new Set([...ALWAYS_SKIP, ...(options.alwaysSkip ?? [])]);
  const rootReal = resolveSnapshotRoot(root);
  const respectGitignore = options.respectGitignore !== false;
  const withDigest = options.withContentDigest !== false;
  const optionsKey = JSON.stringify({ engine: SCAN_ENGINE_VERSION, include, exclude, respectGitignore, withDigest, skip: [...skipNames].sort() });
  const warnings: ScanWarning[] = [];
  let cacheFile: string | null = null;
  let previous = emptyCache();
  let verifier: Verifier | undefined;
  let trustDir: ((rel: string) => boolean) | undefined;
  let trustEveryDir: (() => boolean) | undefined;
  let trustEntry: ((rel: string) => boolean) | undefined;
  let cacheSource: CacheSource | undefined;
  if (options.cache !== false) {
    const dir = path.resolve(options.cacheDir ?? defaultStatCacheDir());
    if (isInside(rootReal, realpathOrSelf(dir))) {
      // Read-only toward the root, always: a cache inside it would also show up in the snapshot.
      warnings.push({ code: 'CACHE_DISABLED', message: `stat cache not used: ${dir} is inside the snapshotted root`, path: dir });
    } else {
      cacheFile = cacheFilePath(dir, rootReal, optionsKey);
      // A cache this big means a tree worth checking on two threads: boot the second one now,
      // while this one reads the cache.
      // (Not when a watching caller will likely vouch for the rows: then one thread checks the few left.)
      const known = options.knownUnchanged;
      // The rows this process's last scan left, while the file is still the one they went with;
      // else the file decoded (and held, to be kept if this scan leaves it as it is).
      const kept = takeResident(cacheFile, rootReal, optionsKey);
      if (kept !== undefined) {
        previous = kept.data;
        cacheSource = kept.built === undefined ? { held: kept.held, from: kept.state, left: null } : { held: kept.held, from: kept.state, left: null, built: kept.built };
      } else {
        if (jobs > 0 && !(known?.cacheState != null) && fileSize(cacheFile) >= tuning.earlyVerifierCacheBytes) verifier = new Verifier();
        const loaded = loadCache(cacheFile, rootReal, optionsKey, true);
        previous = loaded.data;
        if (loaded.warning !== undefined) warnings.push(loaded.warning);
        cacheSource = { held: loaded.held ?? null, from: null, left: null };
      }
      if (known !== undefined && known.cacheState !== null && cacheSource.from === known.cacheState) {
        trustDir = known.dir;
        trustEveryDir = known.everyDir;
        trustEntry = known.entry;
      }
    }
  }
  const resultKey = JSON.stringify({ maxFiles, maxBytes });
  const excludeDirs = compileDirectoryExcludes(exclude);
  return { rootReal, racy: racyMarginsFor(rootReal, options.racyMarginMs), include: compileGlobs(include), exclude: compileGlobs(exclude), excludeDirs, respectGitignore, withDigest, skipNames, maxFiles, maxBytes, jobs, tuning, cacheFile, optionsKey, resultKey, previous, warnings, ...(verifier !== undefined ? { verifier } : {}), ...(trustDir !== undefined ? { trustDir, trustEveryDir, ...(trustEntry !== undefined ? { trustEntry } : {}) } : {}), ...(cacheSource !== undefined ? { cacheSource } : {}) };
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  } catch {
    return 0;
  }
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

export function prefixOf(rootReal: string): string {
  return rootReal.endsWith('/') ? rootReal : `${rootReal}/`;
}

export function abortError(): CairnError {
  return new CairnError('ERR_ABORTED', 'the scan was aborted; nothing was cached', { exitCode: 1 });
}
