/**
 * Several agents on one project: two `cairn mcp` processes (two clients) calling the writing
 * tools at the same time, and a client cancelling a call in flight.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, connect, git, makeRepo, makeTempDir, okText, removeDir, serverEnv, structured, write, type Connected } from './support.js';
import { WHOLE_PROCESS_BUDGET_MS } from '../support/budget.js';

// Whole processes: bounded by work; the budget only catches a hang (see support/budget.ts).
vi.setConfig({ testTimeout: WHOLE_PROCESS_BUDGET_MS, hookTimeout: WHOLE_PROCESS_BUDGET_MS });

let tmp: string;
let repo: string;
let a: Connected;
let b: Connected;

beforeAll(async () => {
  tmp = makeTempDir();
  repo = makeRepo();
  for (let i = 0; i < 300; i++) write(repo, `src/m${i}.ts`, `export const m${i} = ${i};\n`);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  const env = serverEnv(path.join(tmp, 'cache'));
  [a, b] = await Promise.all([connect(['--root', repo], { env }), connect(['--root', repo], { env })]);
});

afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  removeDir(tmp);
  removeDir(repo);
});

describe('two servers on one root', () => {
  it('give concurrent session_pre calls distinct iteration directories, each with a whole pre-snapshot', async () => {
    const results = await Promise.all([a, b, a, b].map((s) => call(s.client, 'cairn_session_pre')));
    const dirs = results.map((r) => okText<{ iterationDir: string }>(r).iterationDir);
    expect(new Set(dirs).size).toBe(4);
    for (const dir of dirs) {
      const pre = JSON.parse(fs.readFileSync(path.join(dir, 'pre-snapshot.json'), 'utf8')) as { git: { branch: string } };
      expect(pre.git.branch).toBe('main');
    }
  });

  it('serialise concurrent stage writes of one task: the note is one whole write, never a mix', async () => {
    const note = (who: string) => ({ task: 'DEV-0100', stage: 'do', command: '/dr-do', recommendedNext: '/dr-qa', body: `${who}\n`.repeat(500) });
    const results = await Promise.all([
      call(a.client, 'cairn_stage_write', note('alpha')),
      call(b.client, 'cairn_stage_write', note('bravo')),
      call(a.client, 'cairn_stage_write', note('charlie')),
      call(b.client, 'cairn_stage_write', note('delta')),
    ]);
    for (const r of results) expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const read = okText<{ body: string }>(await call(a.client, 'cairn_stage_read', { task: 'DEV-0100' }));
    const words = new Set(read.body.split('\n').filter((l) => /^[a-z]+$/.test(l)));
    expect(words.size).toBe(1);
    const dir = path.join(repo, 'datarim', 'snapshots');
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.') || n.endsWith('.lock'))).toEqual([]);
  });

  it('save concurrent session_post records under distinct ids in the shared store', async () => {
    const [preA, preB] = await Promise.all([call(a.client, 'cairn_session_pre'), call(b.client, 'cairn_session_pre')]);
    const dirA = okText<{ iterationDir: string }>(preA).iterationDir;
    const dirB = okText<{ iterationDir: string }>(preB).iterationDir;
    write(repo, 'shared-change.txt', 'both see this\n');
    const [postA, postB] = await Promise.all([
      call(a.client, 'cairn_session_post', { iterationDir: dirA, sessionId: 'pair' }),
      call(b.client, 'cairn_session_post', { iterationDir: dirB, sessionId: 'pair' }),
    ]);
    const idA = okText<{ saved: { snapshotId: string } }>(postA).saved.snapshotId;
    const idB = okText<{ saved: { snapshotId: string } }>(postB).saved.snapshotId;
    expect(idA).not.toBe(idB);
    const ids = okText<{ ids: string[] }>(await call(a.client, 'cairn_store_list', { sessionId: 'pair' })).ids;
    expect([...ids].sort()).toEqual([idA, idB].sort());
  });
});

describe('cancellation', () => {
  it('keeps serving after a client cancels a snapshot in flight', async () => {
    const controller = new AbortController();
    const pending = a.client.callTool({ name: 'cairn_repo_snapshot', arguments: { maxFiles: 50_000 } }, undefined, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toThrow();
    const snap = structured<{ body: { counts: { files: number } } }>(await call(a.client, 'cairn_repo_snapshot', { include: ['src/**'] }));
    expect(snap.body.counts.files).toBe(300);
  });
});
