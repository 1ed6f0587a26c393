#!/usr/bin/env node
// Deterministic generator of a realistic source tree committed into git, for the benchmarks.
// Shape (full size): ~76k tracked files of source-like sizes (median ~450 B, long tail, a few
// 20–100 MB files), ~17k deep and wide directories, a git-ignored node_modules/ with thousands of
// files, nested .gitignore files with negations, a few symlinks. Same seed → same bytes.
//
//   node bench/gen-tree.mjs [--quick] [--files N] [--node-modules N] [--force]
//
// The tree is reused across runs when its marker (generator version + parameters) matches.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, symlinkSync, chmodSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { WORK_DIR, ensureDir, log, prng, readJsonIfExists } from './lib.mjs';

export const GENERATOR_VERSION = 4;

const WORDS = [
  'core', 'utils', 'lib', 'internal', 'api', 'model', 'parser', 'lexer', 'ast', 'codegen', 'runtime',
  'server', 'client', 'cli', 'config', 'plugin', 'plugins', 'transform', 'visitor', 'types', 'schema',
  'store', 'cache', 'io', 'net', 'http', 'crypto', 'hash', 'sort', 'string', 'math', 'time', 'locale',
  'components', 'hooks', 'views', 'routes', 'handlers', 'middleware', 'services', 'adapters', 'drivers',
  'fixtures', 'snapshots', 'helpers', 'common', 'shared', 'legacy', 'experimental', 'generated', 'bench',
  'sysdeps', 'unix', 'linux', 'x86_64', 'aarch64', 'nptl', 'stdio', 'stdlib', 'posix', 'elf', 'iconv',
  'babel', 'preset', 'env', 'compat', 'polyfill', 'helpers', 'traverse', 'generator', 'template', 'format',
];
// A few non-ASCII and spaced names, as real trees have (all valid NFC, none ending in '.' or ' ').
const ODD_NAMES = ['über', 'données', 'ファイル', 'naïve tests', 'Ünïcode', 'z-last', 'A-Upper', 'ñandú'];
const EXTS = [
  ['ts', 22], ['js', 18], ['c', 10], ['h', 8], ['md', 6], ['json', 6], ['rs', 5], ['py', 4], ['txt', 3],
  ['snap', 3], ['S', 2], ['yml', 2], ['css', 2], ['html', 2], ['sh', 1], ['go', 2], ['mjs', 2], ['tsx', 2],
];

export function treeParams({ quick = false, files, nodeModules } = {}) {
  const trackedFiles = files ?? (quick ? 6_000 : 76_000);
  return {
    version: GENERATOR_VERSION,
    seed: 20261130,
    trackedFiles,
    dirs: Math.round(trackedFiles * 0.222), // ~17k dirs for 76k files, as in the reference corpus
    nodeModulesFiles: nodeModules ?? Math.round(trackedFiles * 0.11),
    bigFilesMb: trackedFiles >= 50_000 ? [20, 36, 55, 100] : [6],
    symlinks: 24,
  };
}

export function treePath(params) {
  // A tree whose ignored node_modules/ is not the default share is a shape of its own.
  const nm = params.nodeModulesFiles === Math.round(params.trackedFiles * 0.11) ? '' : `-nm${params.nodeModulesFiles}`;
  return join(WORK_DIR, `tree-${params.trackedFiles}${nm}`);
}

/** Returns the root of a generated, committed tree, generating it only when missing or stale. */
export function ensureTree(opts = {}) {
  const params = treeParams(opts);
  const root = treePath(params);
  const markerPath = `${root}.meta.json`;
  const marker = readJsonIfExists(markerPath);
  if (!opts.force && marker && JSON.stringify(marker.params) === JSON.stringify(params) && existsSync(join(root, '.git'))) {
    return { root, params, meta: marker };
  }
  log(`generating tree ${root} (${params.trackedFiles} tracked files) …`);
  const t0 = Date.now();
  rmSync(markerPath, { force: true });
  rmSync(root, { recursive: true, force: true });
  const meta = generate(root, params);
  log(`files written in ${((Date.now() - t0) / 1000).toFixed(1)} s; committing into git …`);
  const git = (...args) => execFileSync('git', args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  git('init', '-q', '-b', 'main');
  // No surprise auto-gc inside a measured command.
  git('config', 'gc.auto', '0');
  git('add', '-A');
  git('-c', 'user.name=cairn-bench', '-c', 'user.email=bench@cairn.invalid', 'commit', '-q', '-m', 'generated tree');
  // Packed, as a real repository is once git's auto-gc has run (it does past 6,700 loose objects;
  // gc.auto=0 above only keeps it out of the measured commands). Left loose, the 50k tree held
  // ~100k loose objects, and every read of committed bytes paid a file open per object.
  git('repack', '-a', '-d', '-q');
  const done = { params, ...meta, generatedIn: `${((Date.now() - t0) / 1000).toFixed(1)} s` };
  writeFileSync(markerPath, JSON.stringify(done, null, 2));
  log(`tree ready in ${done.generatedIn}`);
  return { root, params, meta: done };
}

function generate(root, params) {
  const rnd = prng(params.seed);
  ensureDir(root);
  const pool = textPool(rnd, 8 << 20);

  // Directories: a random recursive tree; a third of the parents are drawn from the first few
  // hundred dirs so the top is wide, the rest uniformly so branches run deep.
  const dirs = [''];
  const depth = [0];
  const childNames = new Map([['', new Set()]]);
  const tops = ['packages', 'src', 'sysdeps', 'test', 'docs', 'tools', 'vendor', 'crates', 'scripts'];
  for (const t of tops) addDir('', t);
  while (dirs.length < params.dirs) {
    const parentIdx = rnd.next() < 0.33 ? rnd.int(0, Math.min(dirs.length - 1, 300)) : rnd.int(0, dirs.length - 1);
    if (depth[parentIdx] >= 14) continue;
    const base = rnd.next() < 0.004 ? rnd.pick(ODD_NAMES) : rnd.pick(WORDS);
    addDir(dirs[parentIdx], base);
  }
  function addDir(parent, base) {
    const names = childNames.get(parent);
    let name = base;
    for (let i = 2; names.has(name); i++) name = `${base}-${i}`;
    names.add(name);
    const rel = parent ? `${parent}/${name}` : name;
    dirs.push(rel);
    depth.push(parent ? rel.split('/').length : 1);
    childNames.set(rel, new Set());
    mkdirSync(join(root, rel));
    return rel;
  }

  // Files per directory follow a heavy-tailed weight, like real trees (a few huge dirs).
  const weights = dirs.map(() => Math.exp(rnd.normal() * 1.1));
  const cum = [];
  let acc = 0;
  for (const w of weights) cum.push((acc += w));
  const pickDir = () => {
    const x = rnd.next() * acc;
    let lo = 0, hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < x) lo = mid + 1; else hi = mid;
    }
    return dirs[lo];
  };
  const extTotal = EXTS.reduce((s, [, w]) => s + w, 0);
  const pickExt = () => {
    let x = rnd.next() * extTotal;
    for (const [e, w] of EXTS) if ((x -= w) < 0) return e;
    return 'ts';
  };

  let totalBytes = 0;
  const writeSource = (rel, size, exec = false) => {
    const header = `// ${rel}\n`;
    let body;
    if (size <= header.length) body = header.slice(0, size);
    else {
      const off = rnd.int(0, pool.length - (size - header.length) - 1);
      body = header + pool.slice(off, off + size - header.length);
    }
    writeFileSync(join(root, rel), body);
    if (exec) chmodSync(join(root, rel), 0o755);
    totalBytes += Buffer.byteLength(body);
  };
  const uniqueName = (dir, base) => {
    const names = childNames.get(dir);
    let name = base;
    for (let i = 2; names.has(name); i++) name = base.replace(/(\.[^.]+)?$/, `-${i}$1`);
    names.add(name);
    return name;
  };

  const regular = [];
  // Root .gitignore: node_modules at any depth, logs, build outputs.
  writeFileSync(join(root, '.gitignore'), 'node_modules/\n*.log\ndist/\n.cache/\ncoverage/\n# keep this one\n!keep.log\n');
  childNames.get('').add('.gitignore');
  const tracked = params.trackedFiles - params.bigFilesMb.length - 1;
  for (let i = 0; i < tracked; i++) {
    const dir = pickDir();
    const ext = pickExt();
    const stem = rnd.next() < 0.002 ? rnd.pick(ODD_NAMES) : rnd.pick(WORDS);
    const name = uniqueName(dir, `${stem}.${ext}`);
    const rel = dir ? `${dir}/${name}` : name;
    // Log-normal sizes around 450 B with a long tail; a few empty files.
    const size = rnd.next() < 0.01 ? 0 : Math.min(4 << 20, Math.round(Math.exp(Math.log(450) + rnd.normal() * 1.45)));
    writeSource(rel, size, ext === 'sh' || rnd.next() < 0.01);
    regular.push(rel);
  }

  // A few big binary-ish files (assets, datasets, test blobs).
  ensureDir(join(root, 'assets', 'blobs'));
  childNames.set('assets', childNames.get('assets') ?? new Set());
  params.bigFilesMb.forEach((mb, k) => {
    const rel = `assets/blobs/blob-${k}.bin`;
    const buf = Buffer.allocUnsafe(mb << 20);
    const words = new Uint32Array(buf.buffer, buf.byteOffset, buf.length >> 2);
    let x = (params.seed + k * 7919) | 1;
    for (let j = 0; j < words.length; j++) {
      x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
      words[j] = x >>> 0;
    }
    writeFileSync(join(root, rel), buf);
    totalBytes += buf.length;
    regular.push(rel);
  });

  // Nested .gitignore files with dir-only patterns, anchors and negations, plus files they hit.
  let ignoredFiles = 0;
  const nested = Math.max(8, Math.round(params.dirs / 300));
  for (let k = 0; k < nested; k++) {
    const dir = dirs[rnd.int(1, dirs.length - 1)];
    if (existsSync(join(root, dir, '.gitignore'))) continue;
    writeFileSync(join(root, dir, '.gitignore'), '*.tmp\nbuild/\n!important.tmp\n/local-only.txt\n');
    childNames.get(dir).add('.gitignore');
    ensureDir(join(root, dir, 'build'));
    for (let j = 0; j < 5; j++) writeFileSync(join(root, dir, 'build', `out-${j}.js`), `// generated ${j}\n`);
    writeFileSync(join(root, dir, 'scratch.tmp'), 'scratch\n');
    writeFileSync(join(root, dir, 'important.tmp'), 'kept by a negation\n'); // tracked
    writeFileSync(join(root, dir, 'local-only.txt'), 'ignored by an anchored rule\n');
    writeFileSync(join(root, dir, 'debug.log'), 'ignored by the root rule\n');
    ignoredFiles += 8;
    regular.push(`${dir}/important.tmp`);
  }

  // node_modules at the root and in a few packages: many small files, all ignored by git.
  const nmRoots = ['node_modules'];
  for (const d of dirs.filter((d) => /^packages\/[^/]+$/.test(d)).slice(0, 6)) nmRoots.push(`${d}/node_modules`);
  const perRoot = Math.ceil(params.nodeModulesFiles / nmRoots.length);
  for (const nm of nmRoots) {
    let written = 0;
    for (let p = 0; written < perRoot; p++) {
      const pkg = `${nm}/${p % 7 === 0 ? `@scope-${p % 13}/` : ''}${rnd.pick(WORDS)}-${p}`;
      for (const sub of ['', '/lib', '/dist', '/lib/internal']) {
        ensureDir(join(root, pkg + sub));
        const n = rnd.int(1, 8);
        for (let j = 0; j < n && written < perRoot; j++, written++) {
          const size = Math.min(200_000, Math.round(Math.exp(Math.log(900) + rnd.normal() * 1.3)));
          const off = rnd.int(0, pool.length - size - 1);
          writeFileSync(join(root, pkg + sub, `index-${j}.js`), pool.slice(off, off + size));
        }
      }
      writeFileSync(join(root, pkg, 'package.json'), `{"name":"${pkg.split('/').pop()}","version":"1.0.${p}"}\n`);
      written++;
    }
    ignoredFiles += written;
  }

  // Symlinks: to files inside (relative), to a directory, dangling, and outside the tree.
  const links = [];
  for (let k = 0; k < params.symlinks; k++) {
    const dir = dirs[rnd.int(1, dirs.length - 1)];
    const name = uniqueName(dir, `link-${k}`);
    const rel = `${dir}/${name}`;
    const up = '../'.repeat(dir.split('/').length);
    const kind = k % 4;
    const target =
      kind === 0 || kind === 1 ? up + rnd.pick(regular.slice(0, 1000))
        : kind === 2 ? up + dirs[rnd.int(1, dirs.length - 1)]
          : k % 8 === 3 ? 'missing-target' : '/etc/hostname';
    symlinkSync(target, join(root, rel));
    links.push(rel);
  }

  return { dirs: dirs.length, regularFiles: regular.length, symlinks: links.length, ignoredFiles, bytes: totalBytes };
}

/** ~8 MB of source-looking text from which file bodies are sliced. */
function textPool(rnd, size) {
  const idents = WORDS.concat(['value', 'index', 'result', 'buffer', 'node', 'state', 'options', 'ctx', 'err']);
  const parts = [];
  let len = 0;
  while (len < size) {
    const indent = '  '.repeat(rnd.int(0, 4));
    const a = rnd.pick(idents), b = rnd.pick(idents), c = rnd.pick(idents);
    const line = [
      `${indent}const ${a}${rnd.int(0, 99)} = ${b}.${c}(${rnd.int(0, 4096)});\n`,
      `${indent}if (${a} !== ${b}) return ${c};\n`,
      `${indent}// ${a} ${b} ${c}: keep the ${b} in sync with ${c}\n`,
      `${indent}function ${a}_${b}(${c}) {\n`,
      `${indent}}\n`,
      `${indent}static int ${a}_${c}(struct ${b} *p) { return p->${c} + ${rnd.int(0, 255)}; }\n`,
      '\n',
    ][rnd.int(0, 6)];
    parts.push(line);
    len += line.length;
  }
  return parts.join('').slice(0, size);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2);
  const filesAt = argv.indexOf('--files');
  const nmAt = argv.indexOf('--node-modules');
  const { root, meta } = ensureTree({
    quick: argv.includes('--quick'),
    files: filesAt >= 0 ? Number(argv[filesAt + 1]) : undefined,
    nodeModules: nmAt >= 0 ? Number(argv[nmAt + 1]) : undefined,
    force: argv.includes('--force'),
  });
  process.stdout.write(`${root}\n${JSON.stringify(meta, null, 2)}\n`);
}
