import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWithoutPeer } from '../support/servers-peers.js';

describe('S3Storage without @aws-sdk/client-s3 installed', () => {
  it('constructs, then fails its first call with a SessionError that says what to install', async () => {
    expect(existsSync(path.join(os.tmpdir(), 'node_modules')), 'a node_modules in the temp dir would hide the missing peer').toBe(false);
    const r = await runWithoutPeer(
      'src/store/backends/s3/s3-storage.ts',
      '@aws-sdk/client-s3',
      `import { S3Storage } from './store.mjs';
       const s = new S3Storage({ bucket: 'b', endpoint: 'http://127.0.0.1:9' });
       try { await s.loadSnapshot({ location: { sessionId: 's', scope: 'agent', scopeId: 'a' } }); console.log('loaded?!'); }
       catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message, cause: e.cause?.code })); }`,
    );
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { name: string; code: string; message: string; cause: string };
    expect(out).toMatchObject({ name: 'SessionError', code: 'ERR_MISSING_DEPENDENCY', cause: 'ERR_MODULE_NOT_FOUND' });
    expect(out.message).toContain('npm install @aws-sdk/client-s3');
  });
});
