/**
 * A hash pool worker (see HashPool in hash-pool.ts): sees every batch slot (shared memory, in
 * `workerData`), runs each batch it is sent with one reused reader per kind (digests on or off),
 * and replies with the per-file error details.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BATCH_CAPACITY, batchViews, fileReader, READ_BUFFER_BYTES, runBatch, type FileReader } from './read-file.js';
import type { HashReply, HashRequest, HashWorkerData } from './hash-pool.js';

const { slots } = workerData as HashWorkerData;
const views = slots.map((b) => batchViews(b, BATCH_CAPACITY));
const buf = Buffer.allocUnsafe(READ_BUFFER_BYTES);
const readers: { digest?: FileReader; stat?: FileReader } = {};

parentPort?.on('message', (m: HashRequest) => {
  const reader = m.withDigest ? (readers.digest ??= fileReader(true, buf)) : (readers.stat ??= fileReader(false, buf));
  const reply: HashReply = { id: m.id, details: runBatch(reader, m.paths.split('\0'), views[m.slot]!) };
  parentPort!.postMessage(reply);
});
