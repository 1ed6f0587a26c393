import { describe, it } from 'vitest';
import { MemoryStorage } from '../../src/store/index.js';
import { runSnapshotStorageConformance } from '../../src/store/conformance/index.js';

runSnapshotStorageConformance({
  name: 'MemoryStorage',
  create: () => Promise.resolve({ storage: new MemoryStorage() }),
  test: { describe, it },
  features: { upkeep: true, concurrency: true },
});
