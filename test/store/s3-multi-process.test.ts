/** Several processes writing one S3 location through the gateway at once. */
import { afterAll, beforeAll, vi } from 'vitest';
import type { S3Storage } from '../../src/store/backends/s3/s3-storage.js';
import type { S3ServerInfo } from '../support/servers.js';
import { expectAllAppendsKept, expectExactlyOneCreator, expectOneWholeLatest } from '../support/servers-multi-process.js';
import { s3StorageOn, serverSuite, uniqueName } from '../support/servers-stores.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

const { describe, it, server } = serverSuite<S3ServerInfo>('s3');
let store: S3Storage | undefined;
let url: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  try {
    const info = server();
    const prefix = uniqueName('mp');
    store = s3StorageOn(info, { prefix });
    url = `s3://${info.bucket}/${prefix}?endpoint=${encodeURIComponent(info.endpoint)}&region=us-east-1&forcePathStyle=1`;
    env = { AWS_ACCESS_KEY_ID: info.accessKeyId, AWS_SECRET_ACCESS_KEY: info.secretAccessKey };
  } catch {
    // every test reports the missing server through server()
  }
});

afterAll(async () => {
  await store?.deleteSession({ sessionId: 'shared' });
  await store?.close();
});

describe('S3Storage across processes', () => {
  it('6 processes creating one history id: exactly one wins, the others get ERR_SNAPSHOT_EXISTS', async () => {
    server();
    await expectExactlyOneCreator(url, env, store!);
  }, WHOLE_PROCESS_BUDGET_MS);

  it('4 processes appending history at once lose nothing', async () => {
    server();
    await expectAllAppendsKept(url, env, store!);
  }, WHOLE_PROCESS_BUDGET_MS);

  it('4 processes saving latest at once leave one whole write', async () => {
    server();
    await expectOneWholeLatest(url, env, store!);
  }, WHOLE_PROCESS_BUDGET_MS);
});
