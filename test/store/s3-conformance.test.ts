import { afterAll } from 'vitest';
import { runSnapshotStorageConformance } from '../../src/store/conformance/index.js';
import type { S3ServerInfo } from '../support/servers.js';
import { s3StorageOn, serverSuite, uniqueName } from '../support/servers-stores.js';

const { describe, it, server } = serverSuite<S3ServerInfo>('s3');
const prefix = uniqueName('conformance');

runSnapshotStorageConformance({
  name: 'S3Storage on Ceph RGW',
  create: () => {
    const storage = s3StorageOn(server(), { prefix });
    return Promise.resolve({ storage, cleanup: () => storage.close() });
  },
  test: { describe, it },
  features: { upkeep: true, concurrency: true },
});

afterAll(async () => {
  const info = (() => {
    try {
      return server();
    } catch {
      return undefined;
    }
  })();
  if (info === undefined) return;
  const storage = s3StorageOn(info, { prefix });
  for (const sessionId of await storage.listSessions()) await storage.deleteSession({ sessionId });
  await storage.close();
});
