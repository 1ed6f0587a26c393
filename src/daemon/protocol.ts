/**
 * What `cairn daemon` and its clients say to each other, and what must be equal before the daemon
 * may answer for a client: the same cairn build on the same Node, the same user, group and umask,
 * the same project root (real path, device and inode), and the same environment where cairn or
 * git read it. Anything else and the client runs the command itself: a daemon's answer is only
 * ever the answer the client would have computed.
 *
 * Messages are one JSON document a line, over a Unix socket at `<root>/.cairn/daemon.sock`,
 * reached through the opened `.cairn` directory (src/core/contained-dir.ts), never through a
 * link planted on the way. This module loads nothing but node:fs: the client runs it in the CLI's
 * fast lanes before it knows whether a daemon can serve.
 */
import * as fs from 'node:fs';

export const SOCKET_NAME = 'daemon.sock';

/**
 * Whether a daemon's socket may be at `root`: something at `.cairn/daemon.sock`, looked up through
 * links, is a socket. False proves the client (which follows no link) would find none: the
 * executable then loads no client at all.
 */
export function socketMayBeAt(root: string): boolean {
  try {
    return fs.lstatSync(`${root}/.cairn/${SOCKET_NAME}`, { throwIfNoEntry: false })?.isSocket() === true;
  } catch {
    return false; // a non-directory on the way: no socket there either
  }
}

/** The commands a daemon runs for a client. */
export type DaemonCommand = 'session pre' | 'session post' | 'hook' | 'snapshot';

/** Everything a client's run depends on besides its arguments (see the top of this file). */
export interface Identity {
  build: string;
  uid: number;
  gid: number;
  umask: number;
  /** The variables named by relevantEnv, sorted by name. */
  env: [string, string][];
}

export interface RunRequest {
  op: 'run';
  identity: Identity;
  /** The root as the client resolved it (what an in-process run would print), with its real path and identity. */
  root: string;
  rootReal: string;
  dev: number;
  ino: number;
  cwd: string;
  /** The client's whole environment: the command sees it as its io.env. */
  env: Record<string, string>;
  tty: { stdout: boolean; stderr: boolean };
  command: DaemonCommand;
  flags?: Record<string, unknown>;
  agent?: string;
  stdin?: string;
}

export type Request = RunRequest | { op: 'status' } | { op: 'stop' };

export interface RunReply {
  served: true;
  exitCode: number;
  /** Base64 of the bytes the command wrote. */
  stdout: string;
  stderr: string;
}

export interface StatusReply {
  pid: number;
  root: string;
  build: string;
  startedAt: string;
  served: number;
  declined: number;
  /** Whether the captures it served leaned on a tree watcher (null before the first). */
  watching: boolean | null;
  /**
   * How its captures had git's status (null before the first): `runs` whole, `tracked` on the
   * tracked files with the untracked list held, `partial` limited to the changed paths, `reused`
   * unchanged; `verifiedAgain` captures taken again after their record's check.
   */
  git: { runs: number; tracked: number; partial: number; reused: number; verifiedAgain: number } | null;
}

/** Variables cairn, git or a store client read (prefixes and names); CAIRN_DAEMON* only steers delegation. */
const ENV_PREFIXES = ['CAIRN_', 'GIT_', 'XDG_', 'LC_', 'AWS_', 'PG', 'NODE_'];
const ENV_NAMES = new Set(['HOME', 'PATH', 'TZ', 'LANG', 'LANGUAGE', 'CI', 'TMPDIR', 'EMAIL', 'USER', 'LOGNAME', 'SHELL']);

/** The variables of `env` a run's result may depend on, sorted, empty values kept (git treats some as set). */
export function relevantEnv(env: NodeJS.ProcessEnv): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(env)) {
    // Set by every cairn process itself (src/cli/process.ts): not the caller's environment.
    if (v === undefined || k.startsWith('CAIRN_DAEMON') || k === 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED') continue;
    if (ENV_NAMES.has(k) || ENV_PREFIXES.some((p) => k.startsWith(p))) out.push([k, v]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * The build a process runs: Node's version and the executable script's real path, inode, size
 * and modification time (a rebuild replaces dist/bin/, so every build differs).
 */
export function buildId(script: string | undefined = process.argv[1]): string {
  if (script === undefined) return `node ${process.version} (no script)`;
  try {
    const real = fs.realpathSync(script);
    const st = fs.statSync(real, { bigint: true });
    return `node ${process.version} ${real} ${st.ino} ${st.size} ${st.mtimeNs}`;
  } catch {
    return `node ${process.version} ${script} (unreadable)`;
  }
}

/** This process's identity for `env` (the daemon's own is taken once it starts). */
export function identityOf(env: NodeJS.ProcessEnv, build: string = buildId()): Identity {
  // Read without setting (setting it, even back, races with threads creating files).
  return { build, uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1, umask: process.umask(), env: relevantEnv(env) };
}

/** Why `a` (a client's) differs from `b` (the daemon's), or null when they are equal. */
export function identityMismatch(a: Identity, b: Identity): string | null {
  if (a.build !== b.build) return 'another cairn build or Node version';
  if (a.uid !== b.uid || a.gid !== b.gid) return 'another user or group';
  if (a.umask !== b.umask) return 'another umask';
  const ka = JSON.stringify(a.env);
  if (ka !== JSON.stringify(b.env)) {
    const bm = new Map(b.env);
    const am = new Map(a.env);
    const names = [...new Set([...am.keys(), ...bm.keys()])].filter((k) => am.get(k) !== bm.get(k)).sort();
    return `environment differs (${names.join(', ')})`;
  }
  return null;
}

/** Splits a stream of JSON lines; calls `onMessage` for each whole line. */
export function lineReader(onMessage: (value: unknown) => void, maxBytes = 64 << 20): (chunk: Buffer) => void {
  let pending: Buffer[] = [];
  let size = 0;
  return (chunk) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, nl));
      const line = Buffer.concat(pending).toString('utf8');
      pending = [];
      size = 0;
      start = nl + 1;
      onMessage(JSON.parse(line));
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      size += chunk.length - start;
      if (size > maxBytes) throw new Error('message too long');
    }
  };
}
