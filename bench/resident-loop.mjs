#!/usr/bin/env node
// A long-running caller's hook path (issue 21): one process takes `pre` then `post` (nothing
// changed) N times through capturePreSnapshotAsync / capturePostSnapshotAsync, the calls the MCP
// server's cairn_session_pre/post make, so the resident capture worker is reused from the second
// call on. The first pair is a warm-up. Prints JSON: medians of wall ms and of the process's CPU
// ms (all its threads; git's own CPU is a child's and is not counted) per call.
//   node bench/resident-loop.mjs <dist dir> <root> <scratch dir> <N>
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, root, scratch, n] = [process.argv[2], process.argv[3], process.argv[4], Number(process.argv[5] ?? 5)];
const lib = await import(pathToFileURL(join(dist, 'index.js')).href);
const samples = { pre: [], post: [], preCpu: [], postCpu: [] };
const timed = async (fn) => {
  const t = process.hrtime.bigint();
  const c = process.cpuUsage();
  await fn();
  const cpu = process.cpuUsage(c);
  return [Number(process.hrtime.bigint() - t) / 1e6, (cpu.user + cpu.system) / 1000];
};
for (let i = -1; i < n; i++) {
  const dir = join(scratch, `resident-${process.pid}-${i + 1}`);
  const [pre, preCpu] = await timed(() => lib.capturePreSnapshotAsync(root, dir));
  const [post, postCpu] = await timed(() => lib.capturePostSnapshotAsync(root, dir));
  if (i < 0) continue;
  samples.pre.push(pre);
  samples.post.push(post);
  samples.preCpu.push(preCpu);
  samples.postCpu.push(postCpu);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]))));
