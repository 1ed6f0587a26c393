import { isUuidV7 } from './validation.js';

export interface UuidV7GeneratorOptions {
  /** Milliseconds since the Unix epoch (default `Date.now`); injectable to test clock steps. */
  now?: () => number;
  /** Fills a buffer with random bytes (default Web Crypto's `getRandomValues`: the global loads node:crypto on first use, not at start-up). */
  random?: (buf: Uint8Array) => void;
}

const RAND_B_SPAN = 1n << 62n;
const RAND_A_SPAN = 4096;
const MAX_MS = 2 ** 48 - 1;

/**
 * RFC 9562 UUID version 7 generator, monotonic within the generator (RFC 9562 § 6.2 method 1
 * with the 74 random bits as the counter): when the clock has not advanced — or has stepped
 * back — the previous id's timestamp is kept and its random tail incremented, so an id is never
 * less than or equal to the one before it (langgraphjs #2854 is the bug this avoids).
 */
export function createUuidV7Generator(options: UuidV7GeneratorOptions = {}): () => string {
  const now = options.now ?? Date.now;
  const random = options.random ?? ((buf: Uint8Array) => void globalThis.crypto.getRandomValues(buf));
  const bytes = new Uint8Array(10);
  let lastMs = -1;
  let randA = 0;
  let randB = 0n;

  const reseed = (): void => {
    random(bytes);
    // The top bit of rand_a starts clear, leaving room for 2^73 increments within one ms.
    randA = ((bytes[0]! & 0x07) << 8) | bytes[1]!;
    let b = 0n;
    for (let i = 2; i < 10; i++) b = (b << 8n) | BigInt(bytes[i]!);
    randB = b & (RAND_B_SPAN - 1n);
  };

  return function uuidV7(): string {
    const ms = Math.floor(now());
    if (ms > lastMs) {
      lastMs = Math.min(ms, MAX_MS);
      reseed();
    } else {
      randB += 1n;
      if (randB >= RAND_B_SPAN) {
        randB = 0n;
        randA += 1;
        if (randA >= RAND_A_SPAN) {
          // Counter exhausted: borrow the next millisecond rather than repeat or go backwards.
          lastMs += 1;
          reseed();
        }
      }
    }
    return format(lastMs, randA, randB);
  };
}

function hex(value: number | bigint, width: number): string {
  return value.toString(16).padStart(width, '0');
}

function format(ms: number, randA: number, randB: bigint): string {
  const t = hex(ms, 12);
  const variantAndHigh = (0b10n << 14n) | (randB >> 48n); // variant 10, then 14 bits of rand_b
  const low = randB & ((1n << 48n) - 1n);
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${hex(randA, 3)}-${hex(variantAndHigh, 4)}-${hex(low, 12)}`;
}

/** Monotonic UUID v7 (lower case) for this process. Ids from one process sort in creation order. */
export const uuidV7: () => string = createUuidV7Generator();

/** The millisecond timestamp carried by a UUID v7, or undefined if `id` is not one. */
export function uuidV7Timestamp(id: string): number | undefined {
  if (!isUuidV7(id)) return undefined;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
