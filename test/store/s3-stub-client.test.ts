/**
 * S3Storage driven by a stub client (upstream's S3 tests mock `send` this way): an empty answer
 * to every command. No server is needed; the real-server behaviour is in s3-storage.test.ts.
 */
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3Storage, type S3ClientLike } from '../../src/store/backends/s3/s3-storage.js';
import type { Snapshot, SnapshotLocation } from '../../src/store/contract/types.js';

const location: SnapshotLocation = { sessionId: 'test-session', scope: 'agent', scopeId: 'test-agent' };
const snapshot: Snapshot = { scope: 'agent', schemaVersion: '1.0', createdAt: '2026-01-01T00:00:00.000Z', data: { n: 1 }, appData: {} };

function stubClient(head: (input: unknown) => unknown = () => ({})): S3ClientLike & { inputs: { command: string; input: Record<string, unknown> }[] } {
  const inputs: { command: string; input: Record<string, unknown> }[] = [];
  return {
    inputs,
    // eslint-disable-next-line @typescript-eslint/require-await -- a stub answers at once
    async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
      inputs.push({ command: command.constructor.name, input: command.input });
      return command instanceof HeadObjectCommand ? head(command.input) : {};
    },
  };
}

describe('S3Storage with a stub client that answers every command with {}', () => {
  it('an empty HEAD answer does not count as an existing object: the history snapshot is written at the upstream key', async () => {
    const client = stubClient();
    const store = new S3Storage({ bucket: 'test-bucket', prefix: 'pre', s3Client: client, onWarning: () => undefined });
    await store.saveSnapshot({ location, snapshotId: '1', isLatest: false, snapshot });
    const puts = client.inputs.filter((c) => c.command === PutObjectCommand.name);
    expect(puts.at(-1)?.input).toMatchObject({
      Bucket: 'test-bucket',
      Key: 'pre/test-session/scopes/agent/test-agent/snapshots/immutable_history/snapshot_1.json',
      Body: JSON.stringify(snapshot, null, 2),
    });
  });

  it('a HEAD answer with an ETag still means the history id is taken', async () => {
    const client = stubClient(() => ({ ETag: '"abc"', $metadata: { httpStatusCode: 200 } }));
    const store = new S3Storage({ bucket: 'test-bucket', s3Client: client, onWarning: () => undefined });
    await expect(store.saveSnapshot({ location, snapshotId: '1', isLatest: false, snapshot })).rejects.toMatchObject({
      name: 'SessionError',
      code: 'ERR_SNAPSHOT_EXISTS',
    });
  });
});
