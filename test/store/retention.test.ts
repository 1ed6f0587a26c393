import { describe, expect, it } from 'vitest';
import { parseOlderThan, SessionError } from '../../src/store/index.js';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');

describe('parseOlderThan', () => {
  it('reads durations back from now in ms, s, m, h, d and w', () => {
    expect(parseOlderThan('30m', NOW)).toBe(NOW - 30 * 60_000);
    expect(parseOlderThan('12h', NOW)).toBe(NOW - 12 * 3_600_000);
    expect(parseOlderThan('7d', NOW)).toBe(NOW - 7 * 86_400_000);
    expect(parseOlderThan('2w', NOW)).toBe(NOW - 14 * 86_400_000);
    expect(parseOlderThan('90s', NOW)).toBe(NOW - 90_000);
    expect(parseOlderThan('1.5h', NOW)).toBe(NOW - 5_400_000);
  });

  it('reads ISO 8601 times and Date objects as absolute instants', () => {
    expect(parseOlderThan('2026-01-31T00:00:00Z', NOW)).toBe(Date.parse('2026-01-31T00:00:00Z'));
    expect(parseOlderThan('2026-01-31', NOW)).toBe(Date.parse('2026-01-31'));
    expect(parseOlderThan(new Date(5), NOW)).toBe(5);
  });

  it('rejects anything else with ERR_INVALID_OPTION and an example of what works', () => {
    for (const bad of ['7', 'soon', '7 days', '-1d', '1', 'May', '', new Date(NaN)]) {
      let caught: unknown;
      try {
        parseOlderThan(bad, NOW);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(SessionError);
      expect((caught as SessionError).code).toBe('ERR_INVALID_OPTION');
      expect((caught as SessionError).message).toContain("'7d'");
    }
  });
});
