/** cairn_session_diff and cairn_session_list over MCP: pages with a cursor, bounded patch text. */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, connect, errorOf, git, makeRepo, makeTempDir, removeDir, serverEnv, structured, write, type Connected } from './support.js';
import { PATCH_PAGE_CHARS } from '../../src/mcp/review-tools.js';

let tmp: string;
let project: string;
let server: Connected;

interface DiffPage {
  iteration: string;
  totals: { files: number; additions: number; deletions: number };
  files: Array<{ path: string; status: string; additions: number; deletions: number; binary: boolean }>;
  remaining: number;
  nextCursor: string | null;
  patch?: string;
  patchCut?: boolean;
}

beforeAll(async () => {
  tmp = makeTempDir();
  project = makeRepo();
  for (let i = 0; i < 30; i++) write(project, `f${String(i).padStart(2, '0')}.txt`, 'a\n');
  git(project, 'add', '-A');
  git(project, 'commit', '-q', '-m', 'init');
  server = await connect(['--root', project], { env: serverEnv(path.join(tmp, 'cache')) });
  await call(server.client, 'cairn_session_pre', {});
  // 30 changed files, one of them with a patch bigger than a page
  for (let i = 0; i < 30; i++) write(project, `f${String(i).padStart(2, '0')}.txt`, i === 5 ? `${'x'.repeat(100)}\n`.repeat(1000) : 'b\n');
  await call(server.client, 'cairn_session_post', { save: false });
});

afterAll(async () => {
  await server.close();
  removeDir(tmp);
  removeDir(project);
});

describe('cairn_session_diff', () => {
  it('pages the files with a cursor; the pages together are every file once, totals count all', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const args: Record<string, unknown> = { limit: 12 };
      if (cursor !== null) args.cursor = cursor;
      const page: DiffPage = structured<DiffPage>(await call(server.client, 'cairn_session_diff', args));
      expect(page.files.length).toBeLessThanOrEqual(12);
      expect(page.totals).toEqual({ files: 30, additions: 1029, deletions: 30 });
      seen.push(...page.files.map((f) => f.path));
      expect(page.remaining).toBe(30 - seen.length);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`));
  });

  it('keeps a patch page under its bound and cuts at a file boundary', async () => {
    const first = structured<DiffPage>(await call(server.client, 'cairn_session_diff', { format: 'patch', limit: 500 }));
    expect(first.patch?.length ?? 0).toBeLessThanOrEqual(PATCH_PAGE_CHARS);
    expect(first.patchCut).toBe(true);
    expect(first.nextCursor).toBe('5');
    expect(first.patch).toContain('diff --git a/f04.txt b/f04.txt');
    expect(first.patch).not.toContain('f05.txt');
    const second = structured<DiffPage>(await call(server.client, 'cairn_session_diff', { format: 'patch', limit: 1, cursor: '5' }));
    expect(second.files.map((f) => f.path)).toEqual(['f05.txt']);
    expect(second.patch?.length ?? 0).toBeLessThanOrEqual(PATCH_PAGE_CHARS + 200);
    expect(second.patch).toContain('this file\'s patch is cut here');
  });

  it('refuses a cursor it did not give', async () => {
    expect(errorOf(await call(server.client, 'cairn_session_diff', { cursor: 'abc' })).code).toBe('ERR_INVALID_OPTION');
  });
});

describe('cairn_session_list', () => {
  it('lists the iterations with their counts, paged', async () => {
    const page = structured<{ total: number; iterations: Array<Record<string, unknown>>; nextCursor: string | null }>(await call(server.client, 'cairn_session_list', { limit: 1 }));
    expect(page.total).toBe(1);
    expect(page.nextCursor).toBeNull();
    expect(page.iterations[0]).toMatchObject({ iteration: '001', filesChanged: 30, additions: 1029, deletions: 30, finished: true });
  });
});
