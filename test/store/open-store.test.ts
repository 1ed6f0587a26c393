import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CairnError } from '../../src/core/errors.js';
import { FileStorage, openStore } from '../../src/store/index.js';

let cwd: string;
beforeEach(async () => {
  cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-open-'));
});
afterEach(async () => {
  await fs.rm(cwd, { recursive: true, force: true });
});

async function baseDirOf(spec: string | undefined, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const store = await openStore(spec, { cwd, env });
  expect(store).toBeInstanceOf(FileStorage);
  return (store as FileStorage).baseDir;
}

describe('openStore', () => {
  it('defaults to .cairn/store under cwd, or to $CAIRN_STORE', async () => {
    expect(await baseDirOf(undefined)).toBe(path.join(cwd, '.cairn', 'store'));
    expect(await baseDirOf(undefined, { CAIRN_STORE: 'elsewhere' })).toBe(path.join(cwd, 'elsewhere'));
    expect(await baseDirOf('given', { CAIRN_STORE: 'elsewhere' })).toBe(path.join(cwd, 'given'));
  });

  it('opens file:DIR, file:///abs and plain paths as FileStorage, relative to cwd', async () => {
    expect(await baseDirOf('file:rel/dir')).toBe(path.join(cwd, 'rel', 'dir'));
    expect(await baseDirOf('file:/abs/dir')).toBe('/abs/dir');
    expect(await baseDirOf(pathToFileURL(path.join(cwd, 'x y')).href)).toBe(path.join(cwd, 'x y'));
    expect(await baseDirOf('./plain')).toBe(path.join(cwd, 'plain'));
    expect(await baseDirOf('/abs/plain')).toBe('/abs/plain');
  });

  it('hands s3:// and postgres:// to their backends (loaded on demand)', async () => {
    // Whatever the backend does with an unreachable server, the error is its own, not a usage error.
    for (const spec of ['s3://bucket/prefix?endpoint=http://127.0.0.1:1', 'postgres://127.0.0.1:1/db', 'postgresql://127.0.0.1:1/db']) {
      const outcome = await openStore(spec, { cwd, env: {} }).then(
        async (store) => {
          await store.close();
          return 'opened';
        },
        (e: unknown) => e,
      );
      if (outcome !== 'opened') expect((outcome as { code?: string }).code).not.toBe('ERR_USAGE');
    }
  });

  it('rejects other schemes and empty specs with ERR_USAGE (exit 2) listing the accepted forms', async () => {
    for (const spec of ['ftp://host/x', 'http://host', 'redis://x', '', 'file:', 'file://remote-host/x']) {
      const e = await openStore(spec, { cwd, env: {} }).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(CairnError);
      expect(e).toMatchObject({ code: 'ERR_USAGE', exitCode: 2 });
      expect((e as Error).message).toContain('file:DIR');
    }
  });
});
