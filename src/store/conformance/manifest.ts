/** saveManifest and loadManifest, and the default manifest. */
import assert from 'node:assert/strict';
import { expectSessionError, type CaseRegistrar } from './support.js';

export function manifestCases(test: CaseRegistrar): void {
  test('saveManifest then loadManifest round-trips', async (s, location) => {
    const manifest = { schemaVersion: '1.0', updatedAt: '2026-03-11T10:00:00.000Z' };
    await s.saveManifest({ location, manifest });
    assert.deepEqual(await s.loadManifest({ location }), manifest);
  });

  test("loadManifest gives a default {schemaVersion: '1.0', updatedAt: now} when none is stored", async (s, location) => {
    const before = Date.now();
    const manifest = await s.loadManifest({ location });
    assert.equal(manifest.schemaVersion, '1.0');
    assert.equal(typeof manifest.updatedAt, 'string');
    const t = Date.parse(manifest.updatedAt);
    assert.ok(!Number.isNaN(t) && t >= before - 1000 && t <= Date.now() + 1000, `updatedAt ${manifest.updatedAt} is not now`);
  });

  test('rejects a manifest without string schemaVersion and updatedAt', async (s, location) => {
    for (const manifest of [null, {}, { schemaVersion: 1, updatedAt: 'x' }, { schemaVersion: '1.0' }]) {
      await expectSessionError(s.saveManifest({ location, manifest: manifest as never }));
    }
  });
}
