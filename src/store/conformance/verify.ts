/** verify (upkeep) on a clean store. */
import assert from 'node:assert/strict';
import { snapshotOf, managed, fill, type CaseRegistrar } from './support.js';

export function verifyCases(test: CaseRegistrar): void {
  test('verify passes on a clean store and counts what it checked', async (s, location) => {
    await fill(s, location, 3);
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
    await s.saveManifest({ location, manifest: { schemaVersion: '1.0', updatedAt: 'now' } });
    const report = await managed(s).verify({ sessionId: location.sessionId });
    assert.deepEqual(report.issues, []);
    assert.equal(report.ok, true);
    assert.equal(report.checked, 5);
  });
}
