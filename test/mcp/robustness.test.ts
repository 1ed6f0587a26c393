/**
 * The server as a process: raw JSON-RPC lines on its stdin (malformed ones included), unknown
 * tools and methods, and clients that go away in the middle of a call.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ALL_TOOLS, alive, git, initializeRaw, makeTempDir, removeDir, serverEnv, spawnRaw, write, type RawServer } from './support.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

let tmp: string;
let project: string;

/** Every live process whose working directory is inside `dir` (Linux /proc). */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cwd = fs.readlinkSync(`/proc/${name}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** Fails the test if the server does not exit on its own; it is killed then, so nothing leaks. */
async function exitOf(server: RawServer, ms = WHOLE_PROCESS_BUDGET_MS): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      server.child.kill('SIGKILL');
      reject(new Error(`server did not exit after its client went away; stderr: ${server.stderr()}`));
    }, ms);
  });
  try {
    return await Promise.race([server.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function start(): RawServer {
  return spawnRaw(['--root', project], serverEnv(path.join(tmp, 'cache')));
}

beforeAll(() => {
  tmp = makeTempDir();
  project = path.join(tmp, 'project');
  // Enough files that a snapshot is still running when the client disconnects.
  for (let i = 0; i < 2000; i++) write(project, `tree/d${i % 40}/f${i}.txt`, `${'content '.repeat(50)}${i}\n`);
  write(project, 'README.md', '# robust\n');
  git(project, 'init', '-q', '-b', 'main');
  git(project, 'add', 'README.md');
  git(project, 'commit', '-q', '-m', 'initial');
});

afterAll(() => {
  removeDir(tmp);
});

describe('malformed input', () => {
  it('survives lines that are not JSON, not JSON-RPC, or huge, and keeps answering valid requests', async () => {
    const server = start();
    try {
      await initializeRaw(server);
      for (const line of [
        '{not json',
        'garbage \u0000\u0001 bytes',
        '[]',
        '42',
        '"just a string"',
        '{"jsonrpc":"2.0"}',
        '{"jsonrpc":"1.0","id":99,"method":"tools/list"}',
        '{"id":98,"method":"tools/list"}',
        `{"jsonrpc":"2.0","id":97,"method":"tools/list","params":${'['.repeat(10)}`,
        'x'.repeat(1024 * 1024),
      ]) {
        server.send(line);
      }
      server.request(1, 'tools/list');
      const list = await server.response(1);
      expect((list.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort()).toEqual([...ALL_TOOLS].sort());
      server.request(2, 'tools/call', { name: 'cairn_repo_snapshot', arguments: { include: ['README.md'] } });
      const snap = (await server.response(2)).result as { isError?: boolean; structuredContent: { body: { counts: { files: number } } } };
      expect(snap.isError).toBeUndefined();
      expect(snap.structuredContent.body.counts.files).toBe(1);
      expect(alive(server.child.pid ?? -1)).toBe(true);
      // Nothing but JSON-RPC went to stdout, and no garbage line got a response of its own.
      expect(server.messages.filter((m) => 'notJson' in m)).toEqual([]);
      expect(server.messages.map((m) => m.id)).toEqual([0, 1, 2]);
    } finally {
      server.child.stdin.end();
      await exitOf(server);
    }
  });

  it('answers an unknown method with JSON-RPC -32601 and a tools/call without a tool name with -32602', async () => {
    const server = start();
    try {
      await initializeRaw(server);
      server.request(1, 'no/such/method');
      expect((await server.response(1)).error).toMatchObject({ code: -32601 });
      server.request(2, 'tools/call', { arguments: {} });
      expect((await server.response(2)).error).toMatchObject({ code: -32602 });
      server.request(3, 'tools/call', { name: 'cairn_repo_snapshot', arguments: 'not an object' });
      expect((await server.response(3)).error).toMatchObject({ code: -32602 });
      server.request(4, 'ping');
      expect((await server.response(4)).result).toEqual({});
    } finally {
      server.child.stdin.end();
      await exitOf(server);
    }
  });

  it('answers an unknown tool with an isError result carrying ERR_UNKNOWN_TOOL and the tool list', async () => {
    const server = start();
    try {
      await initializeRaw(server);
      server.request(1, 'tools/call', { name: 'rm_rf', arguments: {} });
      const result = (await server.response(1)).result as { isError: boolean; content: Array<{ text: string }> };
      expect(result.isError).toBe(true);
      const payload = JSON.parse(result.content[0]?.text ?? '{}') as { code: string; message: string };
      expect(payload.code).toBe('ERR_UNKNOWN_TOOL');
      expect(payload.message).toContain('cairn_repo_snapshot');
      server.request(2, 'tools/list');
      expect(((await server.response(2)).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort()).toEqual([...ALL_TOOLS].sort());
    } finally {
      server.child.stdin.end();
      await exitOf(server);
    }
  });
});

describe('clients that go away', () => {
  it('exits 0 when an idle client closes its end', async () => {
    const server = start();
    await initializeRaw(server);
    server.child.stdin.end();
    expect(await exitOf(server)).toEqual({ code: 0, signal: null });
  });

  it('exits 0, leaving no process behind, when the client closes stdin in the middle of a snapshot', async () => {
    const server = start();
    await initializeRaw(server);
    server.request(1, 'tools/call', { name: 'cairn_repo_snapshot', arguments: { maxFiles: 50_000 } });
    server.child.stdin.end();
    expect(await exitOf(server)).toEqual({ code: 0, signal: null });
    expect(alive(server.child.pid ?? -1)).toBe(false);
    expect(processesIn(tmp)).toEqual([]);
  });

  it('exits 0 when the client vanishes (both pipes closed) in the middle of a session_pre, with no half-written files', async () => {
    const server = start();
    await initializeRaw(server);
    server.request(1, 'tools/call', { name: 'cairn_session_pre', arguments: { iterationDir: 'iter-gone' } });
    // The client dies: nobody reads our stdout any more, and our stdin is at its end.
    server.child.stdout.destroy();
    server.child.stdin.end();
    expect(await exitOf(server)).toEqual({ code: 0, signal: null });
    expect(processesIn(tmp)).toEqual([]);
    const dir = path.join(project, 'iter-gone');
    // Either the pre-snapshot was published whole, or it was never started: no temp files.
    const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
    for (const name of names) expect(name).toBe('pre-snapshot.json');
    if (names.length > 0) expect(() => JSON.parse(fs.readFileSync(path.join(dir, 'pre-snapshot.json'), 'utf8')) as unknown).not.toThrow();
  });

  it('answers a client that sends a request and disconnects at once, then exits', async () => {
    const server = start();
    server.request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    server.request(1, 'tools/list');
    server.child.stdin.end();
    expect(await exitOf(server)).toEqual({ code: 0, signal: null });
  });
});
