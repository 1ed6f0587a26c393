/** Properties of the S3 key layout: every key the store writes classifies back to what it is, and nothing else passes as history. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalisePrefix, S3KeyLayout } from '../../src/store/backends/s3/s3-keys.js';
import type { SnapshotLocation } from '../../src/store/contract/types.js';

const identifier = fc.stringMatching(/^[a-z0-9_-]{1,20}$/);
const location: fc.Arbitrary<SnapshotLocation> = fc.record({
  sessionId: identifier,
  scope: fc.constantFrom('agent' as const, 'multiAgent' as const),
  scopeId: identifier,
});
const prefix = fc.oneof(fc.constant(''), fc.stringMatching(/^\/{0,2}[a-zA-Z0-9._-]{1,8}(\/[a-zA-Z0-9._-]{1,8}){0,2}\/{0,2}$/));

describe('S3 key layout', () => {
  it('classifies latest, manifest and history keys back to their location and id, under any prefix', () => {
    fc.assert(
      fc.property(prefix, location, identifier, (p, loc, id) => {
        const keys = new S3KeyLayout(normalisePrefix(p));
        expect(keys.classify(keys.latest(loc))).toEqual({ kind: 'latest', location: loc });
        expect(keys.classify(keys.manifest(loc))).toEqual({ kind: 'manifest', location: loc });
        expect(keys.classify(keys.history(loc, id))).toEqual({ kind: 'history', location: loc, snapshotId: id });
        expect(keys.history(loc, id).startsWith(keys.session(loc.sessionId))).toBe(true);
      }),
    );
  });

  it('is the file layout under the prefix, as upstream', () => {
    const keys = new S3KeyLayout(normalisePrefix('team/a'));
    const loc: SnapshotLocation = { sessionId: 'test-session', scope: 'multiAgent', scopeId: 'graph-1' };
    expect(keys.latest(loc)).toBe('team/a/test-session/scopes/multiAgent/graph-1/snapshots/snapshot_latest.json');
    expect(keys.history(loc, '1')).toBe('team/a/test-session/scopes/multiAgent/graph-1/snapshots/immutable_history/snapshot_1.json');
    expect(new S3KeyLayout(normalisePrefix(undefined)).manifest(loc)).toBe('test-session/scopes/multiAgent/graph-1/snapshots/manifest.json');
  });

  it('never takes a key outside the layout for history (anchored, identifier ids only)', () => {
    const keys = new S3KeyLayout('p/');
    fc.assert(
      fc.property(location, fc.string({ maxLength: 30 }), (loc, tail) => {
        const kind = keys.classify(`${keys.historyDir(loc)}${tail}`);
        const m = /^snapshot_([a-z0-9_-]+)\.json$/.exec(tail);
        if (m) expect(kind).toEqual({ kind: 'history', location: loc, snapshotId: m[1] });
        else expect(kind.kind).toBe('stray');
      }),
    );
    for (const bad of ['p/.cairn-probe/x', 'other/s/scopes/agent/a/snapshots/snapshot_latest.json', 'p/S/scopes/agent/a/snapshots/snapshot_latest.json', 'p/s/scopes/robot/a/snapshots/snapshot_latest.json']) {
      expect(['probe', 'stray']).toContain(keys.classify(bad).kind);
    }
  });

  it('normalisePrefix is idempotent and leaves no leading or doubled trailing slash', () => {
    fc.assert(
      fc.property(prefix, (p) => {
        const once = normalisePrefix(p);
        expect(normalisePrefix(once)).toBe(once);
        expect(once.startsWith('/')).toBe(false);
        expect(once === '' || (once.endsWith('/') && !once.endsWith('//'))).toBe(true);
      }),
    );
  });
});
