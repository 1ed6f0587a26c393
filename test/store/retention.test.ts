import { describe, expect, it } from 'vitest';
import { parseOlderThan, SessionError } from '../../src/store/index.js';
import { planPrune, selectPrunable } from '../../src/store/contract/retention.js';

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

describe('selectPrunable', () => {
  const ids = Array.from({ length: 40 }, (_, i) => `snap-${String(i).padStart(2, '0')}`);
  // Snapshot i was made i hours after NOW - 40 h; every fifth one has no readable time.
  const createdAt = (id: string): string | undefined => {
    const i = Number(id.slice(5));
    return i % 5 === 4 ? undefined : new Date(NOW - (40 - i) * 3_600_000).toISOString();
  };

  it('reads the snapshots it judges by age several at a time, never more than the width, and answers as one at a time would', async () => {
    let inFlight = 0;
    let most = 0;
    const readIds: string[] = [];
    const read = async (id: string): Promise<string | undefined> => {
      readIds.push(id);
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      return createdAt(id);
    };
    const plan = planPrune({ location: { sessionId: 's', scope: 'agent', scopeId: 'y' }, olderThan: '10h', keepLast: 5 }, NOW);
    const doomed = await selectPrunable(ids, plan, read, 6);
    expect(most).toBe(6);
    expect(readIds.sort()).toEqual(ids.slice(0, ids.length - 5)); // every candidate once, never the 5 kept by keepLast
    const oneByOne = ids.slice(0, ids.length - 5).filter((id) => {
      const t = createdAt(id);
      return t !== undefined && Date.parse(t) < NOW - 10 * 3_600_000;
    });
    expect(doomed).toEqual(oneByOne);
    expect(doomed).toHaveLength(24); // 30 older than 10 h, less the 6 without a time
  });

  it('a failed read fails the selection (nothing is chosen from a partial view)', async () => {
    const plan = planPrune({ location: { sessionId: 's', scope: 'agent', scopeId: 'y' }, olderThan: '1h' }, NOW);
    await expect(selectPrunable(ids, plan, (id) => (id === 'snap-07' ? Promise.reject(new Error('gone away')) : Promise.resolve(createdAt(id))), 4)).rejects.toThrow('gone away');
  });
});
