#!/usr/bin/env node
// Issue 4 (and 7) figures: the snapshot store.
//
//   node bench/store.mjs [--quick] [--runs N]
//   CAIRN_S3_URL=s3://bucket/prefix?endpoint=… CAIRN_PG_URL=postgres://… node bench/store.mjs
//   node bench/store.mjs --with-servers   # starts its own Ceph RGW and PostgreSQL on bench ports
//                                         # (scripts/servers/*-up.sh, root), stops them after
//
// 1. saveSnapshot throughput, latest and history, cairn's FileStorage (fsync on, as shipped)
//    side by side with upstream Strands' approach re-implemented here from its description
//    (upstream-notes § 2) — with and without an fsync added, so durability is compared fairly.
// 2. One listSnapshotIds page of 100, startAfter in the middle, at 100 / 10k / 100k history
//    entries, cairn vs upstream's approach on the very same directory.
// 3. With CAIRN_S3_URL / CAIRN_PG_URL set: the same save/load/list figures on those backends.
import { spawnSync } from 'node:child_process';
import { mkdir, open, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DIST_INDEX, REPO_DIR, WORK_DIR, ensureDir, fmtMs, fmtRatio, interleave, log, machineMarkdown, parseBenchArgs,
  requireBuilt, saveResult, stats, table,
} from './lib.mjs';

const { quick, runs, argv } = parseBenchArgs(process.argv.slice(2), { runs: 7 });
requireBuilt();
const cairn = await import(DIST_INDEX);
if (typeof cairn.FileStorage !== 'function') {
  saveResult('store', '## Snapshot store (issue 4)\n\nnot measured yet: `FileStorage` is not exported by the built package.\n');
  process.exit(0);
}
const { FileStorage, uuidV7 } = cairn;

const base = join(WORK_DIR, 'store');
await rm(base, { recursive: true, force: true });
ensureDir(base);

/**
 * Upstream Strands FileStorage's approach, written from its description (not its code):
 * paths `<base>/<session>/scopes/<scope>/<scopeId>/snapshots/…`; a save makes the parent
 * directory, writes `<file>.tmp` (a fixed name) and renames it over the target, with no fsync;
 * a list reads the whole history directory, keeps names matching `snapshot_(id).json` with an
 * unanchored regex, sorts them, filters `id > startAfter` and slices to the limit — on every page.
 * `fsync: true` adds fsync of the file and its directory, the durability cairn pays for.
 */
class UpstreamApproachStorage {
  constructor(baseDir, { fsync = false } = {}) {
    this.baseDir = baseDir;
    this.fsync = fsync;
  }
  dir(loc) {
    for (const id of [loc.sessionId, loc.scopeId]) if (!/^[a-z0-9_-]+$/.test(id)) throw new Error(`bad id ${id}`);
    return join(this.baseDir, loc.sessionId, 'scopes', loc.scope, loc.scopeId, 'snapshots');
  }
  async saveSnapshot({ location, snapshotId, isLatest, snapshot }) {
    const file = isLatest
      ? join(this.dir(location), 'snapshot_latest.json')
      : join(this.dir(location), 'immutable_history', `snapshot_${snapshotId}.json`);
    const parent = join(file, '..');
    await mkdir(parent, { recursive: true });
    const tmp = `${file}.tmp`;
    const text = JSON.stringify(snapshot, null, 2);
    if (!this.fsync) await writeFile(tmp, text);
    else {
      const fh = await open(tmp, 'w');
      await fh.writeFile(text);
      await fh.sync();
      await fh.close();
    }
    await rename(tmp, file);
    if (this.fsync) {
      const dh = await open(parent, 'r');
      await dh.sync();
      await dh.close();
    }
  }
  async loadSnapshot({ location, snapshotId }) {
    const file = snapshotId === undefined
      ? join(this.dir(location), 'snapshot_latest.json')
      : join(this.dir(location), 'immutable_history', `snapshot_${snapshotId}.json`);
    try {
      return JSON.parse(await readFile(file, 'utf8'));
    } catch (e) {
      if (e.code === 'ENOENT') return null;
      throw e;
    }
  }
  async listSnapshotIds({ location, limit, startAfter }) {
    if (limit !== undefined && limit <= 0) return [];
    let names;
    try {
      names = await readdir(join(this.dir(location), 'immutable_history'));
    } catch (e) {
      if (e.code === 'ENOENT') return [];
      throw e;
    }
    let ids = names.map((n) => /snapshot_([\w-]+)\.json$/.exec(n)?.[1]).filter(Boolean).sort();
    if (startAfter) ids = ids.filter((id) => id > startAfter);
    return limit === undefined ? ids : ids.slice(0, limit);
  }
}

// A realistic agent snapshot: a conversation of a few dozen messages (~6 KB of JSON).
function makeSnapshot(i) {
  const messages = [];
  for (let k = 0; k < 24; k++) {
    messages.push({ role: k % 2 ? 'assistant' : 'user', content: [{ text: `message ${k} of snapshot ${i}: ${'lorem ipsum '.repeat(15)}` }] });
  }
  return {
    scope: 'agent',
    schemaVersion: '1.0',
    createdAt: new Date().toISOString(),
    data: { messages, state: { step: i, plan: ['read', 'edit', 'test'] }, systemPrompt: 'You are a careful coding agent.' },
    appData: { ticket: `T-${i}` },
  };
}

const loc = (sessionId, scopeId = 'agent') => ({ sessionId, scope: 'agent', scopeId });
const batch = quick ? 30 : 100;

async function timeOps(n, op) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await op(i);
  return Number(process.hrtime.bigint() - t0) / 1e6 / n; // ms per op
}

// ---------- 1. save throughput (local file system) ----------
const impls = [
  { name: 'cairn FileStorage (fsync on)', store: new FileStorage(join(base, 'cairn')) },
  { name: 'upstream approach (no fsync)', store: new UpstreamApproachStorage(join(base, 'upstream')) },
  { name: 'upstream approach + fsync file & dir', store: new UpstreamApproachStorage(join(base, 'upstream-fsync'), { fsync: true }) },
];
const snap = makeSnapshot(0);
const cases = [];
for (const { name, store } of impls) {
  cases.push({ name: `${name} — latest`, run: () => timeOps(batch, () => store.saveSnapshot({ location: loc('save-latest'), snapshotId: 'latest', isLatest: true, snapshot: snap })) });
  cases.push({ name: `${name} — history`, run: () => timeOps(batch, () => store.saveSnapshot({ location: loc('save-history'), snapshotId: uuidV7(), isLatest: false, snapshot: snap })) });
  cases.push({ name: `${name} — load latest`, run: () => timeOps(batch, () => store.loadSnapshot({ location: loc('save-latest') })) });
}
log(`save/load: ${runs} rounds × ${batch} ops per case`);
const saves = await interleave(cases, { runs });
const perOp = (n) => stats(saves.samples.get(n) ?? []);
const saveRows = [];
for (const kind of ['latest', 'history', 'load latest']) {
  const ref = perOp(`cairn FileStorage (fsync on) — ${kind}`).median;
  for (const { name } of impls) {
    const s = perOp(`${name} — ${kind}`);
    saveRows.push([
      kind === 'load latest' ? 'loadSnapshot (latest)' : `saveSnapshot ${kind}`,
      name,
      fmtMs(s.median),
      fmtMs(s.p95),
      Number.isFinite(s.median) ? `${Math.round(1000 / s.median)}/s` : '–',
      name.startsWith('cairn') ? '1.00×' : fmtRatio(ref / s.median),
    ]);
  }
}
let out = `## Snapshot store (issue 4, issue 7)\n\n${machineMarkdown()}\nSnapshot document: ~${(JSON.stringify(snap).length / 1024).toFixed(1)} KB (24 messages). Each sample is the mean of ${batch} sequential awaited operations; median and p95 over ${runs} interleaved rounds. "Upstream approach" is re-implemented in the bench from upstream-notes § 2 (fixed \`.tmp\` name + rename, no fsync; list = readdir + regex + sort + filter + slice per page).\n\n`;
out += table('saveSnapshot / loadSnapshot, local file system', ['operation', 'implementation', 'median per op', 'p95 per op', 'ops/s', 'cairn time ÷ this time'], saveRows);
out += '\n"cairn time ÷ this time" > 1 means this implementation is faster than cairn; cairn fsyncs the file and the directory on every write (crash-safe), upstream does not.\n\n';

// ---------- 2. one page of 100, startAfter in the middle ----------
const sizes = quick ? [100, 1_000, 10_000] : [100, 10_000, 100_000];
const populator = new FileStorage(join(base, 'list'), { fsync: false }); // same files, written fast
const cairnList = new FileStorage(join(base, 'list'));
// The same store with its history index turned off: the bounded-heap directory scan that cairn
// also uses inside the index's racy window (a directory changed in the last few seconds).
const cairnScan = new FileStorage(join(base, 'list'), { historyIndex: false });
const upstreamList = new UpstreamApproachStorage(join(base, 'list'));
const small = { scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data: { n: 1 }, appData: {} };
const listRows = [];
for (const n of sizes) {
  const location = loc(`list-${n}`);
  const t0 = Date.now();
  const ids = [];
  for (let i = 0; i < n; i += 256) {
    const chunk = [];
    for (let k = i; k < Math.min(n, i + 256); k++) {
      const id = uuidV7();
      ids.push(id);
      chunk.push(populator.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: small }));
    }
    await Promise.all(chunk);
  }
  log(`populated ${n} history entries in ${((Date.now() - t0) / 1000).toFixed(1)} s (cairn FileStorage, fsync off)`);
  ids.sort();
  const startAfter = ids[Math.floor(n / 2)];
  const expected = ids.slice(Math.floor(n / 2) + 1, Math.floor(n / 2) + 101).join();
  const check = async (store, name) => {
    const page = await store.listSnapshotIds({ location, limit: 100, startAfter });
    if (page.join() !== expected) throw new Error(`${name} returned a wrong page at ${n}`);
  };
  await check(cairnScan, 'cairn (scan)');
  await check(upstreamList, 'upstream approach');
  // cairn builds its index only once the directory has been quiet for a while (racy guard):
  // wait that out, then the first page pays for the rebuild, once.
  await new Promise((r) => setTimeout(r, 3_300));
  const t1 = process.hrtime.bigint();
  await check(cairnList, 'cairn');
  const firstMs = Number(process.hrtime.bigint() - t1) / 1e6;
  const reps = n >= 100_000 ? 3 : n >= 10_000 ? 10 : 50;
  const res = await interleave(
    [
      { name: 'cairn', run: () => timeOps(reps, () => cairnList.listSnapshotIds({ location, limit: 100, startAfter })) },
      { name: 'cairn-scan', run: () => timeOps(reps, () => cairnScan.listSnapshotIds({ location, limit: 100, startAfter })) },
      { name: 'upstream', run: () => timeOps(reps, () => upstreamList.listSnapshotIds({ location, limit: 100, startAfter })) },
    ],
    { runs },
  );
  const c = stats(res.samples.get('cairn'));
  const sc = stats(res.samples.get('cairn-scan'));
  const u = stats(res.samples.get('upstream'));
  listRows.push([
    n.toLocaleString('en'), fmtMs(c.median), fmtMs(c.p95), fmtMs(sc.median), fmtMs(u.median), fmtMs(u.p95),
    fmtRatio(c.median / u.median), fmtRatio(sc.median / u.median), fmtMs(firstMs),
  ]);
}
out += table('listSnapshotIds: one page of 100 (startAfter in the middle), local file system', ['history entries', 'cairn (index) median', 'cairn (index) p95', 'cairn scan path median', 'upstream approach median', 'upstream p95', 'cairn (index) ÷ upstream', 'cairn scan ÷ upstream', 'cairn first page after the history changed (index rebuilt, once)'], listRows);
out += '\ncairn\'s FileStorage keeps a sorted history index beside `immutable_history/` (validated against the directory\'s stamp, built once the directory has been quiet for 3 s and holds ≥ 1,000 entries): a page is then O(log n + page). Inside that racy window, or below 1,000 entries, it scans the directory keeping only the page in a bounded heap ("scan path", measured with `historyIndex: false`). Upstream reads, sorts and filters the whole directory on every page.\n\n';

// ---------- 3. distributed backends, when a server is given ----------
// Our own servers on ports apart from the test suite's, so a running test run is not disturbed.
const started = [];
const serverNotes = [];
if (argv.includes('--with-servers')) {
  const up = (script, args, env = {}) => {
    const r = spawnSync('bash', [join(REPO_DIR, 'scripts', 'servers', script), ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
    if (r.status !== 0) {
      serverNotes.push(`${script} failed: ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-2).join(' ')}`);
      return null;
    }
    return r.stdout;
  };
  if (!process.env.CAIRN_S3_URL) {
    const dir = '/tmp/cairn-bench-ceph';
    const outp = up('ceph-up.sh', [dir, '28081'], { MONPORT: '26789' });
    if (outp) {
      started.push(['ceph-down.sh', dir]);
      for (const m of outp.matchAll(/^(CAIRN_S3_URL|AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY)='?([^'\n]*)'?$/gm)) process.env[m[1]] = m[2];
    }
  }
  if (!process.env.CAIRN_PG_URL) {
    const dir = '/tmp/cairn-bench-pg';
    await rm(dir, { recursive: true, force: true });
    const outp = up('pg-up.sh', [dir, '25432']);
    if (outp) {
      started.push(['pg-down.sh', dir]);
      const m = /CAIRN_PG_URL='([^']+)'/.exec(outp);
      if (m) process.env.CAIRN_PG_URL = m[1];
    }
  }
}
const stopServers = () => {
  for (const [script, dir] of started.reverse()) spawnSync('bash', [join(REPO_DIR, 'scripts', 'servers', script), dir], { stdio: 'ignore', timeout: 60_000 });
};
process.on('exit', stopServers);
const backends = [];
if (process.env.CAIRN_S3_URL) backends.push(['S3 (Ceph RGW)', process.env.CAIRN_S3_URL]);
if (process.env.CAIRN_PG_URL) backends.push(['PostgreSQL', process.env.CAIRN_PG_URL]);
if (backends.length === 0) {
  out += '### Distributed backends\n\nnot measured in this run: set `CAIRN_S3_URL` and/or `CAIRN_PG_URL` (servers: `scripts/servers/ceph-up.sh`, `scripts/servers/pg-up.sh`).\n';
} else {
  const rows = [];
  const all = [['file system (cairn FileStorage, fsync on)', new FileStorage(join(base, 'remote-compare'))]];
  for (const [label, url] of backends) {
    try {
      all.push([label, await cairn.openStore(url, { cwd: WORK_DIR, env: process.env })]);
    } catch (e) {
      rows.push([label, `could not open: ${String(e.message).split('\n')[0]}`, '', '', '', '', '']);
    }
  }
  const entries = quick ? 1_000 : 10_000;
  const opN = quick ? 20 : 50;
  const runSuffix = Date.now().toString(36);
  for (const [label, store] of all) {
    try {
      const session = `bench-${runSuffix}`;
      const location = loc(session);
      const lat = async (fn) => {
        const s = [];
        for (let i = 0; i < opN; i++) {
          const t0 = process.hrtime.bigint();
          await fn(i);
          s.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
        return stats(s);
      };
      const sl = await lat(() => store.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: snap }));
      const sh = await lat(() => store.saveSnapshot({ location, snapshotId: uuidV7(), isLatest: false, snapshot: snap }));
      const ld = await lat(() => store.loadSnapshot({ location }));
      // Page of 100 at N entries: populate with bounded concurrency through the store itself.
      const pageLoc = loc(`${session}-list`);
      const ids = [];
      for (let i = 0; i < entries; i += 32) {
        const chunk = [];
        for (let k = i; k < Math.min(entries, i + 32); k++) {
          const id = uuidV7();
          ids.push(id);
          chunk.push(store.saveSnapshot({ location: pageLoc, snapshotId: id, isLatest: false, snapshot: small }));
        }
        await Promise.all(chunk);
      }
      ids.sort();
      const startAfter = ids[Math.floor(entries / 2)];
      const pg = await lat(() => store.listSnapshotIds({ location: pageLoc, limit: 100, startAfter }));
      rows.push([label, fmtMs(sl.median), fmtMs(sh.median), fmtMs(ld.median), `${fmtMs(pg.median)} (p95 ${fmtMs(pg.p95)})`, `${Math.round(1000 / sh.median)}/s`]);
      await store.deleteSession({ sessionId: session });
      await store.deleteSession({ sessionId: `${session}-list` });
    } catch (e) {
      rows.push([label, `failed: ${String(e.message).split('\n')[0]}`, '', '', '', '']);
    } finally {
      await store.close?.();
    }
  }
  out += table(`Backends side by side (median latency, sequential; page of 100 at ${entries.toLocaleString('en')} entries)`, ['backend', 'save latest', 'save history', 'load latest', `list page of 100 @ ${entries.toLocaleString('en')}`, 'history saves/s (1 client)'], rows);
  out += 'All on loopback on this 2-vCPU VM. The PostgreSQL test server from `scripts/servers/pg-up.sh` runs with `fsync=off` (synchronous_commit on); Ceph RGW uses a memstore OSD: neither pays for a disk flush, while the file store fsyncs file and directory on every write.\n\n';
}
if (serverNotes.length) out += `Server start-up: ${serverNotes.join('; ')}\n\n`;
saveResult('store', out);
await rm(base, { recursive: true, force: true });
stopServers();
started.length = 0;
