#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js, from tsc) into dist/bin/: one module for what every
// command loads, a chunk per lazily loaded command. Node 20's ESM loader costs ~0.5 ms a module,
// and a command loads about 30 of ours: bundled, `cairn snapshot` starts ~10 ms sooner.
// Dependencies stay external (installed packages, optional peers loaded on use).
import { build } from 'esbuild';
import { chmodSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Chunk names carry a hash: a build must not leave the last one's beside its own.
rmSync(join(root, 'dist/bin'), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { cairn: 'dist/cli/main.js', engine: 'dist/cli/engine.js' },
  outdir: 'dist/bin',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
});
chmodSync(join(root, 'dist/bin/cairn.js'), 0o755);
