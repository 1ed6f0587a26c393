#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js, from tsc) into dist/bin/: one module for what every
// command loads, a chunk per lazily loaded command. Node 20's ESM loader costs ~0.5 ms a module,
// and a command loads about 30 of ours: bundled, `cairn snapshot` starts ~10 ms sooner.
// Dependencies stay external (installed packages, optional peers loaded on use), except commander,
// which every command loads: imported from ESM, a CommonJS package costs Node 20 a package
// resolution, the CJS loader and a lexer pass over each file (~10 ms CPU of `cairn --help`'s ~30).
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const BUNDLED = new Set(['commander']);
const external = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})].filter((name) => !BUNDLED.has(name));
// Chunk names carry a hash: a build must not leave the last one's beside its own.
rmSync(join(root, 'dist/bin'), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  // cairn.js turns on the compile cache, then loads main.js (an entry of its own, so its name is stable).
  entryPoints: { cairn: 'dist/cli/bin.js', main: 'dist/cli/main.js', engine: 'dist/cli/engine.js' },
  outdir: 'dist/bin',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: [...external, ...external.map((name) => `${name}/*`)],
  // commander require()s Node's built-ins; an ES module has no `require` of its own.
  banner: { js: "import { createRequire as __cairnCreateRequire } from 'node:module';\nconst require = __cairnCreateRequire(import.meta.url);" },
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
});
chmodSync(join(root, 'dist/bin/cairn.js'), 0o755);
