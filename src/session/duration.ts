/**
 * Durations as the seed prints them: whole seconds, minutes and hours, floored
 * ("5s", "2m 5s", "2h 3m", "6h 0m").
 *
 * Upstream printed "NaNs" for an invalid timestamp and "-5s" for reversed ones. Here a duration
 * that is not a finite, non-negative number is treated as 0 ms: `formatDuration` gives "0s" and
 * `durationBetween` gives 0, so a report never shows NaN or a negative time.
 */
export function formatDuration(ms: number): string {
  const safe = Number.isFinite(ms) && ms > 0 ? ms : 0;
  const totalSeconds = Math.floor(safe / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  // BigInt prints every digit: absurd inputs must not turn into "1e+21h".
  if (hours > 0) return `${BigInt(hours).toString()}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${seconds}s`;
  return `${seconds}s`;
}

/** Milliseconds from `start` to `end` (ISO strings); 0 when either is invalid or end precedes start. */
export function durationBetween(start: string, end: string): number {
  const ms = new Date(end).getTime() - new Date(start).getTime();
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}
