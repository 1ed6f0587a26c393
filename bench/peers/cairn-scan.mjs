#!/usr/bin/env node
// cairn's uncapped scanning engine as one process, doing what `cairn snapshot -o F` does
// (scan → RepoSnapshot → pretty JSON written in pieces, or the render memo's when unchanged) without the seed surface's 50,000-file cap,
// which the CLI keeps by contract. This is the engine iteration snapshots use on whole trees.
//   node bench/peers/cairn-scan.mjs <root> <out.json> [--no-cache] [--cache-dir DIR]
// The bench's frozen copy of dist/ when run from a bench, else the repository's.
// The CLI bundle's engine entry (src/cli/engine.ts): the very chunks `cairn snapshot` loads
// (engine.mjs; a build from before the bundle's ES modules were .mjs named it engine.js).
const dist = process.env.CAIRN_BENCH_DIST ?? new URL('../../dist', import.meta.url).pathname;
const { existsSync } = await import('node:fs');
const engine = await import(`${dist}/bin/${existsSync(`${dist}/bin/engine.mjs`) ? 'engine.mjs' : 'engine.js'}`);
const { makeRepoSnapshot, writeRepoSnapshot } = engine;
// The scan's handle of its body goes on to the document and its rendering (a build from before
// the handle noted it for the frozen file list instead: scanTree alone then).
const scanForSnapshot = engine.scanForSnapshot ?? (async (...args) => ({ result: await engine.scanTree(...args), body: undefined }));

const { resolve } = await import('node:path');
const [rootArg, outArg, ...rest] = process.argv.slice(2);
const [root, out] = [resolve(rootArg), resolve(outArg)];
const cacheAt = rest.indexOf('--cache-dir');
const cacheDir = cacheAt >= 0 ? resolve(rest[cacheAt + 1]) : undefined;
// As the CLI does once every path is absolute: look files up from inside the root.
process.chdir(root);
const { result: r, body: scanned } = await scanForSnapshot(process.cwd(), {
  cache: !rest.includes('--no-cache'),
  ...(cacheDir !== undefined ? { cacheDir } : {}),
});
const snapshot = makeRepoSnapshot({ files: r.files, truncated: r.truncated, counts: r.counts }, scanned);
await writeRepoSnapshot(snapshot, { file: out }, scanned);
process.stdout.write(`${JSON.stringify({ snapshotDigest: snapshot.snapshotDigest, files: r.counts.files, skipped: r.skipped.length })}\n`);
