/**
 * The verifying worker (see Verifier in verifier.ts): takes one VerifyJob, lstats its share of
 * the table (claimChangedRows, racing the main thread for chunks), reads again the changed files
 * it found within the job's budgets (prereadRows), and reports in the job's shared memory.
 */
import { isAscii } from 'node:buffer';
import { parentPort } from 'node:worker_threads';
import { fastStatHere } from './fast-stat.js';
import { splitNulUtf8 } from './nul-strings.js';
import { fileReader } from './read-file.js';
import { claimChangedRows, prereadRows, SHARED, type VerifyJob } from './verifier.js';

parentPort?.once('message', (job: VerifyJob) => {
  const fast = fastStatHere();
  const paths = splitNulUtf8(Buffer.from(job.paths.buffer, job.paths.byteOffset, job.paths.byteLength), isAscii);
  const { shared } = job;
  const rows = claimChangedRows({ lstat: fast.lstat, prefix: job.prefix, paths, fileStats: job.fileStats, dirStats: job.dirStats, nFiles: job.nFiles, flags: job.flags, size: job.size }, shared, job.chunk, job.limit);
  if (rows === null) shared[SHARED.COUNT] = -1;
  else {
    const p = job.preread;
    if (p !== undefined) prereadRows({ reader: fileReader(p.withDigest, undefined, fast), prefix: p.prefix, paths, flags: job.flags, area: p.area, budgetBytes: p.budgetBytes, budgetMs: p.budgetMs }, rows);
    for (let k = 0; k < rows.length; k++) shared[SHARED.ROWS + k] = rows[k]!;
    shared[SHARED.COUNT] = rows.length;
  }
  Atomics.store(shared, SHARED.DONE, 1);
  Atomics.notify(shared, SHARED.DONE);
});
