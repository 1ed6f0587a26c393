/** listSessions and listLocations (upkeep). */
import assert from 'node:assert/strict';
import type { SnapshotLocation } from '../contract/types.js';
import { FIXTURE_IDS, snapshotOf, uniqueId, managed, type CaseRegistrar } from './support.js';

export function listSessionsCases(test: CaseRegistrar): void {
  test('listSessions and listLocations show what was written', async (s, location) => {
    const multi: SnapshotLocation = { sessionId: location.sessionId, scope: 'multiAgent', scopeId: 'graph-1' };
    const second: SnapshotLocation = { ...location, sessionId: uniqueId('second') };
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snapshotOf() });
    await s.saveSnapshot({ location: multi, snapshotId: FIXTURE_IDS[0], isLatest: false, snapshot: snapshotOf({}, { scope: 'multiAgent' }) });
    await s.saveManifest({ location: second, manifest: { schemaVersion: '1.0', updatedAt: 'now' } });
    const sessions = await managed(s).listSessions();
    assert.ok(sessions.includes(location.sessionId) && sessions.includes(second.sessionId));
    assert.deepEqual(sessions, [...sessions].sort());
    assert.deepEqual(await managed(s).listLocations({ sessionId: location.sessionId }), [location, multi]);
    assert.deepEqual(await managed(s).listLocations({ sessionId: uniqueId('absent') }), []);
    await s.deleteSession({ sessionId: location.sessionId });
    assert.ok(!(await managed(s).listSessions()).includes(location.sessionId));
  });
}
