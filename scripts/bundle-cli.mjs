#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js, from tsc) into dist/bin/: one module for what every
// command loads, a chunk per lazily loaded command. Node 20's ESM loader costs ~0.5 ms a module,
// and a command loads about 30 of ours: bundled, `cairn snapshot` starts ~10 ms sooner.
// Dependencies stay external (installed packages, optional peers loaded on use), except commander,
// which every command loads: imported from ESM, a CommonJS package costs Node 20 a package
// resolution, the CJS loader and a lexer pass over each file (~10 ms CPU of `cairn --help`'s ~30).
// commander require()s node:child_process at load, for executable subcommands cairn never has;
// that module brings net, streams and dgram (~25 of Node's internal modules, ~5 ms of Node 20's
// start): the bundle gives commander a stand-in that loads child_process on first use instead.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const BUNDLED = new Set(['commander']);
const external = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})].filter((name) => !BUNDLED.has(name));
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'lazy-child-process', namespace: 'cairn-lazy' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'cairn-lazy' }, () => ({
      contents: "module.exports = { get spawn() { return require('node:child_process').spawn; } };",
      loader: 'js',
    }));
  },
};
const common = {
  outdir: 'dist/bin',
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: [...external, ...external.map((name) => `${name}/*`)],
  logLevel: 'warning',
};
// In dist/bin a `.js` file is CommonJS (dist/bin/package.json, written below) and an ES module is
// `.mjs`: the executable must keep its name, cairn.js, and be CommonJS (src/cli/bin.ts says why).
const esm = {
  ...common,
  format: 'esm',
  outExtension: { '.js': '.mjs' },
  // commander require()s Node's built-ins; an ES module has no `require` of its own.
  banner: { js: "import { createRequire as __cairnCreateRequire } from 'node:module';\nconst require = __cairnCreateRequire(import.meta.url);" },
};
// Chunk names carry a hash: a build must not leave the last one's beside its own.
rmSync(join(root, 'dist/bin'), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  // main.mjs is an entry of its own, so its name is stable: cairn.js loads it by URL.
  // The scanner's workers are entries too (dist/bin/<name>.mjs): the worker is started on its
  // module file (src/inventory/io/worker-file.ts), which then loads the chunks it shares; so is
  // the tree watcher's thread (src/daemon/tree-watch.ts), which `cairn daemon` starts.
  entryPoints: { main: 'dist/cli/main.js', engine: 'dist/cli/engine.js', 'hash-worker': 'dist/inventory/io/hash-worker.js', 'verify-worker': 'dist/inventory/io/verify-worker.js', 'watch-worker': 'dist/daemon/watch-worker.js' },
  ...esm,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [lazyChildProcessForCommander],
});
// The fast lanes (src/cli/snapshot-lane.ts, session-lane.ts, hook-lane.ts), each one module
// without splitting: Node costs ~0.35 ms (20) / ~0.2 ms (26) a module, and the split graph gives
// `cairn snapshot` ~20 chunks, `session pre` ~40. The executable loads them and main.mjs by paths
// esbuild does not follow, so they stay out of its bundle. What a lane imports lazily is inlined,
// so only builtins every run of it loads may be imported statically (test/cli/fast-lane.test.ts checks).
// They are CommonJS (<lane>.js), as the executable is: a lane's run never starts Node's ES module
// loader (~15 ms of CPU of Node 20's ~50 over `node -e 0` for a snapshot), and on Node 20, which has
// no compile cache, the executable loads them through V8's code cache (src/core/compile-cache.ts).
// Their import.meta.url (by which the scanner finds its workers, ES module entries beside them) is
// the file's URL, made on first use (node:url is not loaded otherwise). The optional backends they
// load on use (`import('pg')`, `import('@aws-sdk/client-s3')`) become require() in a promise:
// compiled through vm.Script, an import() would need Node 20's experimental loader hook (a warning
// on stderr) or a flag; both packages ship CommonJS.
await build({
  absWorkingDir: root,
  entryPoints: { 'snapshot-lane': 'dist/cli/snapshot-lane.js', 'session-lane': 'dist/cli/session-lane.js', 'hook-lane': 'dist/cli/hook-lane.js' },
  ...common,
  format: 'cjs',
  supported: { 'dynamic-import': false },
  define: { 'import.meta.dirname': '__dirname', 'import.meta.filename': '__filename', 'import.meta.url': '__cairnImportMeta.url', 'import.meta.resolve': '__cairnImportMeta.resolve' },
  // Strict first, as the ES module was (esbuild's own directive comes after the banner).
  banner: { js: "'use strict';\nconst __cairnImportMeta = { get url() { return require('node:url').pathToFileURL(__filename).href; }, resolve: undefined };" },
});
// The executable (cairn.js: it turns on the compile cache, picks a lane, else loads main.mjs) and
// the daemon lane it require()s (daemon-lane.js, the client of `cairn daemon`), CommonJS: a served
// turn, help and the version never start Node's ES module loader. import.meta.dirname and
// .filename, by which the executable finds the bundle's other files, are this file's.
await build({
  absWorkingDir: root,
  entryPoints: { cairn: 'dist/cli/bin.js', 'daemon-lane': 'dist/cli/daemon-lane.js' },
  ...common,
  format: 'cjs',
  define: { 'import.meta.dirname': '__dirname', 'import.meta.filename': '__filename' },
});
// `import * as fs from 'node:fs'` becomes `__toESM(require("node:fs"), 1)` in CommonJS, which
// copies every export of the builtin into a getter (fs has ~100) each time a module of the bundle
// imports it: ~2-3 ms of CPU of a served turn on Node 20. A builtin's exports object serves as its
// namespace as well, except for `.default`, so a namespace never read for `.default` is the object.
for (const name of ['cairn.js', 'daemon-lane.js', 'snapshot-lane.js', 'session-lane.js', 'hook-lane.js']) {
  const file = join(root, 'dist/bin', name);
  const text = readFileSync(file, 'utf8');
  const lean = text.replace(/\bvar (\w+) = __toESM\((require\("node:[\w/]+"\)), 1\);/g, (whole, binding, required) => (text.includes(`${binding}.default`) ? whole : `var ${binding} = ${required};`));
  writeFileSync(file, lean);
}
writeFileSync(join(root, 'dist/bin/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
chmodSync(join(root, 'dist/bin/cairn.js'), 0o755);
// `cairn --help`, `cairn <command> --help` and `--version` to a pipe are printed from this table
// without loading commander (src/cli/fast-lane.ts); captured from the bundle just built, in a
// child whose stdout is a pipe, so it is what the full CLI prints there (80 columns).
const helpTable = execFileSync(process.execPath, [join(root, 'scripts/capture-help.mjs'), join(root, 'dist/bin/main.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
writeFileSync(join(root, 'dist/bin/help.json'), `${JSON.stringify(JSON.parse(helpTable), null, 1)}\n`);
