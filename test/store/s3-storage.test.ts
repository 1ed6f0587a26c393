/**
 * S3Storage behaviour beyond the shared conformance suite, on a real Ceph RGW: upstream's S3
 * test list (config, key layout, null/empty/invalid reads, listing, paged delete) and cairn's
 * additions (conditional-write probe and its fallback, Content-MD5 deletes, URL form).
 */
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect } from 'vitest';
import { SessionError } from '../../src/store/contract/errors.js';
import { openS3StorageFromUrl, S3Storage, type S3ClientLike } from '../../src/store/backends/s3/s3-storage.js';
import type { Snapshot, SnapshotLocation } from '../../src/store/contract/types.js';
import { createUuidV7Generator } from '../../src/store/contract/uuid.js';
import { runCli } from '../support/cli.js';
import type { S3ServerInfo } from '../support/servers.js';
import { s3StorageOn, serverSuite, uniqueName } from '../support/servers-stores.js';
import { expectSessionError } from './support/session-error.js';

const { describe, it, server } = serverSuite<S3ServerInfo>('s3');
const prefix = uniqueName('s3spec');
let raw: S3Client;

function snapshot(data: Snapshot['data'] = {}, scope: Snapshot['scope'] = 'agent'): Snapshot {
  return { scope, schemaVersion: '1.0', createdAt: new Date().toISOString(), data, appData: {} };
}

function loc(sessionId = uniqueName('s').replace('_', '-'), scope: SnapshotLocation['scope'] = 'agent', scopeId = 'test-agent'): SnapshotLocation {
  return { sessionId, scope, scopeId };
}

function rawClient(info: S3ServerInfo): S3Client {
  return new S3Client({
    region: 'us-east-1',
    endpoint: info.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: info.accessKeyId, secretAccessKey: info.secretAccessKey },
  });
}

async function rawGet(key: string): Promise<string | null> {
  try {
    const res = await raw.send(new GetObjectCommand({ Bucket: server().bucket, Key: key }));
    return (await res.Body?.transformToString()) ?? null;
  } catch (e) {
    if ((e as Error).name === 'NoSuchKey') return null;
    throw e;
  }
}

async function rawPut(key: string, body: string): Promise<void> {
  await raw.send(new PutObjectCommand({ Bucket: server().bucket, Key: key, Body: body }));
}

async function rawKeys(keyPrefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const res = await raw.send(new ListObjectsV2Command({ Bucket: server().bucket, Prefix: keyPrefix, ...(token ? { ContinuationToken: token } : {}) }));
    for (const o of res.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = res.IsTruncated ? res.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

/** Puts many objects with bounded parallelism (fixtures for the >1000-object cases). */
async function putMany(keys: string[], body: (key: string) => string, parallel = 32): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        await rawPut(key, body(key));
      }
    }),
  );
}

function historyKey(p: string, l: SnapshotLocation, id: string): string {
  return `${p}/${l.sessionId}/scopes/${l.scope}/${l.scopeId}/snapshots/immutable_history/snapshot_${id}.json`;
}


beforeAll(() => {
  try {
    raw = rawClient(server());
  } catch {
    // no server: the suite's beforeAll has already failed every test with the reason
  }
});

afterAll(async () => {
  if (!raw) return;
  for (let keys = await rawKeys(`${prefix}/`); keys.length > 0; keys = keys.slice(1000)) {
    await raw.send(new DeleteObjectsCommand({ Bucket: server().bucket, Delete: { Objects: keys.slice(0, 1000).map((Key) => ({ Key })) } }));
  }
  raw.destroy();
});

describe('S3Storage configuration (no server needed)', () => {
  it('rejects s3Client together with region, as upstream', () => {
    const client = new S3Client({ region: 'us-east-1' });
    expect(() => new S3Storage({ bucket: 'b', region: 'us-east-1', s3Client: client })).toThrow(SessionError);
    expect(() => new S3Storage({ bucket: 'b', region: 'us-east-1', s3Client: client })).toThrow(/both s3Client and region/);
    client.destroy();
  });

  it('requires a bucket name', () => {
    expect(() => new S3Storage({ bucket: '' })).toThrow(/needs a bucket name/);
  });

  it('normalises the prefix and leaves conditionalWrites unknown until the first probe', () => {
    expect(new S3Storage({ bucket: 'b', prefix: '/a/b/' }).prefix).toBe('a/b/');
    expect(new S3Storage({ bucket: 'b' }).prefix).toBe('');
    expect(new S3Storage({ bucket: 'b' }).conditionalWrites).toBeUndefined();
  });

  it('opens from an s3:// URL with endpoint, region, forcePathStyle and credentials from the environment', async () => {
    const s = await openS3StorageFromUrl(new URL('s3://my-bucket/team/a?endpoint=http://127.0.0.1:1&region=eu-west-1&forcePathStyle=1'), {
      AWS_ACCESS_KEY_ID: 'AK',
      AWS_SECRET_ACCESS_KEY: 'SK',
    });
    expect(s.bucket).toBe('my-bucket');
    expect(s.prefix).toBe('team/a/');
    await s.close();
  });

  it('refuses credentials in the URL and unknown options, saying what to do', async () => {
    await expectSessionError(openS3StorageFromUrl(new URL('s3://AK:SK@bucket/p'), {}), 'ERR_INVALID_OPTION', /AWS_ACCESS_KEY_ID/);
    await expectSessionError(openS3StorageFromUrl(new URL('s3://bucket/p?endpiont=x'), {}), 'ERR_INVALID_OPTION', /accepted: endpoint, region, forcePathStyle/);
    await expectSessionError(openS3StorageFromUrl(new URL('s3://bucket/p?forcePathStyle=yes'), {}), 'ERR_INVALID_OPTION', /forcePathStyle/);
  });
});

describe('S3Storage on Ceph RGW', () => {
  it('writes latest and history at the upstream key layout under the prefix, as 2-space JSON', async () => {
    const s = s3StorageOn(server(), { prefix });
    const l = loc();
    const snap = snapshot({ n: 1 });
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snap });
    await s.saveSnapshot({ location: l, snapshotId: '1', isLatest: false, snapshot: snap });
    const base = `${prefix}/${l.sessionId}/scopes/agent/test-agent/snapshots/`;
    expect(await rawGet(`${base}snapshot_latest.json`)).toBe(JSON.stringify(snap, null, 2));
    expect(await rawGet(`${base}immutable_history/snapshot_1.json`)).toBe(JSON.stringify(snap, null, 2));
    await s.close();
  });

  it('uses the multiAgent key for multiAgent scopes', async () => {
    const s = s3StorageOn(server(), { prefix });
    const l = loc(undefined, 'multiAgent', 'graph-1');
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot({}, 'multiAgent') });
    expect(await rawGet(`${prefix}/${l.sessionId}/scopes/multiAgent/graph-1/snapshots/snapshot_latest.json`)).not.toBeNull();
    await s.close();
  });

  it('without a prefix, keys start at the session id', async () => {
    const s = s3StorageOn(server());
    const l = loc(`${prefix.replace('_', '-')}-noprefix`);
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot() });
    expect(await rawGet(`${l.sessionId}/scopes/agent/test-agent/snapshots/snapshot_latest.json`)).not.toBeNull();
    await s.deleteSession({ sessionId: l.sessionId });
    expect(await rawKeys(`${l.sessionId}/`)).toEqual([]);
    await s.close();
  });

  it('uses an injected client and does not destroy it on close', async () => {
    const client = rawClient(server());
    const s = new S3Storage({ bucket: server().bucket, prefix, s3Client: client, onWarning: () => {} });
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot({ injected: true }) });
    await s.close();
    const again = new S3Storage({ bucket: server().bucket, prefix, s3Client: client, onWarning: () => {} });
    expect((await again.loadSnapshot({ location: l }))?.data).toEqual({ injected: true });
    client.destroy();
  });

  it('an empty object reads as null, as upstream', async () => {
    const s = s3StorageOn(server(), { prefix });
    const l = loc();
    await rawPut(`${prefix}/${l.sessionId}/scopes/agent/test-agent/snapshots/snapshot_latest.json`, '');
    expect(await s.loadSnapshot({ location: l })).toBeNull();
    await s.close();
  });

  it('invalid JSON is a SessionError naming the object; JSON that is not a Snapshot too', async () => {
    const s = s3StorageOn(server(), { prefix });
    const l = loc();
    const base = `${prefix}/${l.sessionId}/scopes/agent/test-agent/snapshots/`;
    await rawPut(`${base}snapshot_latest.json`, 'invalid json');
    const e = await expectSessionError(s.loadSnapshot({ location: l }), 'ERR_INVALID_JSON', /Invalid JSON/);
    expect(e.message).toContain(`s3://${server().bucket}/${base}snapshot_latest.json`);
    expect(e.cause).toBeInstanceOf(SyntaxError);
    await rawPut(`${base}immutable_history/snapshot_5.json`, '{"hello":"world"}');
    await expectSessionError(s.loadSnapshot({ location: l, snapshotId: '5' }), 'ERR_CORRUPT', /not a valid snapshot/);
    await rawPut(`${base}manifest.json`, '{');
    await expectSessionError(s.loadManifest({ location: l }), 'ERR_INVALID_JSON');
    const report = await s.verify({ sessionId: l.sessionId });
    expect(report.ok).toBe(false);
    expect(report.issues.map((i) => i.kind).sort()).toEqual(['invalid-json', 'invalid-json', 'invalid-snapshot']);
    await s.close();
  });

  it('a missing bucket reads as null and lists as [], and a write says to create the bucket', async () => {
    const s = s3StorageOn(server(), { bucket: `missing-${Date.now()}` });
    const l = loc();
    expect(await s.loadSnapshot({ location: l })).toBeNull();
    expect(await s.listSnapshotIds({ location: l })).toEqual([]);
    await expectSessionError(s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot() }), 'ERR_IO', /bucket does not exist; create it first/);
    await s.close();
  });

  it('wrong credentials fail every call with a SessionError that keeps the cause', async () => {
    const s = s3StorageOn(server(), { prefix, credentials: { accessKeyId: server().accessKeyId, secretAccessKey: 'wrong' } });
    const l = loc();
    const e = await expectSessionError(s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot() }), 'ERR_IO', /HTTP 403/);
    expect(e.cause).toBeDefined();
    await expectSessionError(s.loadSnapshot({ location: l }), 'ERR_IO', /Failed to read/);
    await expectSessionError(s.listSnapshotIds({ location: l }), 'ERR_IO', /Failed to list snapshots/);
    await expectSessionError(s.deleteSession({ sessionId: l.sessionId }), 'ERR_IO', /Failed to delete session/);
    await s.close();
  });

  it('listing ignores keys that are not exactly immutable_history/snapshot_<id>.json', async () => {
    const s = s3StorageOn(server(), { prefix });
    const l = loc();
    const id = '019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b';
    await s.saveSnapshot({ location: l, snapshotId: id, isLatest: false, snapshot: snapshot() });
    const dir = `${prefix}/${l.sessionId}/scopes/agent/test-agent/snapshots/immutable_history/`;
    for (const name of ['other-file.txt', 'snapshot_a.json.tmp', 'xsnapshot_b.json', 'sub/snapshot_c.json', 'snapshot_UPPER.json', 'snapshot_.json']) {
      await rawPut(dir + name, '{}');
    }
    expect(await s.listSnapshotIds({ location: l })).toEqual([id]);
    const report = await s.verify({ sessionId: l.sessionId });
    expect(report.issues.filter((i) => i.kind === 'stray')).toHaveLength(6);
    await s.close();
  });

  it('lists more than 1000 history objects in order, with exact limits and cursors across pages', async () => {
    const s = s3StorageOn(server(), { prefix });
    const l = loc();
    const generate = createUuidV7Generator({ now: () => 1_772_000_000_000 });
    const ids = Array.from({ length: 1005 }, () => generate());
    await putMany(ids.map((id) => historyKey(prefix, l, id)), () => JSON.stringify(snapshot()));
    expect(await s.listSnapshotIds({ location: l })).toEqual(ids);
    expect(await s.listSnapshotIds({ location: l, limit: 1002 })).toEqual(ids.slice(0, 1002));
    expect(await s.listSnapshotIds({ location: l, startAfter: ids[2]!, limit: 1000 })).toEqual(ids.slice(3, 1003));
    expect(await s.listSnapshotIds({ location: l, startAfter: ids[1003]!.toUpperCase() })).toEqual([ids[1004]]);
    expect((await s.du({ sessionId: l.sessionId }))[0]?.history).toBe(1005);
    await s.close();
  });

  it('deleteSession pages past 1000 objects and batch-deletes all of them, leaving a similarly named session alone', async () => {
    const s = s3StorageOn(server(), { prefix });
    const l = loc();
    const neighbour = loc(`${l.sessionId}x`);
    const ids = Array.from({ length: 1005 }, (_, i) => `id-${String(i).padStart(4, '0')}`);
    await putMany(ids.map((id) => historyKey(prefix, l, id)), () => JSON.stringify(snapshot()));
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot() });
    await s.saveSnapshot({ location: neighbour, snapshotId: 'latest', isLatest: true, snapshot: snapshot() });
    await s.deleteSession({ sessionId: l.sessionId });
    expect(await rawKeys(`${prefix}/${l.sessionId}/`)).toEqual([]);
    expect(await s.loadSnapshot({ location: neighbour })).not.toBeNull();
    await s.close();
  });

  it('deletes with Content-MD5 when told the server needs it', async () => {
    const s = s3StorageOn(server(), { prefix, deleteChecksum: 'md5' });
    const l = loc();
    for (const id of ['a', 'b', 'c']) await s.saveSnapshot({ location: l, snapshotId: id, isLatest: false, snapshot: snapshot() });
    await s.deleteSession({ sessionId: l.sessionId });
    expect(await rawKeys(`${prefix}/${l.sessionId}/`)).toEqual([]);
    expect((await s.prune({ location: l, keepLast: 0 })).deleted).toEqual([]);
    await s.close();
  });
});

describe('S3Storage conditional writes', () => {
  it('probes Ceph RGW as enforced, without warning and without leaving the sentinel behind', async () => {
    const warnings: string[] = [];
    const s = s3StorageOn(server(), { prefix, onWarning: (m) => warnings.push(m) });
    expect(await s.probe()).toBe('enforced');
    expect(s.conditionalWrites).toBe('enforced');
    expect(warnings).toEqual([]);
    expect(await rawKeys(`${prefix}/.cairn-probe/`)).toEqual([]);
    await s.close();
  });

  it('learns the mode on the first write when probe() was not called', async () => {
    const s = s3StorageOn(server(), { prefix });
    await s.saveManifest({ location: loc(), manifest: { schemaVersion: '1.0', updatedAt: 'now' } });
    expect(s.conditionalWrites).toBe('enforced');
    await s.close();
  });

  it('eight stores racing to create one history id: exactly one wins', async () => {
    const l = loc();
    const stores = Array.from({ length: 8 }, () => s3StorageOn(server(), { prefix }));
    const results = await Promise.allSettled(
      stores.map((s, i) => s.saveSnapshot({ location: l, snapshotId: '019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b', isLatest: false, snapshot: snapshot({ writer: i }) })),
    );
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as SessionError).code).toBe('ERR_SNAPSHOT_EXISTS');
    expect((await stores[0]!.loadSnapshot({ location: l, snapshotId: '019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b' }))?.data).toEqual({ writer: winners[0] });
    await Promise.all(stores.map((s) => s.close()));
  });

  it('a create whose first attempt landed before the connection broke succeeds on the retry, not as "exists"', async () => {
    const client = rawClient(server());
    let broken = 0;
    // Inside the SDK's retry loop: the first history PUT reaches the gateway, then its answer is "lost".
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'PutObjectCommand' && /immutable_history/.test(String((args.input as { Key?: string }).Key)) && broken++ === 0) {
          throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET', $metadata: {} });
        }
        return result;
      },
      { step: 'deserialize', name: 'loseFirstAnswer' },
    );
    const s = new S3Storage({ bucket: server().bucket, prefix, s3Client: client, onWarning: () => {} });
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'landed', isLatest: false, snapshot: snapshot({ v: 1 }) });
    expect(broken).toBeGreaterThanOrEqual(2);
    expect((await s.loadSnapshot({ location: l, snapshotId: 'landed' }))?.data).toEqual({ v: 1 });
    // A real second save of the id is still refused.
    await expectSessionError(s.saveSnapshot({ location: l, snapshotId: 'landed', isLatest: false, snapshot: snapshot({ v: 1 }) }), 'ERR_SNAPSHOT_EXISTS');
    client.destroy();
  });

  it('a server that ignores If-None-Match is detected, warned about once, and history stays create-only (HEAD-then-PUT)', async () => {
    // The real gateway behind a client that drops the condition, as s3rver and some proxies do.
    const client = rawClient(server());
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if (request.headers) delete request.headers['if-none-match'];
        return next(args);
      },
      { step: 'build', name: 'dropIfNoneMatch' },
    );
    const warnings: string[] = [];
    const s = new S3Storage({ bucket: server().bucket, prefix, s3Client: client, onWarning: (m) => warnings.push(m) });
    expect(await s.probe()).toBe('ignored');
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'one', isLatest: false, snapshot: snapshot({ v: 1 }) });
    await expectSessionError(s.saveSnapshot({ location: l, snapshotId: 'one', isLatest: false, snapshot: snapshot({ v: 2 }) }), 'ERR_SNAPSHOT_EXISTS');
    await s.saveSnapshot({ location: l, snapshotId: 'two', isLatest: false, snapshot: snapshot() });
    expect((await s.loadSnapshot({ location: l, snapshotId: 'one' }))?.data).toEqual({ v: 1 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/silently ignores If-None-Match/);
    client.destroy();
  });

  it('a server that answers 501 to conditional PUTs is reported as unsupported', async () => {
    const real = rawClient(server());
    // Swift's s3api answers exactly this; RGW enforces, so the 501 is simulated at the client.
    const client: S3ClientLike = {
      send: async (command: { input?: { IfNoneMatch?: string } }) => {
        if (command.input?.IfNoneMatch) {
          throw Object.assign(new Error('Conditional object PUTs are not supported.'), { name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
        }
        return real.send(command as never);
      },
    };
    const warnings: string[] = [];
    const s = new S3Storage({ bucket: server().bucket, prefix, s3Client: client, onWarning: (m) => warnings.push(m) });
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'one', isLatest: false, snapshot: snapshot() });
    expect(s.conditionalWrites).toBe('unsupported');
    expect(warnings[0]).toMatch(/does not support If-None-Match/);
    await expectSessionError(s.saveSnapshot({ location: l, snapshotId: 'one', isLatest: false, snapshot: snapshot() }), 'ERR_SNAPSHOT_EXISTS');
    real.destroy();
  });
});

describe('S3Storage through its URL form', () => {
  it('round-trips a snapshot opened with openS3StorageFromUrl and env credentials', async () => {
    const info = server();
    const s = await openS3StorageFromUrl(new URL(`s3://${info.bucket}/${prefix}/via-url?endpoint=${encodeURIComponent(info.endpoint)}&region=us-east-1&forcePathStyle=1`), {
      AWS_ACCESS_KEY_ID: info.accessKeyId,
      AWS_SECRET_ACCESS_KEY: info.secretAccessKey,
    });
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot({ url: true }) });
    expect((await s.loadSnapshot({ location: l }))?.data).toEqual({ url: true });
    expect(await rawGet(`${prefix}/via-url/${l.sessionId}/scopes/agent/test-agent/snapshots/snapshot_latest.json`)).not.toBeNull();
    expect(await s.listSessions()).toEqual([l.sessionId]);
    await s.close();
  });
});

describe('cairn store --store s3://… (the built CLI against the gateway)', () => {
  it('lists, measures, verifies and deletes a session, with credentials only in the environment', async () => {
    const info = server();
    const cliPrefix = `${prefix}/cli`;
    const s = s3StorageOn(info, { prefix: cliPrefix });
    const l = loc();
    await s.saveSnapshot({ location: l, snapshotId: 'latest', isLatest: true, snapshot: snapshot() });
    await s.saveSnapshot({ location: l, snapshotId: '019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b', isLatest: false, snapshot: snapshot() });
    await s.close();
    const url = `s3://${info.bucket}/${cliPrefix}?endpoint=${encodeURIComponent(info.endpoint)}&region=us-east-1&forcePathStyle=1`;
    const env = { AWS_ACCESS_KEY_ID: info.accessKeyId, AWS_SECRET_ACCESS_KEY: info.secretAccessKey };
    const list = runCli(['store', 'list', '--store', url, '--session', l.sessionId, '--json'], { env });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(l.sessionId);
    expect(list.stdout).toContain('019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b');
    const du = runCli(['store', 'du', '--store', url, '--json'], { env });
    expect(du.status, du.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(du.stdout))).toContain('"history":1');
    const verify = runCli(['store', 'verify', '--store', url, '--json'], { env });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    const del = runCli(['store', 'delete-session', '--store', url, '--session', l.sessionId], { env });
    expect(del.status, del.stderr).toBe(0);
    expect(await rawKeys(`${cliPrefix}/${l.sessionId}/`)).toEqual([]);
    const noCreds = runCli(['store', 'list', '--store', url], { env: { AWS_ACCESS_KEY_ID: info.accessKeyId, AWS_SECRET_ACCESS_KEY: 'wrong' } });
    expect(noCreds.status).toBe(1);
    expect(noCreds.stderr).toMatch(/HTTP 403/);
  });
});
