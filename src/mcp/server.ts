import * as path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { CairnError } from '../core/errors.js';
import { containedPath } from '../core/paths.js';
import { RepoSnapshotSchema, SNAPSHOT_MAX_BYTES_DEFAULT, SNAPSHOT_MAX_FILES_CAP, SNAPSHOT_MAX_FILES_DEFAULT, snapshotRoot } from '../inventory/index.js';
import type { RepoSnapshotOptions } from '../inventory/index.js';
import {
  DEFAULT_SESSION_ID,
  ITERATIONS_DIR,
  PRE_SNAPSHOT_FILE,
  SnapshotManager,
  assertIterationNotFinished,
  capturePostSnapshotAsync,
  capturePreSnapshotAsync,
  assertNoPreSnapshot,
  createNextIterationDir,
  latestIterationDir,
  readPreSnapshot,
  saveIterationRecord,
} from '../session/index.js';
import { ITERATION_RECORD_KIND } from '../session/records/record.js';
import { CAPTURED_BY_VALUES, readStageSnapshotAsync, writeStageSnapshot } from '../stage/index.js';
import { openStore, resolveStoreSpec } from '../store/index.js';
import type { ManagedSnapshotStorage } from '../store/index.js';
import { iterationView, type IterationParts } from './iteration-results.js';
import { PAGE_CHARS, RESULT_BOUND, cursorStart, pageOf, shortList } from './paging.js';
import { jsonResult } from './results.js';
import { addReviewTools } from './review-tools.js';
import { RootAllowlist } from './roots.js';
import { ToolTable } from './tool-table.js';

export interface CairnMcpServerOptions {
  /** Directories the client may work in (the operator's `--root` list). */
  roots: readonly string[];
  /** Store URL for iteration records and snapshot reads (default `file:<first root>/.cairn/store`); a relative `file:` path is relative to `cwd`. */
  store?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  version?: string;
}

const READ_ONLY = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;
/** cairn's data directory inside a project: iterations, inventories and the default store live here. */
const CAIRN_DIR = '.cairn';

const entrySchema = z
  .object({
    path: z.string().min(1).max(1024),
    bytes: z.number().int().min(0),
    sha256: z.string().regex(/^[a-f0-9]{64}$/).optional(),
    mode: z.enum(['0644', '0755']),
    kind: z.enum(['file', 'symlink']),
  })
  .strict();

/** Output schema of the snapshot tool: the seed's RepoSnapshot document. */
const repoSnapshotOutput = {
  apiVersion: z.literal('axiom.dev/v2'),
  kind: z.literal('RepoSnapshot'),
  root: z.object({ kind: z.literal('relative') }).strict(),
  snapshotDigest: z.string().regex(/^sha256:[a-f0-9]{64}$/),
  body: z
    .object({
      files: z.array(entrySchema),
      truncated: z.boolean(),
      counts: z.object({ files: z.number().int().min(0), bytes: z.number().int().min(0) }).strict(),
    })
    .strict(),
};

const rootInput = z
  .string()
  .min(1)
  .optional()
  .describe('Absolute path of the project directory; must be an allowed root or lie inside one. Optional when the server has exactly one root.');

/** The seed's input contract of axiom_repo_snapshot. */
const snapshotInput = {
  root: rootInput,
  include: z.array(z.string().min(1)).optional().describe('Globs of files to keep (`**` any depth, `*` within a segment, `?`), relative to the root, e.g. ["src/**"]. Default: everything.'),
  exclude: z.array(z.string().min(1)).optional().describe('Globs to drop; a matching directory is not entered, e.g. ["vendor/**"].'),
  maxFiles: z.number().int().min(1).max(SNAPSHOT_MAX_FILES_CAP).default(SNAPSHOT_MAX_FILES_DEFAULT).describe('Stop after this many files (then truncated: true and files is a prefix of the full inventory).'),
  maxBytes: z.number().int().min(0).default(SNAPSHOT_MAX_BYTES_DEFAULT).describe('Stop before the sum of file sizes would exceed this many bytes.'),
  followSymlinks: z.literal(false).default(false).describe('Symlinks are recorded at their own path and never followed into directories; only false is accepted.'),
  respectGitignore: z.boolean().default(true).describe('Honour .gitignore files at every level, as git does.'),
  withContentDigest: z.boolean().default(true).describe('Hash file contents (sha256); false records sizes only (fast on huge trees).'),
};

const taskInput = z.string().min(1).describe('Task id, e.g. TUNE-0042 or DEV-1438-fix-auth (^[A-Z]{2,10}-[0-9]{4}(-[A-Za-z0-9]+)*$).');
const sessionIdInput = z.string().describe('Session id ([a-z0-9_-]+).');
const scopeInput = z.enum(['agent', 'multiAgent']).default('agent').describe('"agent" for one agent\'s snapshots, "multiAgent" for an orchestrator\'s.');
const scopeIdInput = z.string().default('iterations').describe('Agent or orchestrator id (default "iterations", where cairn_session_post saves).');

/** Builds the cairn MCP server (not yet connected to a transport). */
export function createCairnMcpServer(options: CairnMcpServerOptions): McpServer {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const allow = RootAllowlist.fromPaths(options.roots, cwd);
  const firstRoot = allow.roots[0] as string;
  const server = new McpServer({ name: 'cairn', version: options.version ?? '0.1.0' }, { capabilities: { tools: {}, resources: {} } });
  const tools = new ToolTable(server);
  // A store spec that can never open fails now, not at the agent's first cairn_session_post.
  if (options.store !== undefined) resolveStoreSpec(options.store, { cwd, env });

  let storePromise: Promise<ManagedSnapshotStorage> | undefined;
  const store = (): Promise<ManagedSnapshotStorage> => {
    if (storePromise === undefined) {
      let url = options.store;
      if (url === undefined) {
        // The default store lives in the first root; a planted .cairn symlink must not carry it out.
        url = `file:${containedPath(firstRoot, path.join(CAIRN_DIR, 'store'))}`;
      }
      const opening = openStore(url, { cwd, env, within: firstRoot });
      storePromise = opening;
      // A failed open is not cached: the next call tries again.
      opening.catch(() => {
        if (storePromise === opening) storePromise = undefined;
      });
    }
    return storePromise;
  };

  /** Proves that cairn's data directories of `root` resolve inside it before a session tool writes there. */
  const assertCairnDirContained = (root: string): void => {
    for (const sub of ['iterations', 'inventories']) containedPath(root, path.join(CAIRN_DIR, sub));
  };

  const snapshotDescription =
    'Deterministic, content-addressed inventory of a directory: every file with path, size, sha256, mode and kind; .gitignore honoured; .git/ and .cairn/ skipped; no timestamps, no absolute paths. ' +
    'Use it before changing files to get real pre-image digests, and again afterwards to see exactly what changed (diff the two results by path; the same tree always gives the same snapshotDigest). ' +
    'Scope big trees with include (e.g. ["src/**"]). Read-only: writes nothing in the project.';
  const snapshotTool = (title: string, description: string) => ({
    title,
    description,
    input: snapshotInput,
    output: repoSnapshotOutput,
    annotations: READ_ONLY,
    run: async (args: z.output<z.ZodObject<typeof snapshotInput>>, signal: AbortSignal) => {
      const root = allow.resolveRoot(args.root);
      const snapshotOptions: RepoSnapshotOptions = {
        maxFiles: args.maxFiles,
        maxBytes: args.maxBytes,
        followSymlinks: args.followSymlinks,
        respectGitignore: args.respectGitignore,
        withContentDigest: args.withContentDigest,
        signal,
      };
      if (args.include !== undefined) snapshotOptions.include = args.include;
      if (args.exclude !== undefined) snapshotOptions.exclude = args.exclude;
      const snap = await snapshotRoot(root, snapshotOptions);
      const projection = {
        snapshotDigest: snap.snapshotDigest,
        counts: snap.body.counts,
        truncated: snap.body.truncated,
        paths: snap.body.files.slice(0, 20).map((f) => f.path),
      };
      return jsonResult(snap, projection);
    },
  });
  tools.add('cairn_repo_snapshot', snapshotTool('Repo snapshot', snapshotDescription));
  tools.add('axiom_repo_snapshot', snapshotTool('Repo snapshot (axiom name)', `${snapshotDescription} The same tool as cairn_repo_snapshot, under the name axiom clients call.`));

  tools.add('cairn_session_pre', {
    title: 'Start an iteration',
    description:
      'Call once BEFORE you start a unit of work on a project: records git state, key files, the agent state dir and a whole-tree inventory, so cairn_session_post can later report everything you changed, committed or not. ' +
      'Returns the iterationDir to pass to cairn_session_post. Writes only under <root>/.cairn/.',
    input: {
      root: rootInput,
      iterationDir: z
        .string()
        .min(1)
        .optional()
        .describe('Where to keep this iteration\'s files, relative to the root (or absolute inside it). Default: the next numbered folder under .cairn/iterations/.'),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async (args, signal: AbortSignal) => {
      const root = allow.resolveRoot(args.root);
      assertCairnDirContained(root);
      let iterationDir: string;
      if (args.iterationDir !== undefined) {
        iterationDir = containedPath(root, args.iterationDir);
        // As `cairn session pre`: an iteration is never started twice over its own pre-snapshot.
        assertIterationNotFinished(iterationDir);
        assertNoPreSnapshot(iterationDir);
      } else iterationDir = createNextIterationDir(root);
      // On a worker thread: a big tree's inventory must not stall the other calls this server answers.
      const pre = await capturePreSnapshotAsync(root, iterationDir, { signal });
      return jsonResult({
        iterationDir,
        timestamp: pre.timestamp,
        branch: pre.git.branch,
        commit: pre.git.commit,
        keyFiles: pre.keyFiles.length,
        inventoryFiles: pre.inventory?.files ?? null,
      });
    },
  });

  tools.add('cairn_session_post', {
    title: 'Finish an iteration',
    description:
      'Call once AFTER a unit of work started with cairn_session_pre: returns what the iteration did — counts (files added/modified/deleted in the working tree, +/− lines, commits, tests), the first page of changed files with status and line counts, the first commits and failing tests — ' +
      'and saves the whole record to the snapshot store (read it back with cairn_store_show). ' +
      `Bounded: at most limit files (default 100, max 1000) and ${PAGE_CHARS / 1024} KiB of them, 20 commits and 20 failing tests, counts only of the untracked/staged/unstaged lists; the result stays under ${RESULT_BOUND / 1024} KiB of JSON on any tree. The page's nextCursor continues with cairn_session_diff (iteration: the returned iterationDir).`,
    input: {
      root: rootInput,
      iterationDir: z.string().min(1).optional().describe('The iterationDir cairn_session_pre returned. Default: the latest iteration with a pre-snapshot.'),
      sessionId: z.string().regex(/^[a-z0-9_-]+$/).optional().describe(`Store session id to save under ([a-z0-9_-]+, default "${DEFAULT_SESSION_ID}").`),
      save: z.boolean().default(true).describe('Save the iteration record to the store.'),
      limit: z.number().int().min(1).max(1000).default(100).describe('Most changed files in the returned page.'),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async (args, signal: AbortSignal) => {
      const root = allow.resolveRoot(args.root);
      assertCairnDirContained(root);
      const found = args.iterationDir !== undefined ? args.iterationDir : latestIterationDir(root);
      if (found === null) throw new CairnError('ERR_NOT_FOUND', `no iteration with a pre-snapshot under ${path.join(root, ITERATIONS_DIR)}; call cairn_session_pre first`);
      const iterationDir = containedPath(root, found);
      // The pre-snapshot is read back: a planted link must not make it come from outside the root.
      const preFile = containedPath(root, path.join(iterationDir, PRE_SNAPSHOT_FILE));
      const pre = readPreSnapshot(preFile);
      // A finished iteration is final: no second post-snapshot, no second store record.
      assertIterationNotFinished(iterationDir);
      const post = await capturePostSnapshotAsync(root, iterationDir, { signal });
      const diff = new SnapshotManager(root).calculateDiff(pre, post);
      // The review (per-file counts, bounded patch) as `cairn session post` keeps it, beside the iteration and in the record.
      const review = (await import('../review/index.js')).reviewFinishedIteration(root, iterationDir, { pre, post, diff });
      let saved: { sessionId: string; snapshotId: string } | null = null;
      if (args.save) {
        const sessionId = args.sessionId ?? DEFAULT_SESSION_ID;
        const r = await saveIterationRecord(await store(), { iterationDir, pre, post, diff, ...(review === null ? {} : { review }) }, sessionId);
        saved = { sessionId, snapshotId: r.snapshotId };
      }
      return jsonResult({ ...iterationView({ iterationDir, pre, post, diff, review }, { limit: args.limit }), saved });
    },
  });

  tools.add('cairn_stage_write', {
    title: 'Write a stage note',
    description:
      'Write (replace) the resumable stage note of a task at <root>/datarim/snapshots/<TASK>.snapshot.md: a short markdown summary of what this stage did plus the recommended next command, for the next session to pick up. ' +
      'Call at the end of a stage. The note is capped at 8192 bytes (a longer body is cut with a marker).',
    input: {
      root: rootInput,
      task: taskInput,
      stage: z.string().min(1).describe('Stage token, e.g. plan, do, qa (lowercase, ^[a-z][a-z0-9-]{0,31}$).'),
      command: z.string().min(1).describe('The command that produced this stage, e.g. /dr-plan.'),
      capturedBy: z.enum(CAPTURED_BY_VALUES).default('agent').describe('Who wrote the note.'),
      recommendedNext: z.string().min(1).describe('The primary next command, e.g. /dr-do.'),
      body: z.string().describe('Markdown body: summary, results, next steps.'),
      options: z.array(z.string()).optional().describe('Other next options, one line each: "</dr-x> | purpose".'),
      capturedAt: z.string().optional().describe('ISO 8601 UTC time, e.g. 2026-01-31T12:00:00Z (default now).'),
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async (args) => {
      const root = allow.resolveRoot(args.root);
      // The allowlist admits the root; the stage writer keeps the note inside it (ERR_CONTAINMENT).
      const writeOptions: Parameters<typeof writeStageSnapshot>[0] = {
        root,
        task: args.task,
        stage: args.stage,
        command: args.command,
        capturedBy: args.capturedBy,
        recommendedNext: args.recommendedNext,
        body: args.body,
        env,
      };
      if (args.options !== undefined) writeOptions.options = args.options;
      if (args.capturedAt !== undefined) writeOptions.capturedAt = args.capturedAt;
      const r = await writeStageSnapshot(writeOptions);
      return jsonResult({ path: r.path, sizeBytes: r.sizeBytes, truncated: r.truncated, disabled: r.disabled });
    },
  });

  tools.add('cairn_stage_read', {
    title: 'Read a stage note',
    description: 'Read the stage note of a task (frontmatter and body). Call at the start of a session to resume where the last one stopped.',
    input: { root: rootInput, task: taskInput },
    annotations: READ_ONLY,
    run: async (args) => {
      const root = allow.resolveRoot(args.root);
      // The allowlist admits the root; the stage reader refuses a note dir that leads out of it.
      return jsonResult(await readStageSnapshotAsync(root, args.task));
    },
  });

  tools.add('cairn_store_list', {
    title: 'List stored snapshots',
    description:
      'List the sessions in the snapshot store, or, with sessionId, the history snapshot ids of one location, oldest first. ' +
      'Use it to find the iteration records cairn_session_post saved. ' +
      `Bounded: at most limit sessions or ids per call (default 100, max 1000; sessions also at most ${PAGE_CHARS / 1024} KiB); page sessions with cursor (nextCursor) and ids with startAfter (nextStartAfter).`,
    input: {
      sessionId: sessionIdInput.optional().describe('Session id ([a-z0-9_-]+); omit to list the sessions.'),
      scope: scopeInput,
      scopeId: scopeIdInput,
      limit: z.number().int().min(1).max(1000).default(100).describe('At most this many ids.'),
      startAfter: z.string().optional().describe('Return ids after this UUID v7 (exclusive cursor: the last id of the previous page).'),
      cursor: z.string().optional().describe('Sessions only: nextCursor of the previous page; omit for the first.'),
    },
    annotations: READ_ONLY,
    run: async (args) => {
      const storage = await store();
      if (args.sessionId === undefined) {
        const page = pageOf(await storage.listSessions(), args.cursor, args.limit);
        return jsonResult({ sessions: page.items, total: page.total, remaining: page.remaining, nextCursor: page.nextCursor });
      }
      const location = { sessionId: args.sessionId, scope: args.scope, scopeId: args.scopeId };
      const params: Parameters<ManagedSnapshotStorage['listSnapshotIds']>[0] = { location, limit: args.limit };
      if (args.startAfter !== undefined) params.startAfter = args.startAfter;
      const ids = await storage.listSnapshotIds(params);
      return jsonResult({ location, ids, nextStartAfter: ids.length === args.limit ? (ids.at(-1) ?? null) : null });
    },
  });

  tools.add('cairn_store_show', {
    title: 'Read a stored snapshot',
    description:
      'Read one snapshot of a session from the store: the latest, or a history snapshot by id (e.g. an iteration record cairn_session_post saved; find ids with cairn_store_list). ' +
      'An iteration record is summarised: counts (files, +/− lines, commits, tests), one page of a list (list: "changed" files by default, or "untracked"/"staged"/"unstaged" of side pre|post, or "artifacts"), the first commits and failing tests, counts of the other lists. ' +
      'view "raw" pages the snapshot\'s JSON text instead (any snapshot; other snapshots are shown whole when small, else raw). ' +
      `Bounded: at most limit items (default 100, max 1000) and ${PAGE_CHARS / 1024} KiB of them per page, ${PAGE_CHARS / 1024} KiB of raw text per page; the result stays under ${RESULT_BOUND / 1024} KiB of JSON. Pass nextCursor back (same list/view) for the next page.`,
    input: {
      sessionId: sessionIdInput,
      scope: scopeInput,
      scopeId: scopeIdInput,
      snapshotId: z.string().optional().describe('History snapshot id (UUID v7); omit for the latest.'),
      view: z.enum(['summary', 'raw']).default('summary').describe('"summary" (default): counts and one page of a list; "raw": one page of the snapshot\'s JSON text.'),
      list: z.enum(['changed', 'untracked', 'staged', 'unstaged', 'artifacts']).default('changed').describe('Which list of an iteration record to page.'),
      side: z.enum(['pre', 'post']).default('post').describe('For untracked/staged/unstaged: the git status at pre or at post.'),
      limit: z.number().int().min(1).max(1000).default(100).describe('Most list items in this page.'),
      cursor: z.string().optional().describe('nextCursor of the previous page (same view and list); omit for the first.'),
    },
    annotations: READ_ONLY,
    run: async (args) => {
      const location = { sessionId: args.sessionId, scope: args.scope, scopeId: args.scopeId };
      const params: Parameters<ManagedSnapshotStorage['loadSnapshot']>[0] = { location };
      if (args.snapshotId !== undefined) params.snapshotId = args.snapshotId;
      const snapshot = await (await store()).loadSnapshot(params);
      if (snapshot === null) {
        throw new CairnError('ERR_NOT_FOUND', `no snapshot ${args.snapshotId ?? 'latest'} for ${args.sessionId}/${args.scope}/${args.scopeId}; list what exists with cairn_store_list`);
      }
      const head = { location, snapshotId: args.snapshotId ?? 'latest', createdAt: snapshot.createdAt };
      const data = snapshot.data as Record<string, unknown> | null;
      const isRecord = typeof data === 'object' && data !== null && data.kind === ITERATION_RECORD_KIND && typeof data.pre === 'object' && typeof data.post === 'object' && typeof data.diff === 'object';
      const text = args.view === 'raw' || !isRecord ? JSON.stringify(snapshot) : '';
      if (args.view === 'summary' && !isRecord && text.length <= PAGE_CHARS) return jsonResult({ ...head, kind: null, snapshot });
      if (args.view === 'raw' || !isRecord) {
        // Pages of the JSON text, cut at PAGE_CHARS; the cursor is the character offset of the next page.
        const start = cursorStart(args.cursor, text.length);
        const end = Math.min(text.length, start + PAGE_CHARS);
        return jsonResult({ ...head, kind: isRecord ? ITERATION_RECORD_KIND : null, raw: { text: text.slice(start, end), chars: text.length, remaining: text.length - end, nextCursor: end < text.length ? String(end) : null } });
      }
      const parts = data as unknown as IterationParts & { summary?: unknown; review?: { files?: unknown; notCaptured?: unknown } };
      // data.summary and data.review are kept apart in the record (see saveIterationRecord).
      const review = parts.review !== undefined && parts.review !== null ? { ...(parts.review as object), summary: parts.summary } : null;
      const view = iterationView({ ...parts, review: review as IterationParts['review'] }, { list: args.list, side: args.side, limit: args.limit, cursor: args.cursor });
      return jsonResult({ ...head, kind: ITERATION_RECORD_KIND, ...view });
    },
  });

  tools.add('cairn_session_restore', {
    title: 'Restore an iteration (dry run unless told)',
    description:
      'Puts the working tree back to an iteration\'s pre state (undoes what it did) or its post state. By DEFAULT THIS IS A DRY RUN: it returns what would change (per-file +/- lines), conflicts and commits, and changes nothing; pass dryRun: false to apply. ' +
      'Only paths cairn inventoried change (never ignored files, .git or .cairn; commits stay). A path someone changed since cairn recorded it is a conflict and nothing is changed unless force: true (then its content is kept). undo: true reverts the last restore. ' +
      `Bounded: at most limit changes (default 100, max 1000) and ${PAGE_CHARS / 1024} KiB of them with totals; a dry run pages on with cursor (nextCursor); conflicts, notRestorable and commits show their first 100 with totals; the result stays under ${RESULT_BOUND / 1024} KiB of JSON.`,
    input: {
      root: rootInput,
      iteration: z.string().min(1).optional().describe('Iteration number ("3" or "003") or directory; default the latest.'),
      to: z.enum(['pre', 'post']).default('pre').describe('"pre" (default): as before the iteration; "post": as the iteration left it.'),
      dryRun: z.boolean().default(true).describe('Default true: report only. false applies the restore.'),
      force: z.boolean().default(false).describe('Also restore paths changed since cairn recorded them (their content is kept for undo).'),
      undo: z.boolean().default(false).describe('Revert the most recent restore instead (iteration and to are then ignored).'),
      limit: z.number().int().min(1).max(1000).default(100).describe('Most changes listed.'),
      cursor: z.string().optional().describe('Dry run: nextCursor of the previous page of changes.'),
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    run: async (args) => {
      const root = allow.resolveRoot(args.root);
      assertCairnDirContained(root);
      const { restoreIteration, undoLastRestore } = await import('../rewind/index.js');
      const common = { root, cwd: root, dryRun: args.dryRun, force: args.force };
      const result = args.undo ? await undoLastRestore(common) : await restoreIteration({ ...common, to: args.to, ...(args.iteration === undefined ? {} : { iteration: args.iteration }) });
      const changes = pageOf(result.changes, args.cursor, args.limit);
      const capped = <T>(list: readonly T[]) => shortList(list, 100);
      const conflicts = capped(result.conflicts);
      const notRestorable = capped(result.notRestorable);
      const commits = capped(result.commits);
      return jsonResult({
        ...result,
        changes: changes.items,
        changesPage: { total: changes.total, remaining: changes.remaining, nextCursor: changes.nextCursor },
        conflicts: conflicts.items,
        notRestorable: notRestorable.items,
        commits: commits.items,
        totals: { changes: changes.total, conflicts: conflicts.total, notRestorable: notRestorable.total, commits: commits.total },
        alsoUndoes: capped(result.alsoUndoes).items,
      });
    },
  });

  addReviewTools(tools, allow, rootInput);

  tools.install();

  const schemaText = JSON.stringify(RepoSnapshotSchema, null, 2);
  for (const [uri, name] of [
    ['axiom://schema/RepoSnapshot', 'RepoSnapshot schema (axiom)'],
    ['cairn://schema/RepoSnapshot', 'RepoSnapshot schema'],
  ] as const) {
    server.registerResource(
      name,
      uri,
      { title: 'RepoSnapshot JSON Schema', description: 'JSON Schema (draft 2020-12) of the document cairn_repo_snapshot returns as structuredContent.', mimeType: 'application/schema+json' },
      () => ({ contents: [{ uri, mimeType: 'application/schema+json', text: schemaText }] }),
    );
  }

  const close = server.close.bind(server);
  server.close = async () => {
    await close();
    const opened = storePromise;
    storePromise = undefined;
    if (opened) await (await opened.catch(() => undefined))?.close();
  };
  return server;
}
