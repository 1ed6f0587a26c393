/** Hostile ids and scopes are refused by every method, with upstream's messages. */
import assert from 'node:assert/strict';
import type { SnapshotLocation } from '../contract/types.js';
import { FIXTURE_IDS, IDENTIFIER_MESSAGE, HOSTILE_IDENTIFIERS, snapshotOf, expectSessionError, type CaseRegistrar } from './support.js';

export function validationCases(test: CaseRegistrar): void {
  test("rejects hostile session ids in every method with upstream's message", async (s, location) => {
    for (const sessionId of HOSTILE_IDENTIFIERS) {
      const loc = { ...location, sessionId };
      const msg = IDENTIFIER_MESSAGE(sessionId);
      await expectSessionError(s.saveSnapshot({ location: loc, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() }), msg);
      await expectSessionError(s.loadSnapshot({ location: loc }), msg);
      await expectSessionError(s.listSnapshotIds({ location: loc }), msg);
      await expectSessionError(s.deleteSession({ sessionId }), msg);
      await expectSessionError(s.loadManifest({ location: loc }), msg);
      await expectSessionError(s.saveManifest({ location: loc, manifest: { schemaVersion: '1.0', updatedAt: 'now' } }), msg);
    }
  });

  test("rejects hostile scope ids with upstream's message", async (s, location) => {
    for (const scopeId of HOSTILE_IDENTIFIERS) {
      const loc = { ...location, scopeId };
      const msg = IDENTIFIER_MESSAGE(scopeId);
      await expectSessionError(s.saveSnapshot({ location: loc, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf() }), msg);
      await expectSessionError(s.loadSnapshot({ location: loc }), msg);
      await expectSessionError(s.listSnapshotIds({ location: loc }), msg);
      await expectSessionError(s.loadManifest({ location: loc }), msg);
    }
  });

  test('rejects scopes other than agent and multiAgent', async (s, location) => {
    for (const scope of ['Agent', 'multiagent', 'other', '', '../agent', 'agent/..', 'a\0']) {
      const loc = { ...location, scope } as unknown as SnapshotLocation;
      await expectSessionError(s.saveSnapshot({ location: loc, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() }), /Scope .* is not valid/);
      await expectSessionError(s.loadSnapshot({ location: loc }), /Scope .* is not valid/);
      await expectSessionError(s.listSnapshotIds({ location: loc }), /Scope .* is not valid/);
      await expectSessionError(s.loadManifest({ location: loc }), /Scope .* is not valid/);
    }
  });

  test("rejects hostile history ids on save and load with upstream's message", async (s, location) => {
    for (const snapshotId of HOSTILE_IDENTIFIERS) {
      const msg = IDENTIFIER_MESSAGE(snapshotId);
      await expectSessionError(s.saveSnapshot({ location, snapshotId, isLatest: false, snapshot: snapshotOf() }), msg);
      await expectSessionError(s.loadSnapshot({ location, snapshotId }), msg);
    }
    assert.deepEqual(await s.listSnapshotIds({ location }), []);
  });
}
