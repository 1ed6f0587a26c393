import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT } from '../support/cli.js';

// The suite ships as `cairn/conformance` for any runner: prove it runs under node:test, from the
// built package resolved through its exports map, with no vitest anywhere in the import graph.
let dir: string;
beforeAll(async () => {
  await fs.access(CLI).catch(() => {
    throw new Error('the built package is missing: run `npm run build` first');
  });
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-conf-runner-'));
  await fs.mkdir(path.join(dir, 'node_modules'));
  await fs.symlink(REPO_ROOT, path.join(dir, 'node_modules', 'cairn'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('cairn/conformance outside vitest', () => {
  it('runs under node:test against MemoryStorage and FileStorage, all passing', async () => {
    const script = path.join(dir, 'conformance.test.mjs');
    await fs.writeFile(
      script,
      `import { describe, it } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSnapshotStorageConformance } from 'cairn/conformance';
import { FileStorage, MemoryStorage } from 'cairn';

runSnapshotStorageConformance({ name: 'memory', create: async () => ({ storage: new MemoryStorage() }), test: { describe, it }, features: { upkeep: true } });
runSnapshotStorageConformance({
  name: 'file',
  create: async () => {
    const d = await mkdtemp(join(tmpdir(), 'cairn-node-test-'));
    return { storage: new FileStorage(d), cleanup: () => rm(d, { recursive: true, force: true }) };
  },
  test: { describe, it },
  features: { upkeep: true },
});
// A runner that is not vitest must not find vitest loaded.
process.on('beforeExit', () => {
  if (Object.keys(globalThis).some((k) => k.startsWith('__vitest'))) throw new Error('vitest was loaded');
});
`,
    );
    const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', script], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status, r.stdout.slice(-3000)).toBe(0);
    const pass = Number(/^# pass (\d+)$/m.exec(r.stdout)?.[1]);
    expect(/^# fail (\d+)$/m.exec(r.stdout)?.[1]).toBe('0');
    expect(pass).toBeGreaterThanOrEqual(80);
  });

  it('imports nothing from vitest', async () => {
    const built = await fs.readFile(path.join(REPO_ROOT, 'dist', 'store', 'conformance', 'index.js'), 'utf8');
    const imports = [...built.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    for (const spec of imports) expect(spec).toMatch(/^(node:|\.\.?\/)/);
  });
});
