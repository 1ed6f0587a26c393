/**
 * Real servers for the store's S3 and PostgreSQL tests: started by the vitest globalSetup
 * (test/support/global-setup.ts) in the background, or by a test file itself when that setup is
 * not configured. Tests call `s3Server()` / `pgServer()` in `beforeAll`: they get connection
 * details, or an error saying why the server could not start (the tests then FAIL), unless
 * CAIRN_SKIP_SERVERS=1 / CAIRN_SKIP_S3=1 / CAIRN_SKIP_PG=1 says to skip them.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the globalSetup writes `s3.json` / `pg.json` (an `Outcome`) once each server is up or failed. */
    cairnServersStatusDir: string;
  }
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPTS = path.join(REPO_ROOT, 'scripts', 'servers');

export interface S3ServerInfo {
  /** `s3://bucket/?endpoint=…&region=…&forcePathStyle=1` */
  url: string;
  bucket: string;
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The Ceph cluster directory when we started it (fault tests start a second gateway on it). */
  cephDir?: string;
}

export interface PgServerInfo {
  /** `postgres://user@host:port/db` */
  url: string;
  /** The data directory when we started the server. */
  pgDir?: string;
}

export type Outcome<T> = { ok: T } | { error: string } | { skip: string };

export interface ServersStatus {
  s3: Outcome<S3ServerInfo>;
  pg: Outcome<PgServerInfo>;
}

/** Set by the globalSetup: the directory where the background start writes each server's `Outcome`. */
export const STATUS_DIR_ENV = 'CAIRN_SERVERS_STATUS_DIR';

export function skipReason(kind: 's3' | 'pg'): string | undefined {
  const env = process.env;
  if (env.CAIRN_SKIP_SERVERS === '1') return 'CAIRN_SKIP_SERVERS=1';
  if (kind === 's3' && env.CAIRN_SKIP_S3 === '1') return 'CAIRN_SKIP_S3=1';
  if (kind === 'pg' && env.CAIRN_SKIP_PG === '1') return 'CAIRN_SKIP_PG=1';
  return undefined;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A temp dir other users can traverse (PostgreSQL runs as `postgres` when we are root). */
export function serverTempDir(name: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `cairn-${name}-`));
  chmodSync(dir, 0o755);
  return dir;
}

interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a script in its own process group, killing the whole group when it overruns `timeoutMs`. */
export function runScript(script: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal }): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const child = spawn('bash', [path.join(SCRIPTS, script), ...args], {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const kill = (why: string): void => {
      stderr += `\n${why}`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill(`${script} did not finish within ${options.timeoutMs / 1000} s`), options.timeoutMs);
    const onAbort = (): void => kill(`${script} aborted`);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: `${stderr}\n${e.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ code, stdout, stderr });
    });
  });
}

function lastLines(text: string, n = 15): string {
  return text.trim().split('\n').slice(-n).join('\n');
}

/** Starts Ceph (mon + memstore OSD + RGW) in a new temp dir; bounded by ~90 s. */
export async function startCeph(signal?: AbortSignal): Promise<Outcome<S3ServerInfo>> {
  const dir = serverTempDir('ceph');
  const [port, monPort] = [await freePort(), await freePort()];
  const r = await runScript('ceph-up.sh', [dir, String(port)], { env: { MONPORT: String(monPort) }, timeoutMs: 90_000, ...(signal ? { signal } : {}) });
  const url = /^CAIRN_S3_URL='([^']+)'$/m.exec(r.stdout)?.[1];
  const accessKeyId = /^AWS_ACCESS_KEY_ID=(\S+)$/m.exec(r.stdout)?.[1];
  const secretAccessKey = /^AWS_SECRET_ACCESS_KEY=(\S+)$/m.exec(r.stdout)?.[1];
  if (r.code !== 0 || !url || !accessKeyId || !secretAccessKey) {
    await stopCeph(dir);
    return { error: `Ceph RGW could not be started (scripts/servers/ceph-up.sh exited ${String(r.code)}):\n${lastLines(r.stderr || r.stdout)}` };
  }
  return { ok: { ...s3Info(url, accessKeyId, secretAccessKey), cephDir: dir } };
}

function s3Info(url: string, accessKeyId: string, secretAccessKey: string): S3ServerInfo {
  const u = new URL(url);
  return { url, bucket: u.hostname, endpoint: u.searchParams.get('endpoint') ?? '', accessKeyId, secretAccessKey };
}

export async function stopCeph(dir: string): Promise<void> {
  await runScript('ceph-down.sh', [dir], { timeoutMs: 30_000 });
  rmSync(dir, { recursive: true, force: true });
}

/** Starts a throw-away PostgreSQL in a new temp dir; bounded by ~60 s. */
export async function startPostgres(signal?: AbortSignal): Promise<Outcome<PgServerInfo>> {
  const dir = serverTempDir('pg');
  const port = await freePort();
  const r = await runScript('pg-up.sh', [dir, String(port)], { timeoutMs: 60_000, ...(signal ? { signal } : {}) });
  const url = /^CAIRN_PG_URL='([^']+)'$/m.exec(r.stdout)?.[1];
  if (r.code !== 0 || !url) {
    await stopPostgres(dir);
    return { error: `PostgreSQL could not be started (scripts/servers/pg-up.sh exited ${String(r.code)}):\n${lastLines(r.stderr || r.stdout)}` };
  }
  return { ok: { url, pgDir: dir } };
}

export async function stopPostgres(dir: string, mode: 'fast' | 'immediate' = 'fast', remove = true): Promise<void> {
  await runScript('pg-down.sh', [dir, mode], { timeoutMs: 60_000 });
  if (remove) rmSync(dir, { recursive: true, force: true });
}

/** Servers given from outside (CAIRN_S3_URL / CAIRN_PG_URL) win over starting our own. */
export function externalS3(): S3ServerInfo | undefined {
  const url = process.env.CAIRN_S3_URL;
  if (!url) return undefined;
  return s3Info(url, process.env.AWS_ACCESS_KEY_ID ?? '', process.env.AWS_SECRET_ACCESS_KEY ?? '');
}

export function externalPg(): PgServerInfo | undefined {
  const url = process.env.CAIRN_PG_URL;
  return url ? { url } : undefined;
}

function providedStatusDir(): string | undefined {
  try {
    return inject('cairnServersStatusDir') || process.env[STATUS_DIR_ENV];
  } catch {
    return process.env[STATUS_DIR_ENV];
  }
}

/** Waits for the globalSetup's background start to write this server's outcome (bounded). */
async function statusFromGlobalSetup<T>(file: string, timeoutMs = 150_000): Promise<Outcome<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as Outcome<T>;
      } catch {
        // the writer renames a whole file into place, so this is only a race on first sight
      }
    }
    if (Date.now() > deadline) throw new Error(`the servers of the store tests did not report within ${timeoutMs / 1000} s (status file ${file})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Outcome for this test file, and a cleanup when the file had to start the server itself. */
export interface ServerHandle<T> {
  outcome: Outcome<T>;
  stop: () => Promise<void>;
}

async function acquire<T>(
  kind: 's3' | 'pg',
  external: () => T | undefined,
  start: () => Promise<Outcome<T>>,
  stop: (info: T) => Promise<void>,
): Promise<ServerHandle<T>> {
  const skip = skipReason(kind);
  if (skip !== undefined) return { outcome: { skip }, stop: async () => {} };
  const given = external();
  if (given !== undefined) return { outcome: { ok: given }, stop: async () => {} };
  const dir = providedStatusDir();
  if (dir) {
    return { outcome: await statusFromGlobalSetup<T>(path.join(dir, `${kind}.json`)), stop: async () => {} };
  }
  // No globalSetup: this file starts (and stops) its own server.
  const outcome = await start();
  return { outcome, stop: async () => ('ok' in outcome ? stop(outcome.ok) : undefined) };
}

export function s3Server(): Promise<ServerHandle<S3ServerInfo>> {
  return acquire('s3', externalS3, () => startCeph(), async (info) => (info.cephDir ? stopCeph(info.cephDir) : undefined));
}

export function pgServer(): Promise<ServerHandle<PgServerInfo>> {
  return acquire('pg', externalPg, () => startPostgres(), async (info) => (info.pgDir ? stopPostgres(info.pgDir) : undefined));
}

/** The connection details, or throws the reason the server is missing (so the tests fail loudly). */
export function required<T>(outcome: Outcome<T>): T {
  if ('ok' in outcome) return outcome.ok;
  if ('error' in outcome) throw new Error(outcome.error);
  throw new Error(`skipped (${outcome.skip})`);
}

/**
 * A second RADOS Gateway on an existing cluster, on its own port, so a fault test can kill and
 * restart "the server" without disturbing the gateway other test files use.
 */
export class ExtraGateway {
  readonly endpoint: string;
  constructor(
    private readonly cephDir: string,
    readonly port: number,
    private readonly name: string,
  ) {
    this.endpoint = `http://127.0.0.1:${port}`;
  }

  private get pidFile(): string {
    return path.join(this.cephDir, 'run', `${this.name}.pid`);
  }

  async start(): Promise<void> {
    const c = this.cephDir;
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        'radosgw',
        ['-c', path.join(c, 'ceph.conf'), '-n', 'client.rgw', '--setuser', 'root', '--setgroup', 'root',
          '--rgw-frontends', `beast endpoint=127.0.0.1:${this.port} tcp_nodelay=1`, '--pid-file', this.pidFile,
          '--admin-socket', path.join(c, 'run', `${this.name}.asok`), '--log-file', path.join(c, 'log', `${this.name}.log`)],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', (e) => resolve({ code: -1, stderr: e.message }));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    if (r.code !== 0) throw new Error(`radosgw ${this.name} did not start: ${r.stderr}`);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`${this.endpoint}/`, { signal: AbortSignal.timeout(1000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`radosgw ${this.name} not answering on ${this.endpoint} after 30 s; see ${path.join(c, 'log', `${this.name}.log`)}`);
  }

  /** SIGKILL, as a crash would; waits until the process is gone. */
  async kill(): Promise<void> {
    if (!existsSync(this.pidFile)) return;
    const pid = Number(readFileSync(this.pidFile, 'utf8').trim());
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
