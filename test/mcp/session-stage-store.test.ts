import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, connect, errorOf, git, makeRepo, makeTempDir, okText, removeDir, serverEnv, structured, write, type Connected } from './support.js';

interface PreResult {
  iterationDir: string;
  branch: string;
  commit: string;
  keyFiles: number;
  inventoryFiles: number | null;
}

interface PostResult {
  iterationDir: string;
  summary: { filesSource: string; filesChanged: number; added: number; modified: number; deleted: number; commits: number };
  page: { list: string; items: Array<{ path: string; status: string; additions?: number; deletions?: number }>; total: number; remaining: number; nextCursor: string | null };
  commits: { items: string[]; total: number };
  counts: { untracked: { pre: number; post: number } };
  saved: { sessionId: string; snapshotId: string } | null;
}

/** The changed paths of a page, by status. */
const byStatus = (r: PostResult, status: string): string[] => r.page.items.filter((f) => f.status === status).map((f) => f.path);

interface StoredIteration extends PostResult {
  snapshotId: string;
  kind: string;
}

let tmp: string;
let repo: string;
let server: Connected;

beforeAll(async () => {
  tmp = makeTempDir();
  repo = makeRepo();
  write(repo, 'README.md', '# demo\n');
  write(repo, 'src/a.ts', 'export const a = 1;\n');
  write(repo, 'src/gone.ts', 'export const gone = 1;\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  server = await connect(['--root', repo], { env: serverEnv(path.join(tmp, 'cache')) });
});

afterAll(async () => {
  await server.close();
  removeDir(tmp);
  removeDir(repo);
});

describe('an iteration through the MCP tools', () => {
  it('pre → edit, untracked file, delete, commit → post reports those files and saves the record; the store lists and shows it', async () => {
    const pre = okText<PreResult>(await call(server.client, 'cairn_session_pre'));
    expect(pre.iterationDir).toBe(path.join(repo, '.cairn', 'iterations', '001'));
    expect(fs.existsSync(path.join(pre.iterationDir, 'pre-snapshot.json'))).toBe(true);
    expect(pre.branch).toBe('main');
    expect(pre.commit).toBe(git(repo, 'rev-parse', 'HEAD').trim());
    expect(pre.inventoryFiles).toBe(3);

    // The agent's work: an uncommitted edit, an untracked file, a deletion and a commit.
    write(repo, 'src/a.ts', 'export const a = 2;\n');
    write(repo, 'notes.txt', 'untracked\n');
    fs.rmSync(path.join(repo, 'src/gone.ts'));
    write(repo, 'lib/c.ts', 'export const c = 3;\n');
    git(repo, 'add', 'lib/c.ts');
    git(repo, 'commit', '-q', '-m', 'add c');

    const postResult = await call(server.client, 'cairn_session_post', { iterationDir: pre.iterationDir, sessionId: 'agent-run' });
    const post = okText<PostResult>(postResult);
    expect(structured<PostResult>(postResult)).toEqual(post);
    expect(post.iterationDir).toBe(pre.iterationDir);
    expect(post.summary.filesSource).toBe('working-tree');
    expect(byStatus(post, 'added')).toEqual(['lib/c.ts', 'notes.txt']);
    expect(byStatus(post, 'modified')).toEqual(['src/a.ts']);
    expect(byStatus(post, 'deleted')).toEqual(['src/gone.ts']);
    expect(post.page.items.find((f) => f.path === 'src/a.ts')).toMatchObject({ additions: 1, deletions: 1 });
    expect(post.summary.commits).toBe(1);
    expect(post.commits.items[0]).toMatch(/^[0-9a-f]{7,40} add c$/);
    expect(post.counts.untracked.post).toBe(1);
    expect(post.saved?.sessionId).toBe('agent-run');
    const snapshotId = post.saved?.snapshotId ?? '';
    expect(snapshotId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The default store lives inside the root.
    expect(fs.existsSync(path.join(repo, '.cairn', 'store'))).toBe(true);

    const sessions = okText<{ sessions: string[] }>(await call(server.client, 'cairn_store_list'));
    expect(sessions.sessions).toContain('agent-run');
    const ids = okText<{ ids: string[] }>(await call(server.client, 'cairn_store_list', { sessionId: 'agent-run' }));
    expect(ids.ids).toEqual([snapshotId]);

    const latest = okText<StoredIteration>(await call(server.client, 'cairn_store_show', { sessionId: 'agent-run' }));
    const byId = okText<StoredIteration>(await call(server.client, 'cairn_store_show', { sessionId: 'agent-run', snapshotId }));
    expect({ ...latest, snapshotId: '' }).toEqual({ ...byId, snapshotId: '' });
    expect(byId.kind).toBe('cairn.iteration/v1');
    expect(byId.iterationDir).toBe(pre.iterationDir);
    expect(byId.page.items).toEqual(post.page.items);
    expect(byId.summary).toEqual(post.summary);
    // The record itself, as JSON text, a page at a time.
    const raw = okText<{ raw: { text: string; nextCursor: string | null } }>(await call(server.client, 'cairn_store_show', { sessionId: 'agent-run', snapshotId, view: 'raw' }));
    expect(raw.raw.nextCursor).toBeNull();
    const record = JSON.parse(raw.raw.text) as { data: { kind: string; diff: { filesAdded: string[] } } };
    expect(record.data.diff.filesAdded).toEqual(['lib/c.ts', 'notes.txt']);
  });

  it('finishes the latest iteration when post gets no iterationDir, and numbers the next pre 002', async () => {
    const pre = okText<PreResult>(await call(server.client, 'cairn_session_pre'));
    expect(path.basename(pre.iterationDir)).toBe('002');
    write(repo, 'second.txt', 'two\n');
    const post = okText<PostResult>(await call(server.client, 'cairn_session_post', { save: false }));
    expect(post.iterationDir).toBe(pre.iterationDir);
    expect(byStatus(post, 'added')).toEqual(['second.txt']);
    expect(post.saved).toBeNull();
  });

  it('keeps an iteration in a relative iterationDir inside the root', async () => {
    const pre = okText<PreResult>(await call(server.client, 'cairn_session_pre', { iterationDir: 'work/iter-a' }));
    expect(pre.iterationDir).toBe(path.join(repo, 'work', 'iter-a'));
    const post = okText<PostResult>(await call(server.client, 'cairn_session_post', { iterationDir: 'work/iter-a', save: false }));
    expect(post.page.items).toEqual([]);
    removeDir(path.join(repo, 'work'));
  });
});

describe('a project without git', () => {
  it('still records an iteration: the working-tree inventory finds the new and changed files', async () => {
    const plain = makeTempDir('cairn-mcp-plain-');
    write(plain, 'a.txt', 'one\n');
    const other = await connect(['--root', plain], { env: serverEnv(path.join(tmp, 'cache')) });
    try {
      const pre = okText<PreResult>(await call(other.client, 'cairn_session_pre'));
      expect(pre.inventoryFiles).toBe(1);
      write(plain, 'a.txt', 'two\n');
      write(plain, 'b.txt', 'new\n');
      const post = okText<PostResult>(await call(other.client, 'cairn_session_post', { save: false }));
      expect(byStatus(post, 'added')).toEqual(['b.txt']);
      expect(byStatus(post, 'modified')).toEqual(['a.txt']);
      expect(post.summary.commits).toBe(0);
    } finally {
      await other.close();
      removeDir(plain);
    }
  });
});

describe('session tool errors', () => {
  it('post without any pre-snapshot → ERR_NOT_FOUND telling the agent to call cairn_session_pre', async () => {
    const fresh = makeRepo();
    const other = await connect(['--root', fresh], { env: serverEnv(path.join(tmp, 'cache')) });
    try {
      const err = errorOf(await call(other.client, 'cairn_session_post'));
      expect(err.code).toBe('ERR_NOT_FOUND');
      expect(err.message).toContain('cairn_session_pre');
      const named = errorOf(await call(other.client, 'cairn_session_post', { iterationDir: 'no/such/iteration' }));
      expect(named.code).toBe('ERR_NOT_FOUND');
    } finally {
      await other.close();
      removeDir(fresh);
    }
  });

  it('post with a corrupt pre-snapshot → ERR_CORRUPT, nothing saved', async () => {
    write(repo, 'broken/pre-snapshot.json', '{ not json');
    const err = errorOf(await call(server.client, 'cairn_session_post', { iterationDir: 'broken' }));
    expect(err.code).toBe('ERR_CORRUPT');
    expect(fs.existsSync(path.join(repo, 'broken', 'post-snapshot.json'))).toBe(false);
    removeDir(path.join(repo, 'broken'));
  });

  it('rejects a sessionId that is not [a-z0-9_-]+ and a non-boolean save', async () => {
    for (const args of [{ sessionId: 'Bad Id' }, { sessionId: '../x' }, { save: 'yes' }]) {
      expect(errorOf(await call(server.client, 'cairn_session_post', args)).code, JSON.stringify(args)).toBe('ERR_INVALID_OPTION');
    }
    expect(errorOf(await call(server.client, 'cairn_session_pre', { iterationDir: '' })).code).toBe('ERR_INVALID_OPTION');
  });
});

describe('stage notes through the MCP tools', () => {
  const note = {
    task: 'DEV-0042',
    stage: 'plan',
    command: '/dr-plan',
    recommendedNext: '/dr-do DEV-0042',
    body: '## Summary\n\nPlanned the work.\n',
    options: ['/dr-qa | check the plan'],
    capturedAt: '2026-05-21T13:45:00Z',
  };

  it('writes a note and reads it back: frontmatter and body round-trip', async () => {
    const written = okText<{ path: string; sizeBytes: number; truncated: boolean }>(await call(server.client, 'cairn_stage_write', note));
    expect(written.path).toBe(path.join(repo, 'datarim', 'snapshots', 'DEV-0042.snapshot.md'));
    expect(written.truncated).toBe(false);
    expect(fs.statSync(written.path).size).toBe(written.sizeBytes);
    const read = okText<{ task_id: string; frontmatter: Record<string, unknown>; body: string }>(await call(server.client, 'cairn_stage_read', { task: 'DEV-0042' }));
    expect(read.task_id).toBe('DEV-0042');
    expect(read.frontmatter).toMatchObject({ task_id: 'DEV-0042', stage: 'plan', command: '/dr-plan', captured_at: '2026-05-21T13:45:00Z', captured_by: 'agent', recommended_next: '/dr-do DEV-0042' });
    expect(read.body).toContain('Planned the work.');
  });

  it('caps a long body at 8192 bytes and says it truncated', async () => {
    const written = okText<{ path: string; sizeBytes: number; truncated: boolean }>(await call(server.client, 'cairn_stage_write', { ...note, task: 'DEV-0043', body: 'x'.repeat(20_000) }));
    expect(written.truncated).toBe(true);
    expect(written.sizeBytes).toBeLessThanOrEqual(8192);
  });

  it('rejects a bad task id with ERR_INVALID_TASK_ID on write and read, and writes nothing', async () => {
    for (const task of ['dev-42', '../../etc/passwd', 'DEV-0042/../../x', '/tmp/DEV-0042']) {
      expect(errorOf(await call(server.client, 'cairn_stage_write', { ...note, task })).code, task).toBe('ERR_INVALID_TASK_ID');
      expect(errorOf(await call(server.client, 'cairn_stage_read', { task })).code, task).toBe('ERR_INVALID_TASK_ID');
    }
    // An empty id fails the input schema before the stage code sees it.
    expect(errorOf(await call(server.client, 'cairn_stage_write', { ...note, task: '' })).code).toBe('ERR_INVALID_OPTION');
    expect(errorOf(await call(server.client, 'cairn_stage_read', { task: '' })).code).toBe('ERR_INVALID_OPTION');
    expect(fs.readdirSync(path.join(repo, 'datarim', 'snapshots')).filter((n) => n.endsWith('.md')).sort()).toEqual(['DEV-0042.snapshot.md', 'DEV-0043.snapshot.md']);
  });

  it('rejects a bad stage, a bad capturedAt and missing fields with clear codes', async () => {
    expect(errorOf(await call(server.client, 'cairn_stage_write', { ...note, stage: 'Plan!' })).code).toBe('ERR_INVALID_STAGE');
    expect(errorOf(await call(server.client, 'cairn_stage_write', { ...note, capturedAt: 'yesterday' })).code).toBe('ERR_INVALID_CAPTURED_AT');
    expect(errorOf(await call(server.client, 'cairn_stage_write', { ...note, capturedBy: 'robot' })).code).toBe('ERR_INVALID_OPTION');
    const missing = errorOf(await call(server.client, 'cairn_stage_write', { task: 'DEV-0044' }));
    expect(missing.code).toBe('ERR_INVALID_OPTION');
    const fields = ((missing.details?.issues ?? []) as Array<{ path: string }>).map((i) => i.path).sort();
    expect(fields).toEqual(['body', 'command', 'recommendedNext', 'stage']);
  });

  it('honours the DATARIM_DISABLE_SNAPSHOT kill switch of the server environment: nothing written, disabled: true', async () => {
    const plain = makeTempDir('cairn-mcp-killswitch-');
    const other = await connect(['--root', plain], { env: serverEnv(path.join(tmp, 'cache'), { DATARIM_DISABLE_SNAPSHOT: '1' }) });
    try {
      const r = okText<{ path: string; disabled: boolean }>(await call(other.client, 'cairn_stage_write', { ...note, root: plain }));
      expect(r).toMatchObject({ path: '', disabled: true });
      expect(fs.readdirSync(plain)).toEqual([]);
    } finally {
      await other.close();
      removeDir(plain);
    }
  });

  it('reading a task without a note → ERR_NOT_FOUND', async () => {
    expect(errorOf(await call(server.client, 'cairn_stage_read', { task: 'DEV-0999' })).code).toBe('ERR_NOT_FOUND');
  });
});

describe('store tool errors', () => {
  it('a session or snapshot that does not exist → ERR_NOT_FOUND; empty history lists as []', async () => {
    const err = errorOf(await call(server.client, 'cairn_store_show', { sessionId: 'nobody' }));
    expect(err.code).toBe('ERR_NOT_FOUND');
    expect(err.message).toContain('cairn_store_list');
    expect(okText<{ ids: string[] }>(await call(server.client, 'cairn_store_list', { sessionId: 'nobody' })).ids).toEqual([]);
    const missingId = errorOf(await call(server.client, 'cairn_store_show', { sessionId: 'agent-run', snapshotId: '01890000-0000-7000-8000-000000000000' }));
    expect(missingId.code).toBe('ERR_NOT_FOUND');
  });

  it('an invalid session id, scope, snapshot id or limit is refused with a code, never a path outside the store', async () => {
    const traversal = errorOf(await call(server.client, 'cairn_store_show', { sessionId: '../../etc' }));
    expect(traversal.code).toMatch(/^ERR_/);
    expect(traversal.code).not.toBe('ERR_INTERNAL');
    expect(errorOf(await call(server.client, 'cairn_store_show', { sessionId: 'agent-run', snapshotId: 'not-a-uuid' })).code).not.toBe('ERR_INTERNAL');
    expect(errorOf(await call(server.client, 'cairn_store_list', { sessionId: 'agent-run', scope: 'team' })).code).toBe('ERR_INVALID_OPTION');
    expect(errorOf(await call(server.client, 'cairn_store_list', { limit: 0 })).code).toBe('ERR_INVALID_OPTION');
    expect(errorOf(await call(server.client, 'cairn_store_show', {})).code).toBe('ERR_INVALID_OPTION');
  });

  it('uses the store named by --store instead of the default, a relative file: path from the working directory', async () => {
    const storeDir = path.join(tmp, 'team-store');
    const other = await connect(['--root', repo, '--store', 'file:team-store'], { cwd: tmp, env: serverEnv(path.join(tmp, 'cache')) });
    try {
      okText(await call(other.client, 'cairn_session_pre'));
      const post = okText<PostResult>(await call(other.client, 'cairn_session_post', { sessionId: 'team' }));
      expect(fs.existsSync(storeDir)).toBe(true);
      expect(okText<{ ids: string[] }>(await call(other.client, 'cairn_store_list', { sessionId: 'team' })).ids).toEqual([post.saved?.snapshotId]);
      // The default store of the root did not get it.
      expect(okText<{ sessions: string[] }>(await call(server.client, 'cairn_store_list')).sessions).not.toContain('team');
    } finally {
      await other.close();
    }
  });
});
