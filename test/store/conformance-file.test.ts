import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'vitest';
import { FileStorage } from '../../src/store/index.js';
import { runSnapshotStorageConformance } from '../../src/store/conformance/index.js';

runSnapshotStorageConformance({
  name: 'FileStorage',
  create: async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-conf-file-'));
    return { storage: new FileStorage(path.join(dir, 'store')), cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
  },
  test: { describe, it },
  features: { upkeep: true, concurrency: true },
});
