/**
 * The MCP stage tools keep notes inside the root through the stage library's own containment
 * (the server adds no pre-check of its own): run in-process over an in-memory transport, so
 * they test the sources rather than the built CLI.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCairnMcpServer } from '../../src/mcp/server.js';
import { call, errorOf, listTree, makeTempDir, okText, removeDir, write } from './support.js';

const SECRET = 'outside secret: must never reach the client';
const NOTE = ['---', 'task_id: DEV-0001', 'stage: plan', 'command: /dr-plan', 'captured_at: 2026-05-21T13:45:00Z', 'captured_by: agent', 'recommended_next: /dr-do', '---', SECRET, ''].join('\n');
const note = { task: 'DEV-0001', stage: 'plan', command: '/dr-plan', recommendedNext: '/dr-do', body: 'new body' };

let tmp: string;
let root: string;
let outside: string;
let outsideBefore: string[];
let server: McpServer;
let client: Client;

function project(name: string): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

beforeAll(async () => {
  tmp = makeTempDir();
  root = path.join(tmp, 'root');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(root);
  write(outside, 'snapshots/DEV-0001.snapshot.md', NOTE);
  outsideBefore = listTree(outside);
  server = createCairnMcpServer({ roots: [root], cwd: tmp, env: {} });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: 'cairn-stage-containment-test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
});

afterEach(() => {
  expect(listTree(outside)).toEqual(outsideBefore);
  expect(fs.readdirSync(tmp).sort()).toEqual(['outside', 'root']);
});

afterAll(async () => {
  await client.close();
  await server.close();
  removeDir(tmp);
});

describe('cairn_stage_write / cairn_stage_read containment (in-process)', () => {
  it('refuse a datarim link that leads outside with ERR_CONTAINMENT, never returning the outside note', async () => {
    const p = project('p-datarim');
    fs.symlinkSync(outside, path.join(p, 'datarim'));
    expect(errorOf(await call(client, 'cairn_stage_write', { ...note, root: p })).code).toBe('ERR_CONTAINMENT');
    const read = await call(client, 'cairn_stage_read', { root: p, task: 'DEV-0001' });
    expect(errorOf(read).code).toBe('ERR_CONTAINMENT');
    expect(JSON.stringify(read)).not.toContain(SECRET);
  });

  it('refuse a dangling datarim link with ERR_CONTAINMENT (not ERR_IO), creating nothing at its target', async () => {
    const p = project('p-dangling');
    fs.symlinkSync(path.join(outside, 'datarim-target'), path.join(p, 'datarim'));
    expect(errorOf(await call(client, 'cairn_stage_write', { ...note, root: p })).code).toBe('ERR_CONTAINMENT');
    expect(errorOf(await call(client, 'cairn_stage_read', { root: p, task: 'DEV-0001' })).code).toBe('ERR_CONTAINMENT');
    expect(fs.existsSync(path.join(outside, 'datarim-target'))).toBe(false);
  });

  it('refuse a note that is a link (ERR_SYMLINK) and replace the link, not its target, on write', async () => {
    const p = project('p-notelink');
    fs.mkdirSync(path.join(p, 'datarim', 'snapshots'), { recursive: true });
    const noteFile = path.join(p, 'datarim', 'snapshots', 'DEV-0001.snapshot.md');
    fs.symlinkSync(path.join(outside, 'snapshots', 'DEV-0001.snapshot.md'), noteFile);
    const read = await call(client, 'cairn_stage_read', { root: p, task: 'DEV-0001' });
    expect(errorOf(read).code).toBe('ERR_SYMLINK');
    expect(JSON.stringify(read)).not.toContain(SECRET);
    okText(await call(client, 'cairn_stage_write', { ...note, root: p }));
    expect(fs.lstatSync(noteFile).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(noteFile, 'utf8')).toContain('new body');
    expect(fs.readFileSync(path.join(outside, 'snapshots', 'DEV-0001.snapshot.md'), 'utf8')).toBe(NOTE);
  });

  it('write and read a note normally, also through a datarim link that stays inside the root', async () => {
    const p = project('p-inside');
    fs.mkdirSync(path.join(p, 'notes-real'));
    fs.symlinkSync('notes-real', path.join(p, 'datarim'));
    const written = okText<{ path: string }>(await call(client, 'cairn_stage_write', { ...note, root: p }));
    expect(written.path).toBe(path.join(p, 'notes-real', 'snapshots', 'DEV-0001.snapshot.md'));
    expect(okText<{ body: string }>(await call(client, 'cairn_stage_read', { root: p, task: 'DEV-0001' })).body).toBe('new body');
  });

  it('keep the allowlist: a root outside the allowed roots is ERR_ROOT_NOT_ALLOWED', async () => {
    expect(errorOf(await call(client, 'cairn_stage_write', { ...note, root: outside })).code).toBe('ERR_ROOT_NOT_ALLOWED');
    expect(errorOf(await call(client, 'cairn_stage_read', { root: outside, task: 'DEV-0001' })).code).toBe('ERR_ROOT_NOT_ALLOWED');
  });
});
