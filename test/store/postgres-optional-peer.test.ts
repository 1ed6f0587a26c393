import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWithoutPeer } from '../support/servers-peers.js';

describe('PostgresStorage without pg installed', () => {
  it('constructs, then fails its first call with a SessionError that says what to install', async () => {
    expect(existsSync(path.join(os.tmpdir(), 'node_modules')), 'a node_modules in the temp dir would hide the missing peer').toBe(false);
    const r = await runWithoutPeer(
      'src/store/backends/postgres/postgres-storage.ts',
      'pg',
      `import { PostgresStorage } from './store.mjs';
       const s = new PostgresStorage({ connectionString: 'postgres://u@127.0.0.1:9/db' });
       try { await s.listSessions(); console.log('listed?!'); }
       catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message, cause: e.cause?.code })); }`,
    );
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { name: string; code: string; message: string; cause: string };
    expect(out).toMatchObject({ name: 'SessionError', code: 'ERR_MISSING_DEPENDENCY', cause: 'ERR_MODULE_NOT_FOUND' });
    expect(out.message).toContain('npm install pg');
  });
});
