/**
 * Results an agent can afford, on a tree as big as the one that gave a 1.2 MB cairn_store_show:
 * 11,000 untracked files before the iteration and 1,200 more made by it. Every tool's result
 * stays under the bound its description states, and paging with the cursor gives every path
 * exactly once: the changed files (post's first page, then cairn_session_diff), the untracked
 * list of the stored record, the raw record's text and a dry-run restore's changes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CHARS, RESULT_BOUND } from '../../src/mcp/paging.js';
import { call, connect, git, makeRepo, makeTempDir, removeDir, serverEnv, structured, type Connected } from './support.js';

const BEFORE = 11_000;
const MADE = 1_200;

let tmp: string;
let project: string;
let server: Connected;
let postResult: Record<string, unknown>;
let postChars: number;
const untrackedAtPost: string[] = [];
const made: string[] = [];

function fill(dir: string, prefix: string, n: number, into: string[]): void {
  for (let i = 0; i < n; i++) {
    const rel = `${prefix}/d${String(i % 50).padStart(2, '0')}/file-${String(i).padStart(5, '0')}.txt`;
    fs.mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), `${rel}\n`);
    into.push(rel);
  }
}

/** A tool's result as the client gets it: JSON text, checked against the bound. */
async function bounded(name: string, args: Record<string, unknown>): Promise<{ value: Record<string, unknown>; chars: number }> {
  const result = await call(server.client, name, args);
  expect(result.isError, JSON.stringify(result.content).slice(0, 300)).toBeFalsy();
  const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
  expect(text.length).toBeLessThan(RESULT_BOUND);
  return { value: structured(result), chars: text.length };
}

/** Every item of a list, page by page through nextCursor. */
async function pageAll(name: string, args: Record<string, unknown>, items: (v: Record<string, unknown>) => unknown[], next: (v: Record<string, unknown>) => string | null): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | null = null;
  do {
    const { value } = await bounded(name, cursor === null ? args : { ...args, cursor });
    out.push(...items(value));
    cursor = next(value);
  } while (cursor !== null);
  return out;
}

beforeAll(async () => {
  tmp = makeTempDir();
  project = makeRepo();
  fs.writeFileSync(path.join(project, 'README.md'), '# big\n');
  git(project, 'add', '-A');
  git(project, 'commit', '-q', '-m', 'init');
  fill(project, 'scratch', BEFORE, untrackedAtPost);
  server = await connect(['--root', project], { env: serverEnv(path.join(tmp, 'cache')) });
  await bounded('cairn_session_pre', {});
  fill(project, 'made', MADE, made);
  untrackedAtPost.push(...made);
  const post = await bounded('cairn_session_post', { sessionId: 'big' });
  postResult = post.value;
  postChars = post.chars;
});

afterAll(async () => {
  await server?.close();
  removeDir(tmp);
  removeDir(project);
});

describe('MCP results on an 11,000-file tree', () => {
  it('cairn_session_post: counts, one page of files, the untracked lists as counts only', () => {
    expect(postChars).toBeLessThan(RESULT_BOUND);
    const summary = postResult.summary as Record<string, number>;
    expect(summary.filesChanged).toBe(MADE);
    expect(summary.additions).toBe(MADE);
    expect(postResult.counts).toMatchObject({ untracked: { pre: BEFORE, post: BEFORE + MADE } });
    const page = postResult.page as { items: unknown[]; total: number; remaining: number; nextCursor: string };
    expect(page.items).toHaveLength(100);
    expect(page.total).toBe(MADE);
    expect(page.remaining).toBe(MADE - 100);
    expect(page.nextCursor).toBe('100');
  });

  it("post's cursor continues in cairn_session_diff: every changed path exactly once", async () => {
    const first = (postResult.page as { items: Array<{ path: string }> }).items.map((f) => f.path);
    const rest = await pageAll(
      'cairn_session_diff',
      { iteration: postResult.iterationDir, cursor: (postResult.page as { nextCursor: string }).nextCursor, limit: 500 },
      (v) => (v.files as Array<{ path: string }>).map((f) => f.path),
      (v) => v.nextCursor as string | null,
    );
    const all = [...first, ...(rest as string[])];
    expect(all).toHaveLength(MADE);
    expect(new Set(all).size).toBe(MADE);
    expect([...all].sort()).toEqual([...made].sort());
  });

  it('cairn_store_show: a summary under the bound, and the untracked list paged once through', async () => {
    const { value } = await bounded('cairn_store_show', { sessionId: 'big' });
    expect(value.kind).toBe('cairn.iteration/v1');
    expect(JSON.stringify(value)).not.toContain('scratch/d00/file-00000.txt');
    const untracked = await pageAll(
      'cairn_store_show',
      { sessionId: 'big', list: 'untracked', side: 'post', limit: 1000 },
      (v) => (v.page as { items: string[] }).items,
      (v) => (v.page as { nextCursor: string | null }).nextCursor,
    );
    expect(untracked).toHaveLength(BEFORE + MADE);
    expect(new Set(untracked).size).toBe(untracked.length);
    expect([...(untracked as string[])].sort()).toEqual([...untrackedAtPost].sort());
  });

  it('cairn_store_show view "raw": the whole record in pages of text that join into the stored JSON', async () => {
    const pages: string[] = [];
    let chars = 0;
    await pageAll(
      'cairn_store_show',
      { sessionId: 'big', view: 'raw' },
      (v) => {
        const raw = v.raw as { text: string; chars: number };
        expect(raw.text.length).toBeLessThanOrEqual(PAGE_CHARS);
        pages.push(raw.text);
        chars = raw.chars;
        return [];
      },
      (v) => (v.raw as { nextCursor: string | null }).nextCursor,
    );
    expect(chars).toBeGreaterThan(RESULT_BOUND);
    const record = JSON.parse(pages.join('')) as { data: { post: { git: { untracked: string[] } } } };
    expect(record.data.post.git.untracked).toHaveLength(BEFORE + MADE);
  });

  it('cairn_session_restore dry run: changes paged once through, totals for all', async () => {
    const changes = await pageAll(
      'cairn_session_restore',
      { limit: 1000 },
      (v) => {
        expect((v.totals as { changes: number }).changes).toBe(MADE);
        return (v.changes as Array<{ path: string }>).map((c) => c.path);
      },
      (v) => (v.changesPage as { nextCursor: string | null }).nextCursor,
    );
    expect([...(changes as string[])].sort()).toEqual([...made].sort());
    expect(fs.existsSync(path.join(project, made[0] as string))).toBe(true);
  });

  it('cairn_store_list and cairn_session_list stay bounded too', async () => {
    const sessions = await bounded('cairn_store_list', {});
    expect(sessions.value.sessions).toEqual(['big']);
    const list = await bounded('cairn_session_list', {});
    expect(list.value.total).toBe(1);
  });
});
