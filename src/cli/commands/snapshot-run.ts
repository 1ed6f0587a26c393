/**
 * What `cairn snapshot` does once its flags are parsed, apart from their registration: the full
 * CLI (snapshot.ts) and the executable's snapshot lane (../fast-lane.ts) both call runSnapshot,
 * and this module loads no CLI framework.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KnownUnchanged, RepoSnapshot } from '../../inventory/types.js';
import type { SnapshotFlags } from '../fast-lane.js';
import { ExitCode, progressAllowed, type CliIO } from '../io.js';
import { checkOutputFile, outputWriteError, writesInPlace } from '../output-target.js';

export type { SnapshotFlags };

/**
 * What a watching caller (`cairn daemon`) knows for each of the command's scans, asked for when
 * the scan starts: the snapshot's, and the count of what a truncated one left out (each has its
 * own stat cache, so each needs its own watcher's trust).
 */
export interface WatchedScans {
  snapshot: () => KnownUnchanged | undefined;
  count: () => KnownUnchanged | undefined;
}

/** Runs `cairn snapshot`; throws what the CLI reports (CairnError and the like). */
export async function runSnapshot(io: CliIO, flags: SnapshotFlags, watched?: WatchedScans): Promise<void> {
  if (flags.out !== undefined) checkOutputFile(path.resolve(io.cwd, flags.out), '-o', 'snapshot.json');
  if (await servedByDaemon(io, flags)) return;
  // Lazy: `cairn <anything else>` does not pay for loading the scanner.
  const [{ snapshotForOutput }, { writeRepoSnapshot }] = await Promise.all([import('../../inventory/snapshot.js'), import('../../inventory/memo/render.js')]);
  const root = path.resolve(io.cwd, flags.root);
  // Inside the root the scan looks files up by their short relative paths, which the kernel
  // resolves faster than the root's whole path each time. Process-wide and not undone: every
  // path this command uses after this line must be resolved against io.cwd, never the process's.
  if (io.ownsProcess === true) moveInto(root);
  const progress = progressAllowed(io, false) ? new ProgressLine(io.stderr) : undefined;
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.once('SIGINT', onSigint);
  let result: Awaited<ReturnType<typeof snapshotForOutput>>;
  try {
    result = await snapshotForOutput(root, {
      include: flags.include,
      exclude: flags.exclude,
      ...(flags.maxFiles !== undefined ? { maxFiles: flags.maxFiles } : {}),
      ...(flags.maxBytes !== undefined ? { maxBytes: flags.maxBytes } : {}),
      ...(flags.jobs !== undefined ? { jobs: flags.jobs } : {}),
      ...(flags.cacheDir !== undefined ? { cacheDir: path.resolve(io.cwd, flags.cacheDir) } : {}),
      respectGitignore: flags.gitignore,
      withContentDigest: flags.digest,
      cache: flags.cache,
      signal: controller.signal,
      ...(progress !== undefined ? { onProgress: progress.update } : {}),
    }, watched?.snapshot());
  } finally {
    process.removeListener('SIGINT', onSigint);
    progress?.clear();
  }
  const { snapshot, skipped, warnings, scanned } = result;
  if (snapshot.body.truncated) await sayTruncated(io, root, snapshot, flags, watched);
  for (const w of warnings) io.stderr.write(`cairn: notice: ${w.message}${w.path !== undefined ? ` (${w.path})` : ''}\n`);
  if (skipped.length > 0) {
    if (flags.verbose) for (const s of skipped) io.stderr.write(`cairn: skipped ${JSON.stringify(s.path)}: ${s.reason}${s.detail !== undefined ? ` (${s.detail})` : ''}\n`);
    const byReason = new Map<string, number>();
    for (const s of skipped) byReason.set(s.reason, (byReason.get(s.reason) ?? 0) + 1);
    const parts = [...byReason].map(([r, n]) => `${n} ${r}`).join(', ');
    io.stderr.write(`cairn: ${skipped.length} path${skipped.length === 1 ? '' : 's'} skipped (${parts})${flags.verbose ? '' : '; --verbose lists them'}\n`);
  }
  if (flags.out === undefined) {
    await writeRepoSnapshot(snapshot, { out: io.stdout }, scanned);
    return;
  }
  const out = path.resolve(io.cwd, flags.out);
  try {
    if (writesInPlace(out)) await writeInto(out, (stream) => writeRepoSnapshot(snapshot, { out: stream }, scanned));
    else await writeRepoSnapshot(snapshot, { file: out }, scanned);
  } catch (e) {
    throw outputWriteError(out, e);
  }
  // The seed's "one-line summary" (its code printed it indented; its document wins).
  const summary = { snapshotDigest: snapshot.snapshotDigest, files: snapshot.body.counts.files, bytes: snapshot.body.counts.bytes, truncated: snapshot.body.truncated, out };
  io.stdout.write(`${JSON.stringify(summary)}\n`);
}

/**
 * Runs the snapshot through the running `cairn daemon` of the root, when this process is the
 * whole CLI and the daemon may serve it (src/cli/daemon/client.ts): its tree watcher spares a
 * warm snapshot most of the stat pass, its loaded engine the module loading. True when it did (a
 * non-zero exit code thrown as ExitCode); false when the command must run here.
 */
async function servedByDaemon(io: CliIO, flags: SnapshotFlags): Promise<boolean> {
  if (io.ownsProcess !== true || io.daemonTried === true || io.env.CAIRN_DAEMON === '0') return false;
  const { runThroughDaemon, snapshotFlags } = await import('../daemon/client.js');
  const sent = snapshotFlags(io, flags);
  if (sent.out !== undefined && writesInPlace(sent.out)) return false;
  const code = await runThroughDaemon(io, 'snapshot', sent.root, { flags: { ...sent } });
  if (code === null) return false;
  if (code !== 0) throw new ExitCode(code);
  return true;
}

/** Writes into a device or FIFO (output-target.ts) through a stream, closed (and flushed) before returning. */
async function writeInto(file: string, write: (stream: NodeJS.WritableStream) => Promise<void>): Promise<void> {
  const stream = fs.createWriteStream(file, { flags: 'w' });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  await opened;
  try {
    await write(stream);
  } finally {
    await new Promise<void>((resolve, reject) => {
      stream.once('error', reject);
      stream.end(() => resolve());
    });
  }
}

/** The seed's document and exit code stay; stderr says what was cut, how much, and how to lift it. */
async function sayTruncated(io: CliIO, root: string, snapshot: RepoSnapshot, flags: SnapshotFlags, watched: WatchedScans | undefined): Promise<void> {
  const [{ measureTruncation }, { SNAPSHOT_MAX_FILES_CAP }] = await Promise.all([import('../../inventory/truncation.js'), import('../../inventory/snapshot.js')]);
  const r = await measureTruncation(root, snapshot, {
    include: flags.include,
    exclude: flags.exclude,
    respectGitignore: flags.gitignore,
    ...(flags.maxFiles !== undefined ? { maxFiles: flags.maxFiles } : {}),
    ...(flags.maxBytes !== undefined ? { maxBytes: flags.maxBytes } : {}),
    // The count's own stat cache: a warm truncated snapshot then lstats the tree instead of walking it.
    cache: flags.cache,
    ...(flags.cacheDir !== undefined ? { cacheDir: path.resolve(io.cwd, flags.cacheDir) } : {}),
  }, watched?.count());
  const files = `${r.filesLeftOut} file${r.filesLeftOut === 1 ? '' : 's'}`;
  const lift = r.cutBy === '--max-files' ? `raise --max-files (at most ${SNAPSHOT_MAX_FILES_CAP}) or` : 'raise --max-bytes or';
  io.stderr.write(
    `cairn: snapshot truncated at ${r.cutBy} ${r.limit}: ${files} (${r.bytesLeftOut} bytes) left out; ${lift} narrow it with --include/--exclude. ` +
      'snapshot-diff compares a truncated snapshot only up to its last path\n',
  );
}

function moveInto(dir: string): void {
  try {
    process.chdir(dir);
  } catch {
    // not a directory we can enter: the scan reports the root's problem itself
  }
}

/** One self-overwriting status line on a TTY stderr, shown only for runs longer than ~0.5 s. */
class ProgressLine {
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;

  constructor(private readonly stream: NodeJS.WritableStream) {}

  readonly update = (p: { phase: string; filesSeen: number; filesDone: number; filesHashed: number; bytesHashed: number; filesCached: number }): void => {
    const now = Date.now();
    if (p.phase === 'done' || now - this.started < 500 || now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.drawn = true;
    const mb = (p.bytesHashed / (1024 * 1024)).toFixed(1);
    this.stream.write(`\r\x1b[Kcairn: ${p.filesDone}/${p.filesSeen} files, ${p.filesHashed} hashed (${mb} MiB), ${p.filesCached} from cache`);
  };

  clear(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
  }
}
