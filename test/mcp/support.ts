/**
 * Helpers of the MCP tests: a real SDK client talking to the built `cairn mcp` child process over
 * stdio, temp project trees, and readers for the seed's result shapes.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { CLI } from '../support/cli.js';
import { git } from '../support/git.js';

/** A fresh temp directory, realpath'd (os.tmpdir may be a symlink). */
/** Every tool the server lists: the two snapshot tools (cairn's and the seed's name) and the rest. */
export const SNAPSHOT_TOOLS = ['cairn_repo_snapshot', 'axiom_repo_snapshot'];
export const ALL_TOOLS = [...SNAPSHOT_TOOLS, 'cairn_session_pre', 'cairn_session_post', 'cairn_session_restore', 'cairn_stage_write', 'cairn_stage_read', 'cairn_store_list', 'cairn_store_show', 'cairn_session_diff', 'cairn_session_list'];

export function makeTempDir(prefix = 'cairn-mcp-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

export function write(root: string, rel: string, content: string | Buffer = 'x'): string {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  return file;
}

/** Every path below `dir` (relative, sorted), to prove a directory stayed untouched. */
export function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      out.push(child);
      if (entry.isDirectory()) walk(child);
    }
  };
  walk('');
  return out.sort();
}

export { git };

export function makeRepo(prefix = 'cairn-mcp-repo-'): string {
  const dir = makeTempDir(prefix);
  git(dir, 'init', '-q', '-b', 'main');
  return dir;
}

/**
 * The environment of a spawned server: the engine's stat cache goes to `cacheHome`, so the
 * server writes nothing in the user's home and a test can watch every place it may write.
 */
export function serverEnv(cacheHome: string, extra: Record<string, string> = {}): Record<string, string> {
  return { XDG_CACHE_HOME: cacheHome, GIT_CONFIG_NOSYSTEM: '1', CI: '1', ...extra };
}

export interface Connected {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close: () => Promise<void>;
}

/** Spawns `node dist/bin/cairn.js mcp <args>` and connects a real SDK client to it. */
export async function connect(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    cwd: options.cwd ?? os.tmpdir(),
    env: options.env ?? {},
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'cairn-mcp-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/** Calls a tool; the SDK client's own result type. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error(`expected a text content block, got ${JSON.stringify(result.content)}`);
  return first.text;
}

/** The JSON text of a successful result (fails the test on isError). */
export function okText<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool failed: ${textOf(result)}`);
  return JSON.parse(textOf(result)) as T;
}

/** The structuredContent of a successful result. */
export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool failed: ${textOf(result)}`);
  expect(result.structuredContent).toBeDefined();
  return result.structuredContent as T;
}

export interface ToolError {
  code: string;
  message: string;
  path?: string;
  details?: Record<string, unknown>;
}

/** The seed's `{code, message, path?, details?}` of an isError result; only those keys are allowed. */
export function errorOf(result: CallToolResult): ToolError {
  expect(result.isError).toBe(true);
  const payload = JSON.parse(textOf(result)) as ToolError;
  expect(typeof payload.code).toBe('string');
  expect(typeof payload.message).toBe('string');
  expect(payload.message.length).toBeGreaterThan(0);
  for (const key of Object.keys(payload)) expect(['code', 'message', 'path', 'details']).toContain(key);
  return payload;
}

/** A raw child `cairn mcp` process, for the tests that speak JSON-RPC lines by hand. */
export interface RawServer {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the next JSON-RPC message whose id is `id`. */
  response: (id: number | string, timeoutMs?: number) => Promise<Record<string, unknown>>;
  send: (line: string) => void;
  request: (id: number, method: string, params?: Record<string, unknown>) => void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
  messages: Record<string, unknown>[];
}

export function spawnRaw(args: string[], env: Record<string, string>): RawServer {
  const child = spawn(process.execPath, [CLI, 'mcp', ...args], { env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const messages: Record<string, unknown>[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() === '') continue;
      try {
        messages.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // stdout must carry protocol messages only; a stray line is kept for the tests to see.
        messages.push({ notJson: line });
      }
    }
    for (const w of waiters.splice(0)) w();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // A write after the child closed its stdin is part of what some tests do on purpose.
  child.stdin.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const send = (line: string): void => {
    child.stdin.write(`${line}\n`);
  };
  const response = (id: number | string, timeoutMs = 20_000): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no response to id ${id}; stderr: ${stderr}; got ${JSON.stringify(messages)}`)), timeoutMs);
      const check = (): void => {
        const found = messages.find((m) => m.id === id);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        } else waiters.push(check);
      };
      check();
    });
  const request = (id: number, method: string, params: Record<string, unknown> = {}): void => send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  return { child, response, send, request, exited, stderr: () => stderr, messages };
}

/** The MCP handshake over a raw server: initialize, then the initialized notification. */
export async function initializeRaw(server: RawServer): Promise<void> {
  server.request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
  const init = await server.response(0);
  expect(init.result).toBeDefined();
  server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
