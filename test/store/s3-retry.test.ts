/**
 * Retries against the real gateway through a small loopback proxy that can answer in its place:
 * transient answers (503 SlowDown, 500) are retried with backoff up to `maxAttempts`, then
 * surface as a SessionError with the cause; permanent ones (403) are not retried.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { SessionError } from '../../src/store/contract/errors.js';
import type { S3ServerInfo } from '../support/servers.js';
import { s3StorageOn, serverSuite, uniqueName } from '../support/servers-stores.js';

const { describe, it, server } = serverSuite<S3ServerInfo>('s3');

interface Canned {
  status: number;
  code: string;
}
let proxy: http.Server | undefined;
let proxyEndpoint = '';
let seen = 0;
let cannedLeft = 0;
let canned: Canned = { status: 503, code: 'SlowDown' };

/** The next `count` requests get `answer` instead of reaching the gateway. */
function answerNext(count: number, answer: Canned): void {
  cannedLeft = count;
  canned = answer;
  seen = 0;
}

beforeAll(async () => {
  let upstream: URL;
  try {
    upstream = new URL(server().endpoint);
  } catch {
    return; // every test reports the missing server through server()
  }
  proxy = http.createServer((req, res) => {
    seen++;
    if (cannedLeft > 0) {
      cannedLeft--;
      req.resume();
      res.writeHead(canned.status, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${canned.code}</Code><Message>canned by the test proxy</Message></Error>`);
      return;
    }
    // The Host header is passed through unchanged, so the client's SigV4 signature still holds.
    const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
  proxyEndpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
});

const location = { sessionId: 'retry', scope: 'agent' as const, scopeId: 'agent' };
const snapshot = { scope: 'agent' as const, schemaVersion: '1.0', createdAt: '2026-01-01T00:00:00.000Z', data: { ok: true }, appData: {} };

describe('S3Storage retries', () => {
  it('retries transient 503 and 500 answers and then succeeds', async () => {
    const s = s3StorageOn({ ...server(), endpoint: proxyEndpoint }, { prefix: uniqueName('retry'), maxAttempts: 3 });
    await s.probe();
    answerNext(2, { status: 503, code: 'SlowDown' });
    await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot });
    expect(seen).toBe(3);
    answerNext(1, { status: 500, code: 'InternalError' });
    expect((await s.loadSnapshot({ location }))?.data).toEqual({ ok: true });
    expect(seen).toBe(2);
    await s.deleteSession({ sessionId: location.sessionId });
    await s.close();
  });

  it('gives up after maxAttempts with a SessionError that keeps the cause', async () => {
    const s = s3StorageOn({ ...server(), endpoint: proxyEndpoint }, { prefix: uniqueName('retry'), maxAttempts: 3 });
    await s.probe();
    answerNext(100, { status: 503, code: 'SlowDown' });
    const e = await s.loadSnapshot({ location }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(seen).toBe(3); // bounded: maxAttempts, no more
    answerNext(0, canned);
    expect(e).toBeInstanceOf(SessionError);
    expect((e as SessionError).message).toMatch(/SlowDown.*HTTP 503/);
    expect((e as SessionError).cause).toMatchObject({ name: 'SlowDown' });
    await s.close();
  });

  it('does not retry a permanent refusal (403)', async () => {
    const s = s3StorageOn({ ...server(), endpoint: proxyEndpoint }, { prefix: uniqueName('retry'), maxAttempts: 3 });
    await s.probe();
    answerNext(1, { status: 403, code: 'AccessDenied' });
    const e = await s.loadSnapshot({ location }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(seen).toBe(1);
    expect((e as SessionError).message).toMatch(/AccessDenied.*HTTP 403.*AWS_ACCESS_KEY_ID/);
    await s.close();
  });
});
