/**
 * `cairn daemon run`: one process per project that answers `session pre|post` and agent hook
 * turns for short-lived `cairn` processes, with what it keeps between calls (the session library
 * loaded and compiled, the tree watcher and git's last answer: watched-manager.ts). It runs a
 * request only when the client's identity equals its own (protocol.ts) and one at a time, in the
 * order they came; a client that is declined, or that loses the daemon mid-call, runs the
 * command itself. It ends on `daemon stop`, SIGTERM/SIGINT, after IDLE_MS without a request, and
 * when `.cairn` or its socket is removed or replaced (another `daemon start` took over).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Server, Socket } from 'node:net';
import { CairnError } from '../../core/errors.js';
import { ContainedDir, ContainmentError } from '../../core/contained-dir.js';
import { reportError, type CliIO } from '../io.js';
import type { SnapshotFlags } from '../fast-lane.js';
import type { WatchedScans } from '../commands/snapshot-run.js';
import type { ResidentGit } from '../../daemon/watched-manager.js';
import { ask } from './client.js';
import { identityMismatch, identityOf, lineReader, SOCKET_NAME, type Identity, type Request, type RunReply, type RunRequest, type StatusReply } from '../../daemon/protocol.js';
import { serveWithResidentManagers } from '../../daemon/serving.js';

/** A daemon nobody asked anything for this long ends (CAIRN_DAEMON_IDLE_MS overrides). */
export const IDLE_MS = 30 * 60_000;
/** How often it checks that `.cairn` and its socket are still the ones it started with. */
const CHECK_EVERY_MS = 2000;

interface Started {
  /** Resolves once the daemon has ended (the exit code for `daemon run`). */
  ended: Promise<number>;
  pid: number;
}

/** A stream that keeps what is written, with the client's isTTY. */
function capture(isTTY: boolean): NodeJS.WritableStream & { isTTY: boolean; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  const stream = {
    isTTY,
    write(chunk: string | Uint8Array, enc?: unknown, cb?: unknown): boolean {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof enc === 'string' ? (enc as BufferEncoding) : 'utf8') : Buffer.from(chunk));
      const done = typeof enc === 'function' ? enc : cb;
      if (typeof done === 'function') (done as () => void)();
      return true;
    },
    bytes: () => Buffer.concat(chunks),
  };
  return stream as unknown as NodeJS.WritableStream & { isTTY: boolean; bytes: () => Buffer };
}

/** Runs one client's command as the client would have (its cwd, env and terminals) and returns its exit code and output. */
async function execute(req: RunRequest): Promise<RunReply> {
  const stdout = capture(req.tty.stdout);
  const stderr = capture(req.tty.stderr);
  const io: CliIO = { stdout, stderr, env: req.env, cwd: req.cwd };
  let exitCode = 0;
  // `cairn snapshot` reports its errors as JSON always (the seed's contract).
  const json = req.flags?.json === true || req.command === 'snapshot';
  const command = req.command === 'hook' ? `hook ${req.agent ?? ''}` : req.command;
  try {
    if (req.command === 'hook') {
      const { answerHook } = await import('../commands/hook-run.js');
      const { agentById } = await import('../../hooks/agents.js');
      const agent = agentById(req.agent ?? '');
      if (agent === undefined) throw new CairnError('ERR_USAGE', `unknown agent ${JSON.stringify(req.agent)}`, { exitCode: 2 });
      await answerHook(io, agent, req.stdin ?? '');
    } else if (req.command === 'snapshot') {
      const { runSnapshot } = await import('../commands/snapshot-run.js');
      await runSnapshot(io, req.flags as unknown as SnapshotFlags, await watchedScans(req.root));
    } else {
      const session = await import('../commands/session.js');
      if (req.command === 'session pre') await session.runSessionPre(io, req.flags ?? {});
      else await session.runSessionPost(io, req.flags ?? {});
    }
  } catch (e) {
    exitCode = reportError(io, e, { json, command });
  }
  return { served: true, exitCode, stdout: stdout.bytes().toString('base64'), stderr: stderr.bytes().toString('base64') };
}

/** The residents vouching for truncated snapshots' counts, by root: a trust of their own (see watchedScans). */
const countResidents = new Map<string, ResidentGit>();

/**
 * What the tree watcher vouches for in a snapshot's scans. The snapshot's stat pass leans on the
 * captures' resident (its trust is one slot, the cache the last scan left: a snapshot after a
 * capture, or the other way round, finds the other's cache and looks at every row once). The
 * count of what a truncated snapshot left out keeps a cache of its own, so it has a resident of
 * its own (sharing a slot, the two scans of one snapshot would never be trusted), with its own
 * view of the same watcher (one inotify watch set and thread per tree: watchTree).
 */
async function watchedScans(root: string): Promise<WatchedScans | undefined> {
  if (process.env.CAIRN_WATCH === '0') return undefined;
  const watched = await import('../../daemon/watched-manager.js');
  const [rootAbs, cairnDir] = [path.resolve(root), path.resolve(root, '.cairn')];
  const captures = watched.residentGitFor(rootAbs, cairnDir);
  let counts = countResidents.get(rootAbs);
  if (counts === undefined) countResidents.set(rootAbs, (counts = new watched.ResidentGit(rootAbs, cairnDir)));
  const known = counts;
  return { snapshot: () => captures.scanOptions({}).knownUnchanged, count: () => known.scanOptions({}).knownUnchanged };
}

/**
 * What is at the socket's name in `.cairn` (opened without following a link): null (nothing) or a
 * socket's stat; a link or anything else there is refused (ERR_CONTAINMENT) and left alone.
 */
export function socketPlace(dir: ContainedDir): fs.Stats | null {
  const existing = dir.lstat(SOCKET_NAME);
  if (existing === null || existing.isSocket()) return existing;
  if (existing.isSymbolicLink()) throw new ContainmentError(dir.shown(SOCKET_NAME), 'symlink');
  throw new CairnError('ERR_CONTAINMENT', `${dir.shown(SOCKET_NAME)} is not a socket; cairn does not replace it (move it away)`, { path: dir.shown(SOCKET_NAME), exitCode: 1 });
}

/** Checks, before a daemon is spawned for `root`, what startDaemon would refuse: a link at `.cairn` or at the socket's name. */
export function checkSocketPlace(root: string): void {
  const dir = ContainedDir.require(root, ['.cairn'], { create: true });
  try {
    socketPlace(dir);
  } finally {
    dir.close();
  }
}

/**
 * Starts the daemon of `root` in this process: `.cairn` opened without following a link, the
 * socket bound through it (mode 0600). A socket that answers means a daemon already runs
 * (ERR_DAEMON_RUNNING); one that refuses is a dead daemon's and is replaced; anything else at
 * the socket's name (a link, a file) is refused (ERR_CONTAINMENT) and left alone.
 */
export async function startDaemon(root: string, log: (line: string) => void = () => {}): Promise<Started> {
  const rootReal = fs.realpathSync(root);
  const rootStat = fs.statSync(rootReal);
  const dir = ContainedDir.require(root, ['.cairn'], { create: true });
  const cairnPath = path.join(root, '.cairn');
  const cairnStat = fs.lstatSync(cairnPath);
  const self: Identity = identityOf(process.env);
  const net = await import('node:net');
  const startedAt = new Date().toISOString();
  const counts = { served: 0, declined: 0 };
  let watching: boolean | null = null;
  let gitAnswers: StatusReply['git'] = null;

  const existing = socketPlace(dir);
  if (existing !== null) {
    const status = (await ask(root, { op: 'status' }, 5000)) as StatusReply | null;
    if (status !== null && typeof status.pid === 'number') {
      throw new CairnError('ERR_DAEMON_RUNNING', `a cairn daemon already runs for ${root} (pid ${status.pid})`, { exitCode: 3, details: { pid: status.pid } });
    }
    dir.unlink(SOCKET_NAME); // a dead daemon's (killed -9): nothing answers on it
    log(`replaced the socket of a daemon that no longer runs`);
  }

  const server: Server = net.createServer();
  const mask = process.umask(0o177); // the socket is created 0600: only this user may connect
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(dir.at(SOCKET_NAME), () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(mask);
  }
  const socketIno = dir.lstat(SOCKET_NAME)?.ino;

  if (process.env.CAIRN_WATCH !== '0') {
    const watched = await import('../../daemon/watched-manager.js');
    serveWithResidentManagers(watched.residentManager);
  }

  let queue: Promise<void> = Promise.resolve();
  let idleTimer: NodeJS.Timeout | undefined;
  const idleMs = Number(process.env.CAIRN_DAEMON_IDLE_MS) > 0 ? Number(process.env.CAIRN_DAEMON_IDLE_MS) : IDLE_MS;
  let endWith: (code: number) => void = () => {};
  const ended = new Promise<number>((resolve) => (endWith = resolve));
  let ending = false;

  const resetIdle = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => stop(`idle for ${idleMs} ms`), idleMs);
  };

  function stop(why: string): void {
    if (ending) return;
    ending = true;
    log(`stopping: ${why}`);
    clearTimeout(idleTimer);
    clearInterval(checker);
    server.close();
    try {
      if (socketIno !== undefined && dir.lstat(SOCKET_NAME)?.ino === socketIno) dir.unlink(SOCKET_NAME);
    } catch {
      // .cairn went away or was replaced: nothing of ours to remove
    }
    dir.close();
    for (const r of countResidents.values()) r.close();
    countResidents.clear();
    void import('../../daemon/watched-manager.js').then((w) => w.closeResidents()).finally(() => endWith(0));
  }

  const checker = setInterval(() => {
    try {
      const now = fs.lstatSync(cairnPath);
      if (now.dev !== cairnStat.dev || now.ino !== cairnStat.ino) return stop(`${cairnPath} was replaced`);
      if (dir.lstat(SOCKET_NAME)?.ino !== socketIno) return stop('its socket was removed or replaced');
    } catch {
      stop(`${cairnPath} is gone`);
    }
  }, CHECK_EVERY_MS);
  checker.unref();

  async function answer(req: Request): Promise<unknown> {
    if (req.op === 'status') return { pid: process.pid, root, build: self.build, startedAt, ...counts, watching, git: gitAnswers } satisfies StatusReply;
    if (req.op === 'stop') {
      setImmediate(() => stop('asked to stop'));
      return { stopping: true, pid: process.pid };
    }
    let why = identityMismatch(req.identity, self);
    if (why === null) {
      try {
        const st = fs.statSync(req.root);
        if (fs.realpathSync(req.root) !== rootReal || st.dev !== rootStat.dev || st.ino !== rootStat.ino) why = 'another project root';
      } catch {
        why = 'the root is not readable';
      }
    }
    if (why !== null) {
      counts.declined++;
      log(`declined a ${req.command}: ${why}`);
      return { served: false, reason: why };
    }
    counts.served++;
    const started = performance.now();
    const reply = await execute(req);
    log(`served a ${req.command} in ${Math.round(performance.now() - started)} ms (exit ${reply.exitCode})`);
    if (req.command === 'snapshot') {
      // a snapshot uses no capture manager: what `watching` says is the captures'
    } else if (process.env.CAIRN_WATCH !== '0') {
      // The resident the capture used (keyed as residentManager keys it); its watcher started with the capture.
      const resident = (await import('../../daemon/watched-manager.js')).residentGitFor(path.resolve(req.root), path.resolve(req.root, '.cairn'));
      watching = resident.watcher() !== null;
      const { runs, tracked, partial, reused, verifiedAgain } = resident.counts;
      gitAnswers = { runs, tracked, partial, reused, verifiedAgain };
    } else watching = false;
    return reply;
  }

  server.on('connection', (socket: Socket) => {
    resetIdle();
    const read = lineReader((m) => {
      const req = m as Request;
      // One request at a time, in order: a second client waits in this queue.
      queue = queue.then(async () => {
        const reply = await answer(req).catch((e: unknown) => ({ served: false, reason: e instanceof Error ? e.message : String(e) }));
        if (!socket.destroyed) socket.end(`${JSON.stringify(reply)}\n`);
        // The checks a capture's git run may leave until it was answered, while the client goes on
        // and before the next request is taken (watched-manager.ts, completeDeferred).
        if (process.env.CAIRN_WATCH !== '0') await import('../../daemon/watched-manager.js').then((w) => w.completeDeferredChecks()).catch(() => undefined); // a failed check kept nothing
        resetIdle();
      });
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        read(chunk);
      } catch {
        socket.destroy();
      }
    });
    socket.on('error', () => socket.destroy());
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stop(`got ${signal}`));
  resetIdle();
  log(`serving ${root} (pid ${process.pid})`);
  return { ended, pid: process.pid };
}
