/**
 * `cairn session pre|post|report|prune`: a thin shell over `SnapshotManager` and the store.
 * Results on stdout (or one JSON document with --json), diagnostics on stderr.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { CairnError } from '../../core/errors.js';
import type { SnapshotManager } from '../../session/index.js';
import { DEFAULT_SESSION_ID } from '../../session/records/record.js';
import { ExitCode, UsageError, progressAllowed, writeJson, writeLine, type CliIO } from '../io.js';
import { ROOT_HELP, projectContext, storeSpec } from '../root.js';
import { residentManagerFactory } from '../../daemon/serving.js';
import { configuredStateDir, type CairnConfig } from '../../config/index.js';
import { registerReviewCommands } from './review.js';
import { registerRestoreCommand } from './restore.js';

type SessionLib = typeof import('../../session/index.js');
type ContentLib = typeof import('../../content/index.js');

/** What the session commands use of the libraries: the session's, the content store's, and openStore. */
type SessionCommandLib = SessionLib & ContentLib & { openStore: typeof import('../../store/open.js').openStore };

/** The session library (git, inventory, test-result parsers) loads only when a session command runs. */
async function load(): Promise<SessionCommandLib> {
  const [lib, store, content] = await Promise.all([import('../../session/index.js'), import('../../store/open.js'), import('../../content/index.js')]);
  return { ...lib, ...content, openStore: store.openStore };
}

const SESSION_HELP = `
The iteration flow:
  cairn session pre            # before the agent works: git state, key files, state dir, tree inventory
  ... the agent edits, runs shell commands, commits, runs tests ...
  cairn session post           # after: what changed (committed or not), commits, test results;
                               # saves the record {pre, post, diff} to the snapshot store
  cairn session report         # print the report of the latest iteration again

Iterations live in <root>/.cairn/iterations/001, 002, … unless --iteration-dir says otherwise.
Records go to the store given by --store (default file:<root>/.cairn/store), session "${DEFAULT_SESSION_ID}",
scope "agent", scope id "iterations": one history snapshot per iteration plus the latest.`;

const PRE_HELP = `
A second \`session pre\` while an iteration is still open (pre-snapshot, no post-snapshot) starts
the next iteration beside it, as parallel agents do, and names the open one on stderr. With
--amend it takes the open iteration's pre-snapshot again instead (nothing new is started); an
--iteration-dir that already holds a pre-snapshot is refused (exit 3) unless --amend is given.`;

const POST_HELP = `
Each iteration is finished once: a \`session post\` on an iteration that is already finished
(it has a post-snapshot) is refused with ERR_ITERATION_FINISHED, exit 3, before anything is
written, so the post-snapshot is never rewritten and the store never gets a second record for
it. Start the next iteration with \`cairn session pre\`; see the finished one with \`session report\`.
The store (--store) is opened before the post-snapshot is taken: a bad store fails first (exit 2).`;

export interface RootOptions {
  root?: string;
  stateDir?: string;
  inventory?: boolean;
  json?: boolean;
}

/**
 * `git status` started before the session library loads (see session/capture/git-prefetch.ts),
 * handed to the capture through a manager whose captureGitStatus takes it.
 */
type Prefetch = import('../../session/capture/git-prefetch.js').PrefetchedGitStatus;
type PrefetchLib = typeof import('../../session/capture/git-prefetch.js');
let prefetchLib: PrefetchLib | undefined;
async function prefetchGit(io: CliIO, rootFlag: string | undefined): Promise<Prefetch | null> {
  if (residentManagerFactory() !== null) return null; // a daemon's resident manager decides whether git runs
  try {
    const { root } = projectContext(io, rootFlag);
    prefetchLib = await import('../../session/capture/git-prefetch.js');
    return prefetchLib.prefetchGitStatus(root);
  } catch {
    return null; // the command reports a bad root itself
  }
}

/** `config` adds the project's excludes, and for `pre` its state dir (flag > env > config). */
function managerFor(lib: SessionLib, io: CliIO, root: string, opts: RootOptions, config: CairnConfig = {}, phase: 'pre' | 'post' = 'post', prefetched: Prefetch | null = null): SnapshotManager {
  const options: ConstructorParameters<typeof SnapshotManager>[1] = {};
  const stateDir = phase === 'pre' ? configuredStateDir(config, io.env, opts.stateDir) : opts.stateDir;
  if (stateDir !== undefined) options.stateDir = stateDir;
  if (config.exclude !== undefined) options.exclude = config.exclude;
  if (config.contentCap !== undefined) options.contentCapBytes = config.contentCap;
  if (opts.inventory === false) options.inventory = false;
  if (progressAllowed(io, opts.json)) {
    let last = 0;
    options.onProgress = (p) => {
      const now = Date.now();
      if (p.phase === 'done') io.stderr.write('\r\x1b[K');
      else if (now - last > 200) {
        last = now;
        io.stderr.write(`\r\x1b[Kcairn: scanning the working tree: ${p.filesDone} files (${p.filesHashed} hashed, ${p.filesCached} from cache)`);
      }
    };
  }
  const resident = residentManagerFactory();
  if (resident !== null) return resident(root, options);
  const Manager = prefetched === null || prefetchLib === undefined ? lib.SnapshotManager : prefetchLib.withPrefetchedGitStatus(lib.SnapshotManager, prefetched);
  return new Manager(root, options);
}

function relativeForHumans(io: CliIO, p: string): string {
  const rel = path.relative(io.cwd, p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
}

function parseSessionId(value: string): string {
  if (!/^[a-z0-9_-]+$/.test(value)) throw new UsageError(`--session must match ^[a-z0-9_-]+$ (lower-case letters, digits, _ and -), got ${JSON.stringify(value)}`);
  return value;
}

function parseNonNegativeInt(flag: string): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number >= 0, got ${JSON.stringify(value)}`);
    return Number(value);
  };
}

type Review = import('../../review/index.js').IterationReview;

/**
 * Diffs the iteration just finished and keeps the review beside it (review.json) for `session
 * list` and the report. A review that cannot be built (no inventories) leaves the report as before.
 */
async function reviewOf(root: string, iterationDir: string, held: Parameters<typeof import('../../review/index.js').reviewFinishedIteration>[2]): Promise<Review | null> {
  return (await import('../../review/index.js')).reviewFinishedIteration(root, iterationDir, held);
}

function reportFiles(review: Review | null): { files?: Review['files']; notCaptured?: string[] } {
  return review === null ? {} : { files: review.files, notCaptured: review.notCaptured };
}

/** The flags `session pre` receives. */
export type PreOptions = RootOptions & { iterationDir?: string; amend?: boolean };
/** The flags `session post` receives. */
export type PostOptions = RootOptions & { iterationDir?: string; store?: string | false; session?: string };

/**
 * Runs the command through a running `cairn daemon` of the project when this process is the whole
 * CLI and the daemon may serve it (src/cli/daemon/client.ts): true when it did (its exit code thrown
 * as ExitCode when not 0), false when the command must run here. Paths are resolved here first.
 */
async function servedByDaemon(io: CliIO, phase: 'pre' | 'post', opts: PreOptions | PostOptions): Promise<boolean> {
  if (io.ownsProcess !== true || io.daemonTried === true || io.env.CAIRN_DAEMON === '0') return false;
  const { runSessionThroughDaemon } = await import('../daemon/client.js');
  const code = await runSessionThroughDaemon(io, phase, { ...opts }); // null too for a bad root: the command reports it
  if (code === null) return false;
  if (code !== 0) throw new ExitCode(code);
  return true;
}

/** Runs `cairn session pre` (the full CLI's action and the executable's session lane call it). */
export async function runSessionPre(io: CliIO, opts: PreOptions): Promise<void> {
  await runPhase(io, 'pre', opts, (lib, prefetched) => takePre(io, lib, opts, prefetched));
}

/** Runs `cairn session post` (the full CLI's action and the executable's session lane call it). */
export async function runSessionPost(io: CliIO, opts: PostOptions): Promise<void> {
  await runPhase(io, 'post', opts, (lib, prefetched) => takePost(io, lib, opts, prefetched));
}

/**
 * Runs one phase through the project's daemon when it may serve it; else here, with `git status`
 * started before the session library loads and released whatever `take` does.
 */
async function runPhase(io: CliIO, phase: 'pre' | 'post', opts: PreOptions | PostOptions, take: (lib: SessionCommandLib, prefetched: Prefetch | null) => void | Promise<void>): Promise<void> {
  if (await servedByDaemon(io, phase, opts)) return;
  const prefetched = await prefetchGit(io, opts.root);
  try {
    await take(await load(), prefetched);
  } finally {
    prefetched?.dispose();
  }
}

function takePre(io: CliIO, lib: SessionCommandLib, opts: PreOptions, prefetched: Prefetch | null): void {
  const { root, config } = projectContext(io, opts.root);
  // A state dir outside the root is a usage error before anything is created.
  if (opts.stateDir !== undefined) lib.stateDirParts(root, opts.stateDir);
  const open = lib.openIterationDirs(root);
  let iterationDir: string;
  let claimed = false;
  if (opts.iterationDir !== undefined) {
    iterationDir = path.resolve(io.cwd, opts.iterationDir);
    lib.assertIterationNotFinished(iterationDir);
    if (!opts.amend) lib.assertNoPreSnapshot(iterationDir);
  } else if (opts.amend && open.length > 0) {
    iterationDir = open.at(-1)!;
  } else {
    iterationDir = lib.createNextIterationDir(root);
    claimed = true;
  }
  let pre: import('../../session/index.js').PreSnapshot;
  try {
    pre = managerFor(lib, io, root, opts, config, 'pre', prefetched).capturePreSnapshot(root, iterationDir);
  } catch (e) {
    // A failed capture leaves no empty iteration behind (it would read as an open one).
    if (claimed) {
      try {
        fs.rmdirSync(iterationDir); // only ever an empty directory
      } catch {
        // something was written there after all: keep it
      }
    }
    throw e;
  }
  const stillOpen = open.filter((dir) => dir !== iterationDir);
  if (opts.json) {
    writeJson(io, { iterationDir, pre, openIterations: stillOpen });
    return;
  }
  writeLine(io.stdout, iterationDir);
  const tree = pre.inventory ? `, ${pre.inventory.files} files inventoried` : '';
  writeLine(io.stderr, `cairn: pre-snapshot written to ${relativeForHumans(io, path.join(iterationDir, lib.PRE_SNAPSHOT_FILE))} (branch ${pre.git.branch}, HEAD ${pre.git.commit.slice(0, 12)}${tree})`);
  for (const dir of stillOpen) {
    writeLine(io.stderr, `cairn: note: iteration ${path.basename(dir)} is still open (no post-snapshot); finish it with \`cairn session post --iteration-dir ${relativeForHumans(io, dir)}\`, or use --amend next time to take an open iteration's pre-snapshot again`);
  }
}

async function takePost(io: CliIO, lib: SessionCommandLib, opts: PostOptions, prefetched: Prefetch | null): Promise<void> {
  const { root, config } = projectContext(io, opts.root);
  const iterationDir = opts.iterationDir !== undefined ? path.resolve(io.cwd, opts.iterationDir) : lib.latestIterationDir(root);
  if (iterationDir === null) {
    throw new CairnError('ERR_NOT_FOUND', `no iteration with a pre-snapshot under ${path.join(root, '.cairn', 'iterations')}; run \`cairn session pre\` first or pass --iteration-dir`);
  }
  lib.assertIterationNotFinished(iterationDir);
  // Every option is checked, and the store opened, before the post-snapshot is written.
  const sessionId = opts.session ?? DEFAULT_SESSION_ID;
  const storage = opts.store === false ? null : await lib.openStore(storeSpec(io, root, typeof opts.store === 'string' ? opts.store : undefined, config), { cwd: io.cwd, env: io.env, within: root });
  try {
    // A file store that cannot be reached (a planted link) fails before the post-snapshot is written.
    if (storage !== null && 'baseDir' in storage) {
      await storage.listSessions().catch((e: unknown) => {
        if ((e as { code?: unknown }).code === 'ERR_CONTAINMENT') throw e;
      });
    }
    const manager = managerFor(lib, io, root, opts, config, 'post', prefetched);
    const post = manager.capturePostSnapshot(root, iterationDir);
    const pre = lib.readPreSnapshot(path.join(iterationDir, lib.PRE_SNAPSHOT_FILE));
    const diff = manager.calculateDiff(pre, post);
    const review = await reviewOf(root, iterationDir, { pre, post, diff });
    if (!opts.json) io.stdout.write(lib.renderIterationReport({ iterationDir: relativeForHumans(io, iterationDir), cwd: io.cwd, pre, post, diff, ...reportFiles(review) }));
    let saved: { sessionId: string; snapshotId: string } | null = null;
    if (storage !== null) {
      const r = await lib.saveIterationRecord(storage, { iterationDir, pre, post, diff, ...(review ? { review } : {}) }, sessionId);
      saved = { sessionId, snapshotId: r.snapshotId };
      writeLine(io.stderr, `cairn: iteration record saved to the store (session ${sessionId}, scope agent/iterations, id ${r.snapshotId})`);
    }
    // The spec's document is the SnapshotDiff; where it went and where it was saved ride beside its keys.
    if (opts.json) writeJson(io, { ...diff, iterationDir, saved });
  } finally {
    await storage?.close();
  }
}

export function registerSessionCommands(program: Command, io: CliIO): void {
  const session = program
    .command('session')
    .description('Pre/post snapshots around one agent iteration, and the report of what it did')
    .addHelpText('after', SESSION_HELP);

  session
    .command('pre')
    .description('Take the pre-snapshot of a new iteration (prints the iteration directory)')
    .option('--root <dir>', ROOT_HELP)
    .option('--iteration-dir <dir>', 'where pre-snapshot.json goes (default: the next numbered folder under <root>/.cairn/iterations/)')
    .option('--state-dir <dir>', 'agent state directory, relative to the root (default: $CAIRN_STATE_DIR, else the config\'s stateDir, else .aiwg)')
    .option('--no-inventory', 'skip the whole-tree inventory (only committed changes will be seen)')
    .option('--amend', 'take the pre-snapshot of the open iteration again (the latest one without a post-snapshot, or --iteration-dir) instead of starting another')
    .option('--json', 'print {iterationDir, pre, openIterations} as one JSON document')
    .addHelpText('after', PRE_HELP)
    .action(async (opts: PreOptions) => runSessionPre(io, opts));

  session
    .command('post')
    .description('Take the post-snapshot, print what the iteration did, and save the record to the store')
    .option('--root <dir>', ROOT_HELP)
    .option('--iteration-dir <dir>', 'the iteration to finish (default: the latest numbered one under <root>/.cairn/iterations/)')
    .option('--state-dir <dir>', 'agent state directory (default: the one the pre-snapshot used)')
    .option('--store <url>', 'snapshot store: file:DIR, s3://bucket/prefix?endpoint=…, postgres://… (default: file:<root>/.cairn/store)')
    .option('--no-store', 'do not save the iteration record to a store')
    .option('--session <id>', `store session id ([a-z0-9_-]+, default: ${DEFAULT_SESSION_ID})`, parseSessionId)
    .option('--no-inventory', 'skip the whole-tree inventory')
    .option('--json', 'print the SnapshotDiff as one JSON document, with iterationDir and saved: {sessionId, snapshotId} | null beside its keys')
    .addHelpText('after', POST_HELP)
    .action(async (opts: PostOptions) => runSessionPost(io, opts));

  registerReviewCommands(session, io);
  registerRestoreCommand(session, io);

  session
    .command('prune')
    .description('Delete old numbered iterations and the inventories and content nothing references any more; prints the content store\'s size')
    .option('--root <dir>', ROOT_HELP)
    .option('--keep-last <n>', 'keep the newest N numbered iterations (default: the config\'s retention.keepLast, else keep all iterations and only collect unreferenced inventories)', parseNonNegativeInt('--keep-last'))
    .option('--grace-minutes <n>', 'keep unreferenced inventory objects younger than this (default 15), so a snapshot being taken right now is safe', parseNonNegativeInt('--grace-minutes'))
    .option('--dry-run', 'report what would be deleted, delete nothing')
    .option('--json', 'print the result as one JSON document')
    .action(async (opts: RootOptions & { keepLast?: number; graceMinutes?: number; dryRun?: boolean }) => {
      const lib = await load();
      const { root, config } = projectContext(io, opts.root);
      const keepLast = opts.keepLast ?? config.retention?.keepLast;
      const dryRun = opts.dryRun ?? false;
      const iterationsDeleted = keepLast === undefined ? [] : lib.pruneIterationDirs(root, keepLast, dryRun);
      const pruneOptions: { graceMs?: number; dryRun: boolean } = { dryRun };
      if (opts.graceMinutes !== undefined) pruneOptions.graceMs = opts.graceMinutes * 60_000;
      const inventories = new lib.SnapshotManager(root).pruneInventories(pruneOptions);
      const content = lib.pruneContent(path.join(root, '.cairn'), pruneOptions);
      if (opts.json) {
        writeJson(io, { iterationsDeleted, inventories, content });
        return;
      }
      const verb = dryRun ? 'would delete' : 'deleted';
      writeLine(io.stdout, `iterations: ${verb} ${iterationsDeleted.length}`);
      for (const dir of iterationsDeleted) writeLine(io.stdout, `  ${relativeForHumans(io, dir)}`);
      writeLine(io.stdout, `inventory objects: ${verb} ${inventories.deleted} (${inventories.bytesFreed} bytes), kept ${inventories.kept}`);
      writeLine(io.stdout, `content objects: ${verb} ${content.objectsDeleted} (${content.bytesFreed} bytes), kept ${content.objectsKept}`);
      const u = content.usage;
      writeLine(io.stdout, `content store: ${u.objects} objects in ${u.packs} packs, ${u.rawBytes} bytes of content stored in ${u.storedBytes} bytes (${u.diskBytes} on disk)${dryRun ? ' before the prune' : ''}`);
    });
}
