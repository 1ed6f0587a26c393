/** du (upkeep), and a loadManifest that persists nothing. */
import assert from 'node:assert/strict';
import type { SnapshotLocation } from '../contract/types.js';
import { snapshotOf, managed, fill, type CaseRegistrar } from './support.js';

export function duCases(test: CaseRegistrar): void {
  test('du reports history count, latest and manifest presence, and bytes per location', async (s, location) => {
    await fill(s, location, 3);
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
    const multi: SnapshotLocation = { sessionId: location.sessionId, scope: 'multiAgent', scopeId: 'graph-1' };
    await s.saveManifest({ location: multi, manifest: { schemaVersion: '1.0', updatedAt: 'now' } });
    const usage = await managed(s).du({ sessionId: location.sessionId });
    assert.equal(usage.length, 2);
    const [agent, orchestrator] = usage;
    assert.deepEqual({ ...agent, bytes: 0 }, { ...location, history: 3, hasLatest: true, hasManifest: false, bytes: 0 });
    assert.deepEqual({ ...orchestrator, bytes: 0 }, { ...multi, history: 0, hasLatest: false, hasManifest: true, bytes: 0 });
    assert.ok(agent!.bytes > 0 && orchestrator!.bytes > 0);
    assert.ok(agent!.bytes > orchestrator!.bytes);
  });

  test('loadManifest does not persist the default', async (s, location) => {
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
    await s.loadManifest({ location });
    const [usage] = await managed(s).du({ sessionId: location.sessionId });
    assert.equal(usage?.hasManifest, false);
  });
}
