import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createUuidV7Generator, isUuidV7, uuidV7, uuidV7Timestamp } from '../../src/store/index.js';

const RFC_9562_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidV7', () => {
  it('produces lower-case RFC 9562 version 7 ids carrying the current millisecond', () => {
    const before = Date.now();
    const id = uuidV7();
    const after = Date.now();
    expect(id).toMatch(RFC_9562_V7);
    const t = uuidV7Timestamp(id)!;
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(after);
  });

  it('is strictly increasing over many calls in one process', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidV7());
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it('stays strictly increasing when the clock steps back, then follows the clock again once it passes', () => {
    let now = 1_772_000_000_000;
    const next = createUuidV7Generator({ now: () => now });
    const a = next();
    now -= 60_000; // NTP steps the clock back a minute
    const b = next();
    const c = next();
    expect(b > a && c > b).toBe(true);
    expect(uuidV7Timestamp(b)).toBe(1_772_000_000_000);
    now += 120_000;
    const d = next();
    expect(d > c).toBe(true);
    expect(uuidV7Timestamp(d)).toBe(1_772_000_060_000);
  });

  it('never repeats or goes backwards for any sequence of clock readings (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 47 }), { minLength: 1, maxLength: 200 }), fc.array(fc.uint8Array({ minLength: 10, maxLength: 10 }), { minLength: 1, maxLength: 5 }), (times, randoms) => {
        let i = 0;
        let r = 0;
        const next = createUuidV7Generator({
          now: () => times[i++ % times.length]!,
          random: (buf) => buf.set(randoms[r++ % randoms.length]!),
        });
        let prev = '';
        for (let k = 0; k < times.length; k++) {
          const id = next();
          expect(id).toMatch(RFC_9562_V7);
          expect(id > prev).toBe(true);
          prev = id;
        }
      }),
    );
  });

  it('carries into the next millisecond when the counter of one millisecond is exhausted', () => {
    // All-ones random bytes start the counter at its top (rand_a top bit cleared), so increments overflow quickly.
    const next = createUuidV7Generator({ now: () => 1000, random: (buf) => buf.fill(0xff) });
    const ids = Array.from({ length: 5 }, () => next());
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(ids.every((id) => RFC_9562_V7.test(id))).toBe(true);
  });

  it('uuidV7Timestamp reads the 48-bit time, and rejects non-v7 ids', () => {
    expect(uuidV7Timestamp('01956891-2b4c-7000-8abc-123456789abc')).toBe(0x019568912b4c);
    expect(uuidV7Timestamp('01956891-2b4c-4000-8abc-123456789abc')).toBeUndefined();
    expect(uuidV7Timestamp('latest')).toBeUndefined();
    expect(isUuidV7(uuidV7())).toBe(true);
  });
});
