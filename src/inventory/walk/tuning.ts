import { CairnError } from '../../core/errors.js';
import { PIECE_ENTRIES } from '../digest.js';
import { PREREAD_WORKER_BUDGET_BYTES } from '../io/verifier.js';
import type { ScanTuning } from '../types.js';

/**
 * The strategy thresholds of a scan (ScanTuning), with the defaults the engine was tuned with:
 * below 20 000 rows a second lstat thread costs more to boot than it saves (above, the pass scales
 * ~2x); a 2 MiB cache holds some 20 000 rows (21 051 rows of short paths take 2.09 MB, just under),
 * so its worker is worth booting while the cache loads; a 1024-row chunk makes a claim (one atomic
 * add) rare against the lstats it covers; past 2000 changed rows (or a quarter of the tree) the
 * walk, listing only what moved and hashing on every core, is faster than updating the stored
 * result (see changeLimit), and past 2000 new files the update leaves them to the walk too rather
 * than read them one by one on the scan's thread (fastpath/incremental.ts); 64 MiB is ~45 ms of
 * the worker's hashing, well inside the scan's wait for it; pieces of 4096 entries (~1 MB of
 * rendered text) keep the memory of the digest and of the rendering flat.
 */
export const DEFAULT_TUNING: Readonly<Required<ScanTuning>> = Object.freeze({
  parallelVerifyMin: 20_000,
  earlyVerifierCacheBytes: 2 * 1024 * 1024,
  verifyChunkRows: 1024,
  fastPathChangeMin: 2000,
  fastPathNewFilesMax: 2000,
  prereadWorkerBytes: PREREAD_WORKER_BUDGET_BYTES,
  pieceEntries: PIECE_ENTRIES,
});

const MINIMUM: Readonly<Required<ScanTuning>> = { parallelVerifyMin: 1, earlyVerifierCacheBytes: 0, verifyChunkRows: 1, fastPathChangeMin: 0, fastPathNewFilesMax: 0, prereadWorkerBytes: 0, pieceEntries: 1 };

/** The thresholds a scan runs with: the defaults, overridden by valid values given (ERR_INVALID_OPTION on any other). */
export function resolveTuning(given: ScanTuning | undefined): Required<ScanTuning> {
  if (given === undefined) return DEFAULT_TUNING;
  if (typeof given !== 'object' || given === null) throw new CairnError('ERR_INVALID_OPTION', 'tuning must be an object', { details: { option: 'tuning' } });
  const out: Required<ScanTuning> = { ...DEFAULT_TUNING };
  for (const [name, value] of Object.entries(given) as [keyof ScanTuning, unknown][]) {
    if (!(name in DEFAULT_TUNING)) throw new CairnError('ERR_INVALID_OPTION', `tuning.${String(name)} is not a tuning knob (known: ${Object.keys(DEFAULT_TUNING).join(', ')})`, { details: { option: `tuning.${String(name)}` } });
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < MINIMUM[name]) {
      const got = typeof value === 'number' ? String(value) : typeof value;
      throw new CairnError('ERR_INVALID_OPTION', `tuning.${name} must be an integer >= ${MINIMUM[name]} (got ${got})`, { details: { option: `tuning.${name}`, value: got } });
    }
    out[name] = value;
  }
  return out;
}
