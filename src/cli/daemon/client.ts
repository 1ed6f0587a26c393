/**
 * The client side of `cairn daemon`: what `session pre|post` and `cairn hook` do first when they
 * are the whole process. Cheap when no daemon runs (an open of `.cairn` and one lstat); node:net
 * loads only when a socket is there. Whatever goes wrong — no socket, a socket that is a link or
 * another user's, a refused connection (a daemon killed -9 leaves its socket), a daemon that
 * declines (another build, environment or root), dies mid-call, answers something unreadable or
 * does not answer within the wait — the answer is null and the caller runs the command itself.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainedDir } from '../../core/contained-dir.js';
import { findProjectRoot } from '../../core/root.js';
import type { CliIO } from '../io.js';
import type { SnapshotFlags } from '../fast-lane.js';
import type { AgentSpec } from '../../hooks/agents.js';
import { identityOf, lineReader, SOCKET_NAME, type DaemonCommand, type Request, type RunReply, type RunRequest } from '../../daemon/protocol.js';

/** How long a client waits for its answer (the daemon may be busy with another client's capture), unless CAIRN_DAEMON_WAIT_MS says otherwise. */
export const DEFAULT_WAIT_MS = 5 * 60_000;

/** `.cairn` of `root` opened without following a link, when it holds a socket of this user; else null. */
function socketDir(root: string): ContainedDir | null {
  let dir: ContainedDir | null = null;
  try {
    dir = ContainedDir.open(root, ['.cairn']);
    const st = dir?.lstat(SOCKET_NAME);
    if (dir !== null && st?.isSocket() === true && st.uid === process.getuid?.()) return dir;
  } catch {
    // a link or a non-directory on the way: no daemon is reached through it
  }
  dir?.close();
  return null;
}

/** Sends `request` to the daemon of `root`; resolves its one-line answer, or null (see the top of this file). */
export function ask(root: string, request: Request, waitMs: number = DEFAULT_WAIT_MS): Promise<unknown> {
  const dir = socketDir(root);
  if (dir === null) return Promise.resolve(null);
  // Not import(): the daemon lane is CommonJS (src/cli/bin.ts), and import() would start Node's ES module loader.
  const net = process.getBuiltinModule('node:net');
  return new Promise((resolve) => {
    let done = false;
    const socket = net.createConnection(dir.at(SOCKET_NAME));
    const timer = setTimeout(() => finish(null), waitMs);
    function finish(value: unknown): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      dir!.close();
      resolve(value);
    }
    const read = lineReader(finish);
    socket.on('connect', () => {
      dir.close(); // the path through the descriptor was needed for connect only
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        read(chunk);
      } catch {
        finish(null);
      }
    });
    socket.on('error', () => finish(null));
    socket.on('close', () => finish(null));
  });
}

function isRunReply(v: unknown): v is RunReply {
  const r = v as RunReply | null;
  return typeof r === 'object' && r !== null && r.served === true && Number.isInteger(r.exitCode) && typeof r.stdout === 'string' && typeof r.stderr === 'string';
}

/** What a delegated command needs besides the root: its flags (paths already resolved), or the hook's agent and stdin. */
export type RunFields = Pick<RunRequest, 'flags' | 'agent' | 'stdin'>;

/**
 * Runs `command` through the daemon of `root` when one runs and may serve this process: writes
 * the daemon's stdout and stderr bytes as this process's own and resolves the exit code; null
 * when the caller must run the command itself (nothing was written then).
 */
export async function runThroughDaemon(io: CliIO, command: DaemonCommand, root: string, fields: RunFields, waitMs?: number): Promise<number | null> {
  if (io.ownsProcess !== true || io.daemonTried === true || io.env.CAIRN_DAEMON === '0') return null;
  let rootReal: string;
  let st: fs.Stats;
  try {
    rootReal = fs.realpathSync(root);
    st = fs.statSync(rootReal);
  } catch {
    return null;
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(io.env)) if (v !== undefined) env[k] = v;
  const request: RunRequest = {
    op: 'run',
    identity: identityOf(io.env),
    root,
    rootReal,
    dev: st.dev,
    ino: st.ino,
    cwd: io.cwd,
    env,
    tty: { stdout: io.stdout.isTTY === true, stderr: io.stderr.isTTY === true },
    command,
    ...fields,
  };
  const wait = Number(io.env.CAIRN_DAEMON_WAIT_MS);
  const reply = await ask(root, request, Number.isFinite(wait) && wait > 0 ? wait : (waitMs ?? DEFAULT_WAIT_MS));
  if (!isRunReply(reply)) return null;
  io.stderr.write(Buffer.from(reply.stderr, 'base64'));
  io.stdout.write(Buffer.from(reply.stdout, 'base64'));
  return reply.exitCode;
}

/**
 * `session pre|post` through the daemon (the daemon lane's and the full CLI's one way): the root
 * as the command would find it, the flags' paths resolved here. Null: run it here.
 */
export async function runSessionThroughDaemon(io: CliIO, phase: 'pre' | 'post', flags: Record<string, unknown>): Promise<number | null> {
  const root = sessionRoot(io, flags.root);
  return root === null ? null : runThroughDaemon(io, `session ${phase}`, root, { flags: sessionFlags(io, flags, root) });
}

/** The flags a daemon gets for `cairn snapshot`: its paths resolved as this process resolves them (the daemon runs the command in this working directory too). */
export function snapshotFlags(io: CliIO, flags: SnapshotFlags): SnapshotFlags {
  const sent: SnapshotFlags = { ...flags, root: path.resolve(io.cwd, flags.root) };
  if (flags.out !== undefined) sent.out = path.resolve(io.cwd, flags.out);
  if (flags.cacheDir !== undefined) sent.cacheDir = path.resolve(io.cwd, flags.cacheDir);
  return sent;
}

/** The root `session pre|post` works on, as the CLI's projectRoot finds it; null where that would fail (the command reports it). */
function sessionRoot(io: CliIO, flag: unknown): string | null {
  if (flag === undefined) return findProjectRoot(io.cwd).root;
  if (typeof flag !== 'string') return null;
  const resolved = path.resolve(io.cwd, flag);
  return fs.statSync(resolved, { throwIfNoEntry: false })?.isDirectory() === true ? resolved : null;
}

/** The flags a daemon gets: the root as resolved here, a relative --iteration-dir made absolute. */
function sessionFlags(io: CliIO, flags: Record<string, unknown>, root: string): Record<string, unknown> {
  const sent: Record<string, unknown> = { ...flags, root };
  if (typeof flags.iterationDir === 'string') sent.iterationDir = path.resolve(io.cwd, flags.iterationDir);
  return sent;
}

/** The root a hook's payload names, as handleHook finds it; null for a stdin that is not a payload (handleHook reports it). */
export function hookRoot(agent: AgentSpec, stdin: string, io: CliIO): string | null {
  try {
    const doc = JSON.parse(stdin) as unknown;
    const payload = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? agent.payload(doc as Record<string, unknown>) : null;
    if (payload === null) return null;
    return findProjectRoot(payload.cwd !== undefined && fs.existsSync(payload.cwd) ? payload.cwd : io.env.CLAUDE_PROJECT_DIR || io.cwd).root;
  } catch {
    return null;
  }
}
