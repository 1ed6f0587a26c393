import { existsSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { CairnError, isCodedError } from '../../core/errors.js';
import { DEFAULT_STORE_DIR } from '../../store/defaults.js';
import { checkSessionId } from '../../store/contract/rules.js';
import type { ManagedSnapshotStorage, PruneResult, Scope, SnapshotLocation, StoreUsage } from '../../store/contract/types.js';
import { ExitCode, UsageError, writeJson, writeLine, type CliIO } from '../io.js';
import { ROOT_HELP, projectContext, storeSpec } from '../root.js';

interface CommonOptions {
  store?: string;
  root?: string;
  json?: boolean;
  session?: string;
  scope?: string;
  scopeId?: string;
}

const STORE_HELP = `store to use: file:DIR or a directory (default $CAIRN_STORE, else ${DEFAULT_STORE_DIR} under the project root), s3://bucket/prefix?endpoint=…, postgres://host/db`;

const EXIT_HELP = `
Exit codes: 0 ok, 1 failure (I/O, not found, verify found issues), 2 usage or invalid input, 3 conflict.
A file store directory that does not exist is an error (ERR_STORE_NOT_FOUND, exit 1), not an empty store.
Credentials never go on the command line: S3 keys come from AWS_* variables, PostgreSQL passwords from PGPASSWORD.`;

function positiveInt(name: string, allowZero: boolean) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || (!allowZero && Number(value) === 0)) {
      throw new InvalidArgumentError(`${name} must be a whole number${allowZero ? ' >= 0' : ' > 0'}`);
    }
    return Number(value);
  };
}

/** Adds the options every store command shares. */
function common(cmd: Command, location: 'none' | 'session' | 'filters'): Command {
  cmd.option('--store <url>', STORE_HELP).option('--root <dir>', ROOT_HELP).option('--json', 'print one JSON document on stdout');
  if (location === 'session') cmd.option('--session <id>', 'session id');
  if (location === 'filters') {
    cmd
      .option('--session <id>', 'only this session')
      .option('--scope <scope>', 'only this scope: agent or multiAgent')
      .option('--scope-id <id>', 'only this agent or orchestrator id');
  }
  return cmd.addHelpText('after', EXIT_HELP);
}

/** A store spec given on the command line must not carry a password (it would sit in shell history and `ps`). */
function checkNoCredentials(spec: string | undefined): void {
  if (spec === undefined || !/^[a-z][a-z0-9+.-]+:\/\//i.test(spec)) return;
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    return; // openStore reports it
  }
  if (url.password !== '' || url.searchParams.has('secretAccessKey') || url.searchParams.has('password')) {
    throw new UsageError('do not put credentials in --store; use the environment (PGPASSWORD, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY) or put the URL in CAIRN_STORE');
  }
}

/** Runs `fn` against the chosen store, turning store errors into CLI errors with their exit code. */
async function withStore(io: CliIO, opts: CommonOptions, fn: (store: ManagedSnapshotStorage, name: string) => Promise<void>): Promise<void> {
  checkNoCredentials(opts.store);
  const { isScope } = await import('../../store/contract/validation.js');
  if (opts.scope !== undefined && !isScope(opts.scope)) throw new UsageError(`--scope must be agent or multiAgent, got '${opts.scope}'`);
  let store: ManagedSnapshotStorage | undefined;
  const { root, config } = projectContext(io, opts.root);
  const name = storeSpec(io, root, opts.store, config);
  try {
    // Lazy: `cairn <anything else>` does not pay for loading the store backends.
    const { openStore, resolveStoreSpec } = await import('../../store/open.js');
    const target = resolveStoreSpec(name, { cwd: io.cwd, env: io.env });
    // Every store command reads: a directory that was never created is a mistyped store, not an empty one.
    if (target.kind === 'file' && !existsSync(target.dir)) {
      throw new CairnError(
        'ERR_STORE_NOT_FOUND',
        `store ${target.dir} does not exist; check --store (or CAIRN_STORE). A file store is created by its first write, e.g. \`cairn session post\``,
        { exitCode: 1, path: target.dir },
      );
    }
    store = await openStore(name, { cwd: io.cwd, env: io.env, within: root });
    await fn(store, name);
  } finally {
    await store?.close();
  }
}

function scopeOf(value: string | undefined): Scope {
  return (value ?? 'agent') as Scope;
}

/** Every location matching the filters (all sessions when none is given). */
async function locationsMatching(store: ManagedSnapshotStorage, opts: CommonOptions): Promise<SnapshotLocation[]> {
  if (opts.session !== undefined && opts.scopeId !== undefined) {
    return [{ sessionId: opts.session, scope: scopeOf(opts.scope), scopeId: opts.scopeId }];
  }
  const sessions = opts.session !== undefined ? [opts.session] : await store.listSessions();
  const out: SnapshotLocation[] = [];
  for (const sessionId of sessions) {
    for (const loc of await store.listLocations({ sessionId })) {
      if (opts.scope !== undefined && loc.scope !== opts.scope) continue;
      if (opts.scopeId !== undefined && loc.scopeId !== opts.scopeId) continue;
      out.push(loc);
    }
  }
  return out;
}

function requireOption(value: string | undefined, flag: string, command: string): string {
  if (value === undefined) throw new UsageError(`cairn store ${command} needs ${flag}`);
  return value;
}

/** When a stored snapshot was made and what it holds, in one line; an unreadable one says why instead of failing the listing. */
async function describeStored(s: ManagedSnapshotStorage, params: { location: SnapshotLocation; snapshotId?: string }): Promise<{ found: boolean; createdAt: string | null; summary: string }> {
  try {
    const snapshot = await s.loadSnapshot(params);
    if (snapshot === null) return { found: false, createdAt: null, summary: 'missing' };
    const { storedSnapshotSummary } = await import('../../session/records/record.js');
    return { found: true, createdAt: snapshot.createdAt, summary: storedSnapshotSummary(snapshot) };
  } catch (e) {
    return { found: true, createdAt: null, summary: `unreadable (${isCodedError(e) ? e.code : e instanceof Error ? e.message : String(e)})` };
  }
}

/** A session's newest latest snapshot over its locations: the time and summary `store list` shows. */
async function newestLatest(s: ManagedSnapshotStorage, sessionId: string): Promise<{ createdAt: string | null; summary: string }> {
  let best: { createdAt: string | null; summary: string } = { createdAt: null, summary: 'no latest snapshot' };
  for (const location of await s.listLocations({ sessionId })) {
    const d = await describeStored(s, { location });
    if (!d.found) continue;
    if (best.createdAt === null || (d.createdAt !== null && d.createdAt > best.createdAt)) best = { createdAt: d.createdAt, summary: d.summary };
  }
  return best;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

function table(rows: string[][], rightAligned: ReadonlySet<number>): string[] {
  if (rows.length === 0) return [];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (rightAligned.has(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd());
}

/** Registers `cairn store …` on the program. */
export function registerStoreCommands(program: Command, io: CliIO): void {
  const store = program
    .command('store')
    .description('Inspect and maintain the snapshot store (session snapshots: latest + immutable history per session/scope)')
    .addHelpText(
      'after',
      `
Layout of a file store: <dir>/<session>/scopes/<agent|multiAgent>/<scope-id>/snapshots/
  snapshot_latest.json, manifest.json, immutable_history/snapshot_<id>.json

Examples:
  cairn store list                                   # sessions
  cairn store list --session s1                      # locations and history ids of s1
  cairn store show --session s1 --scope-id agent     # latest snapshot of agent 'agent'
  cairn store show --session default --report        # report of the latest iteration saved
  cairn store prune --keep-last 20 --older-than 7d --dry-run
  cairn store prune                                  # only stale temp files of killed writes
  cairn store verify && cairn store du`,
    );

  common(
    store
      .command('list')
      .description('list sessions (newest latest snapshot: time and summary); with --session, its locations and their history snapshots (id, time, summary; oldest first)')
      .option('--limit <n>', 'at most n history ids per location', positiveInt('--limit', false))
      .option('--start-after <id>', 'only history ids after this UUID v7 (a paging cursor)'),
    'filters',
  ).action(async (opts: CommonOptions & { limit?: number; startAfter?: string }) => {
    await withStore(io, opts, async (s, name) => {
      if (opts.session === undefined) {
        if (opts.scopeId !== undefined || opts.startAfter !== undefined) throw new UsageError('--scope-id and --start-after need --session');
        const sessions = await s.listSessions();
        const details = [];
        for (const sessionId of sessions) details.push({ sessionId, ...(await newestLatest(s, sessionId)) });
        if (opts.json) writeJson(io, { store: name, sessions, details });
        else if (sessions.length === 0) writeLine(io.stderr, `no sessions in ${name}`);
        else for (const line of table(details.map((d) => [d.sessionId, d.createdAt ?? '-', d.summary]), new Set())) writeLine(io.stdout, line);
        return;
      }
      const locations = [];
      for (const location of await locationsMatching(s, opts)) {
        const page = { location, ...(opts.limit === undefined ? {} : { limit: opts.limit }), ...(opts.startAfter === undefined ? {} : { startAfter: opts.startAfter }) };
        const latest = await describeStored(s, { location });
        const ids = await s.listSnapshotIds(page);
        const entries = [];
        for (const id of ids) entries.push({ id, ...(await describeStored(s, { location, snapshotId: id })) });
        locations.push({ scope: location.scope, scopeId: location.scopeId, hasLatest: latest.found, ids, entries });
      }
      if (opts.json) {
        writeJson(io, { store: name, sessionId: opts.session, locations });
        return;
      }
      if (locations.length === 0) writeLine(io.stderr, `no snapshots for session ${opts.session} in ${name}`);
      for (const l of locations) {
        writeLine(io.stdout, `${l.scope}/${l.scopeId}  latest: ${l.hasLatest ? 'yes' : 'no'}  history: ${l.ids.length}${opts.limit !== undefined || opts.startAfter ? ' (this page)' : ''}`);
        for (const line of table(l.entries.map((e) => [`  ${e.id}`, e.createdAt ?? '-', e.summary]), new Set())) writeLine(io.stdout, line);
      }
    });
  });

  common(
    store
      .command('show')
      .description('print one snapshot as JSON: the latest, or a history snapshot with --id; an iteration record as its text report with --report, or its patch with --patch')
      .option('--session <id>', 'session id (required)')
      .option('--scope <scope>', 'agent or multiAgent (default: agent)')
      .option('--scope-id <id>', "agent or orchestrator id (required, except with --report or --patch: 'iterations')")
      .option('--id <snapshotId>', 'a history snapshot id (default: the latest snapshot)')
      .option('--report', "print an iteration record (saved by `cairn session post`) as `cairn session report` does: summary, files with status and +/- lines, commits, tests; --scope-id defaults to 'iterations'")
      .option('--patch', 'print the patch kept with an iteration record (cut at 256 KiB when bigger; stderr says so)'),
    'none',
  ).action(async (opts: CommonOptions & { id?: string; report?: boolean; patch?: boolean }) => {
    const sessionId = requireOption(opts.session, '--session', 'show');
    if (opts.report && opts.patch) throw new UsageError('pick one of --report and --patch');
    if (opts.json && (opts.report || opts.patch)) throw new UsageError('--json prints the snapshot itself; leave it out with --report or --patch');
    // Iteration records live under scope-id 'iterations': the reader of a report need not know that.
    if ((opts.report || opts.patch) && opts.scopeId === undefined) opts.scopeId = 'iterations';
    await withStore(io, opts, async (s, name) => {
      if (opts.scopeId === undefined) {
        // Say which values exist rather than only that one is needed.
        const where = (await s.listLocations({ sessionId })).map((l) => `--scope ${l.scope} --scope-id ${l.scopeId}`);
        const known = where.length === 0 ? `session ${sessionId} has no snapshots in ${name} (\`cairn store list\` shows the sessions)` : `session ${sessionId} has: ${where.join('; ')}`;
        throw new UsageError(`cairn store show needs --scope-id; ${known}`);
      }
      const scopeId = opts.scopeId;
      const location: SnapshotLocation = { sessionId, scope: scopeOf(opts.scope), scopeId };
      const snapshot = await s.loadSnapshot(opts.id === undefined ? { location } : { location, snapshotId: opts.id });
      if (snapshot === null) {
        const what = opts.id === undefined ? 'no latest snapshot' : `no history snapshot ${opts.id}`;
        throw new CairnError('ERR_NOT_FOUND', `${what} for ${sessionId}/${location.scope}/${scopeId} in ${name}; run \`cairn store list --session ${sessionId}\` to see what is there`, { exitCode: 1 });
      }
      if (opts.report || opts.patch) {
        const review = await import('../../review/stored.js');
        if (opts.report) io.stdout.write(review.renderStoredReport(snapshot));
        else {
          const patch = review.storedPatch(snapshot);
          if (patch === null) throw new CairnError('ERR_NOT_FOUND', 'this iteration record keeps no patch (saved before cairn kept reviews, or without inventories); `cairn session diff` prints it where the iteration ran', { exitCode: 1 });
          io.stdout.write(patch.text);
          if (patch.cut) writeLine(io.stderr, `cairn: the stored patch is cut at ${patch.text.length} of ${patch.chars} characters; \`cairn session diff\` prints all of it where the iteration ran`);
        }
        return;
      }
      writeJson(io, snapshot);
    });
  });

  common(
    store.command('delete-session').description('delete every snapshot, history and manifest of one session (exit 1 when the session does not exist)'),
    'session',
  ).action(async (opts: CommonOptions) => {
    const sessionId = requireOption(opts.session, '--session', 'delete-session');
    checkSessionId(sessionId); // a bad id is a usage error (2), as for every other store command, not "no such session" (1)
    await withStore(io, opts, async (s, name) => {
      const sessions = await s.listSessions();
      if (!sessions.includes(sessionId)) {
        const known = sessions.length === 0 ? 'it has no sessions' : `its sessions: ${sessions.slice(0, 20).join(', ')}${sessions.length > 20 ? ', …' : ''}`;
        throw new CairnError('ERR_NOT_FOUND', `no session ${sessionId} in ${name}, nothing deleted; ${known}`, { exitCode: 1 });
      }
      await s.deleteSession({ sessionId });
      if (opts.json) writeJson(io, { deleted: sessionId });
      else writeLine(io.stdout, `deleted session ${sessionId}`);
    });
  });

  common(
    store
      .command('prune')
      .description('delete old history snapshots (never the latest snapshot or the manifest) and stale temp files of interrupted writes; with no --keep-last/--older-than (nor retention in config), only the stale temp files')
      .option('--keep-last <n>', 'keep the newest n history snapshots of each location', positiveInt('--keep-last', true))
      .option('--older-than <age>', "delete history created before this age or time: '30m', '12h', '7d', '2w' or an ISO date")
      .option('--dry-run', 'report what would be deleted, delete nothing'),
    'filters',
  ).action(async (opts: CommonOptions & { keepLast?: number; olderThan?: string; dryRun?: boolean }) => {
    // Flags first, then the project config's retention (keepWithin is --older-than).
    const retention = projectContext(io, opts.root).config.retention;
    const keepLast = opts.keepLast ?? retention?.keepLast;
    const olderThan = opts.olderThan ?? retention?.keepWithin;
    await withStore(io, opts, async (s, name) => {
      if (keepLast === undefined && olderThan === undefined) {
        await pruneTempFilesOnly(io, s, name, opts);
        return;
      }
      const results: PruneResult[] = [];
      for (const location of await locationsMatching(s, opts)) {
        results.push(
          await s.prune({
            location,
            dryRun: opts.dryRun === true,
            ...(keepLast === undefined ? {} : { keepLast }),
            ...(olderThan === undefined ? {} : { olderThan }),
          }),
        );
      }
      if (opts.json) {
        writeJson(io, { store: name, dryRun: opts.dryRun === true, results });
        return;
      }
      const verb = opts.dryRun ? 'would delete' : 'deleted';
      let total = 0;
      for (const r of results) {
        total += r.deleted.length;
        const temps = r.tempFilesRemoved?.length ?? 0;
        const { sessionId, scope, scopeId } = r.location;
        writeLine(io.stdout, `${sessionId}/${scope}/${scopeId}: ${verb} ${r.deleted.length}, kept ${r.kept}${temps > 0 ? `, ${verb} ${temps} temp file(s)` : ''}`);
      }
      writeLine(io.stderr, `${verb} ${total} history snapshot(s) in ${results.length} location(s) of ${name}`);
    });
  });

  /** A plain prune (no retention given): stale temp files of interrupted writes only, never history. */
  async function pruneTempFilesOnly(io: CliIO, s: ManagedSnapshotStorage, name: string, opts: CommonOptions & { dryRun?: boolean }): Promise<void> {
    if (!('pruneTempFiles' in s) || typeof s.pruneTempFiles !== 'function') {
      throw new UsageError(`cairn store prune needs --keep-last <n> and/or --older-than <age> (or retention in .cairn/config.json) on ${name}, which has no temp files to clean; nothing was deleted`);
    }
    const pruneTemps = (s.pruneTempFiles as (l: SnapshotLocation, o: { dryRun: boolean }) => Promise<string[]>).bind(s);
    const removed: string[] = [];
    for (const location of await locationsMatching(s, opts)) removed.push(...(await pruneTemps(location, { dryRun: opts.dryRun === true })));
    const verb = opts.dryRun ? 'would delete' : 'deleted';
    if (opts.json) {
      writeJson(io, { store: name, dryRun: opts.dryRun === true, tempFilesRemoved: removed });
      return;
    }
    for (const file of removed) writeLine(io.stdout, `${verb} temp file ${file}`);
    writeLine(io.stderr, `${verb} ${removed.length} stale temp file(s) in ${name}; no history deleted (give --keep-last or --older-than for that)`);
  }

  common(
    store.command('verify').description('check that every stored file parses and is a valid snapshot or manifest; report temp files and strays (exit 1 on any issue)'),
    'session',
  ).action(async (opts: CommonOptions) => {
    await withStore(io, opts, async (s, name) => {
      const report = await s.verify(opts.session === undefined ? {} : { sessionId: opts.session });
      if (opts.json) writeJson(io, { store: name, ...report });
      else {
        for (const i of report.issues) writeLine(io.stdout, `${i.kind}  ${i.where}  ${i.message}`);
        writeLine(io.stderr, report.ok ? `ok: ${report.checked} file(s) checked in ${name}` : `${report.issues.length} issue(s) found, ${report.checked} file(s) checked in ${name}`);
      }
      if (!report.ok) throw new ExitCode(1);
    });
  });

  common(
    store.command('du').description('disk usage: history count, latest/manifest presence and bytes per session, scope and scope id'),
    'session',
  ).action(async (opts: CommonOptions) => {
    await withStore(io, opts, async (s, name) => {
      const usage: StoreUsage[] = await s.du(opts.session === undefined ? {} : { sessionId: opts.session });
      const totalBytes = usage.reduce((n, u) => n + u.bytes, 0);
      const totalHistory = usage.reduce((n, u) => n + u.history, 0);
      if (opts.json) {
        writeJson(io, { store: name, locations: usage, total: { history: totalHistory, bytes: totalBytes } });
        return;
      }
      const rows = [['SESSION', 'SCOPE', 'SCOPE-ID', 'HISTORY', 'LATEST', 'MANIFEST', 'BYTES']];
      for (const u of usage) rows.push([u.sessionId, u.scope, u.scopeId, String(u.history), u.hasLatest ? 'yes' : 'no', u.hasManifest ? 'yes' : 'no', formatBytes(u.bytes)]);
      rows.push(['total', '', '', String(totalHistory), '', '', formatBytes(totalBytes)]);
      for (const line of table(rows, new Set([3, 6]))) writeLine(io.stdout, line);
    });
  });
}
