import * as path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CairnError, isCairnError } from '../core/errors.js';
import { RepoSnapshotSchema, SNAPSHOT_MAX_BYTES_DEFAULT, SNAPSHOT_MAX_FILES_CAP, SNAPSHOT_MAX_FILES_DEFAULT, snapshotRoot } from '../inventory/index.js';
import type { RepoSnapshot } from '../inventory/index.js';
import {
  DEFAULT_SESSION_ID,
  PRE_SNAPSHOT_FILE,
  SnapshotManager,
  createNextIterationDir,
  latestIterationDir,
  readPreSnapshot,
  saveIterationRecord,
} from '../session/index.js';
import { readStageSnapshot, writeStageSnapshot } from '../stage/index.js';
import { SessionError, openStore } from '../store/index.js';
import type { ManagedSnapshotStorage, Scope } from '../store/index.js';
import { RootAllowlist } from './roots.js';

export interface CairnMcpServerOptions {
  /** Directories the client may work in (the operator's `--root` list). */
  roots: readonly string[];
  /** Store for iteration records and snapshot reads (default `file:<first root>/.cairn/store`). */
  store?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  version?: string;
}

const READ_ONLY = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;

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

const snapshotInput = {
  root: z.string().min(1).optional().describe('Absolute path of the directory to snapshot; must be (inside) an allowed root. Optional when the server has exactly one root.'),
  include: z.array(z.string().min(1)).optional().describe('Globs of files to keep (`**` any depth, `*` within a segment, `?`), e.g. ["src/**"]. Default: everything.'),
  exclude: z.array(z.string().min(1)).optional().describe('Globs to drop; a matching directory is not entered, e.g. ["vendor/**"].'),
  maxFiles: z.number().int().min(1).max(SNAPSHOT_MAX_FILES_CAP).default(SNAPSHOT_MAX_FILES_DEFAULT).describe('Stop after this many files (truncated: true).'),
  maxBytes: z.number().int().min(0).default(SNAPSHOT_MAX_BYTES_DEFAULT).describe('Stop before the sum of file sizes would exceed this.'),
  followSymlinks: z.literal(false).default(false).describe('Symlinks are never followed into directories; only false is accepted.'),
  respectGitignore: z.boolean().default(true).describe('Honour .gitignore files at every level, as git does.'),
  withContentDigest: z.boolean().default(true).describe('Hash file contents (sha256); false records sizes only (fast on huge trees).'),
};

type SnapshotArgs = {
  root?: string | undefined;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
  maxFiles: number;
  maxBytes: number;
  followSymlinks: false;
  respectGitignore: boolean;
  withContentDigest: boolean;
};

function errorResult(e: unknown): CallToolResult {
  let payload: Record<string, unknown>;
  if (isCairnError(e)) payload = e.toJSON();
  else if (e instanceof SessionError) payload = { code: e.code, message: e.message };
  else if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    payload = { code: typeof code === 'string' && code.startsWith('ERR_') ? code : 'ERR_INTERNAL', message: e.message };
  } else payload = { code: 'ERR_INTERNAL', message: String(e) };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(payload) }] };
}

function jsonResult(value: Record<string, unknown>, text: unknown = value): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(text) }], structuredContent: value };
}

async function guarded(run: () => Promise<CallToolResult> | CallToolResult): Promise<CallToolResult> {
  try {
    return await run();
  } catch (e) {
    return errorResult(e);
  }
}

/** Builds the cairn MCP server (not yet connected to a transport). */
export function createCairnMcpServer(options: CairnMcpServerOptions): McpServer {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const allow = RootAllowlist.fromPaths(options.roots, cwd);
  const firstRoot = allow.roots[0] as string;
  const server = new McpServer({ name: 'cairn', version: options.version ?? '0.1.0' }, { capabilities: { tools: {}, resources: {} } });

  let storePromise: Promise<ManagedSnapshotStorage> | undefined;
  const store = (): Promise<ManagedSnapshotStorage> => {
    storePromise ??= openStore(options.store ?? `file:${path.join(firstRoot, '.cairn', 'store')}`, { cwd: firstRoot, env });
    // A failed open is not cached: the next call tries again.
    storePromise.catch(() => {
      storePromise = undefined;
    });
    return storePromise;
  };

  const snapshotHandler = (args: SnapshotArgs): Promise<CallToolResult> =>
    guarded(async () => {
      const root = allow.resolveRoot(args.root);
      const snapshotOptions: Parameters<typeof snapshotRoot>[1] = {
        maxFiles: args.maxFiles,
        maxBytes: args.maxBytes,
        followSymlinks: args.followSymlinks,
        respectGitignore: args.respectGitignore,
        withContentDigest: args.withContentDigest,
      };
      if (args.include !== undefined) snapshotOptions.include = args.include;
      if (args.exclude !== undefined) snapshotOptions.exclude = args.exclude;
      const snap: RepoSnapshot = await snapshotRoot(root, snapshotOptions);
      const projection = {
        snapshotDigest: snap.snapshotDigest,
        counts: snap.body.counts,
        truncated: snap.body.truncated,
        paths: snap.body.files.slice(0, 20).map((f) => f.path),
      };
      return jsonResult(snap as unknown as Record<string, unknown>, projection);
    });

  const snapshotDescription =
    'Deterministic, content-addressed inventory of a directory (paths, sizes, sha256, mode, kind; .gitignore honoured; .git/ skipped). ' +
    'Use before and after changing files to get real pre-image digests and to see exactly what changed (diff two results by path). Read-only.';
  server.registerTool('cairn_repo_snapshot', { title: 'Repo snapshot', description: snapshotDescription, inputSchema: snapshotInput, outputSchema: repoSnapshotOutput, annotations: READ_ONLY }, snapshotHandler);
  server.registerTool(
    'axiom_repo_snapshot',
    { title: 'Repo snapshot (axiom-compatible name)', description: `${snapshotDescription} Same tool as cairn_repo_snapshot, under the name axiom clients call.`, inputSchema: snapshotInput, outputSchema: repoSnapshotOutput, annotations: READ_ONLY },
    snapshotHandler,
  );

  server.registerTool(
    'cairn_session_pre',
    {
      title: 'Start an iteration',
      description:
        'Call once BEFORE you start a unit of work on a project: records git state, key files, the agent state dir and a whole-tree inventory, so cairn_session_post can later report everything you changed (committed or not). Returns the iteration directory to pass to cairn_session_post.',
      inputSchema: {
        root: z.string().min(1).optional().describe('Absolute project root inside an allowed root (optional with a single root).'),
        iterationDir: z.string().min(1).optional().describe('Where to keep the iteration, relative to the root (default: next numbered folder under .cairn/iterations/).'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args: { root?: string | undefined; iterationDir?: string | undefined }) =>
      guarded(() => {
        const root = allow.resolveRoot(args.root);
        const iterationDir = args.iterationDir !== undefined ? RootAllowlist.containedPath(root, args.iterationDir) : createNextIterationDir(root);
        const pre = new SnapshotManager(root).capturePreSnapshot(root, iterationDir);
        const summary = {
          iterationDir,
          timestamp: pre.timestamp,
          branch: pre.git.branch,
          commit: pre.git.commit,
          keyFiles: pre.keyFiles.length,
          inventoryFiles: pre.inventory?.files ?? null,
        };
        return jsonResult(summary);
      }),
  );

  server.registerTool(
    'cairn_session_post',
    {
      title: 'Finish an iteration',
      description:
        'Call once AFTER a unit of work started with cairn_session_pre: returns what the iteration did (files added/modified/deleted, commits, state-dir artifacts, test results found, duration) and saves the record to the snapshot store.',
      inputSchema: {
        root: z.string().min(1).optional().describe('Absolute project root inside an allowed root (optional with a single root).'),
        iterationDir: z.string().min(1).optional().describe('The iteration directory cairn_session_pre returned (default: the latest one).'),
        sessionId: z.string().regex(/^[a-z0-9_-]+$/).optional().describe(`Store session id (default "${DEFAULT_SESSION_ID}").`),
        save: z.boolean().default(true).describe('Save the iteration record to the store.'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args: { root?: string | undefined; iterationDir?: string | undefined; sessionId?: string | undefined; save: boolean }) =>
      guarded(async () => {
        const root = allow.resolveRoot(args.root);
        const iterationDir = args.iterationDir !== undefined ? RootAllowlist.containedPath(root, args.iterationDir) : latestIterationDir(root);
        if (iterationDir === null) throw new CairnError('ERR_NOT_FOUND', 'no iteration with a pre-snapshot; call cairn_session_pre first');
        const manager = new SnapshotManager(root);
        const post = manager.capturePostSnapshot(root, iterationDir);
        const pre = readPreSnapshot(path.join(iterationDir, PRE_SNAPSHOT_FILE));
        const diff = manager.calculateDiff(pre, post);
        let saved: { sessionId: string; snapshotId: string } | null = null;
        if (args.save) {
          const sessionId = args.sessionId ?? DEFAULT_SESSION_ID;
          const r = await saveIterationRecord(await store(), { iterationDir, pre, post, diff }, sessionId);
          saved = { sessionId, snapshotId: r.snapshotId };
        }
        return jsonResult({ iterationDir, diff: diff, saved });
      }),
  );

  const taskId = z.string().describe('Task id, e.g. TUNE-0042 or DEV-1438-fix-auth (^[A-Z]{2,10}-[0-9]{4}(-[A-Za-z0-9]+)*$).');
  server.registerTool(
    'cairn_stage_write',
    {
      title: 'Write a stage note',
      description:
        'Write (overwrite) the resumable stage note of a task: a short markdown summary of what this stage did plus the recommended next command, for the next session to pick up. Capped at 8192 bytes (longer bodies are truncated with a marker).',
      inputSchema: {
        root: z.string().min(1).optional().describe('Absolute project root inside an allowed root (optional with a single root).'),
        task: taskId,
        stage: z.string().describe('Stage token, e.g. plan, do, qa, verify (lowercase, ^[a-z][a-z0-9-]{0,31}$).'),
        command: z.string().describe('The command that produced this stage, e.g. /dr-plan.'),
        capturedBy: z.enum(['agent', 'operator']).default('agent'),
        recommendedNext: z.string().describe('The primary next command, e.g. /dr-do.'),
        body: z.string().describe('Markdown body: summary, results, next steps.'),
        options: z.array(z.string()).optional().describe('Other next options, one line each: "</dr-x> | purpose".'),
        capturedAt: z.string().optional().describe('ISO 8601 UTC time (default now).'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args: {
      root?: string | undefined;
      task: string;
      stage: string;
      command: string;
      capturedBy: 'agent' | 'operator';
      recommendedNext: string;
      body: string;
      options?: string[] | undefined;
      capturedAt?: string | undefined;
    }) =>
      guarded(async () => {
        const root = allow.resolveRoot(args.root);
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
        return jsonResult({ path: r.path, sizeBytes: r.sizeBytes, truncated: r.truncated });
      }),
  );

  server.registerTool(
    'cairn_stage_read',
    {
      title: 'Read a stage note',
      description: 'Read the stage note of a task (frontmatter and body): call at the start of a session to resume where the last one stopped.',
      inputSchema: { root: z.string().min(1).optional().describe('Absolute project root inside an allowed root (optional with a single root).'), task: taskId },
      annotations: READ_ONLY,
    },
    (args: { root?: string | undefined; task: string }) =>
      guarded(() => {
        const root = allow.resolveRoot(args.root);
        const note = readStageSnapshot(root, args.task);
        return jsonResult(note as unknown as Record<string, unknown>);
      }),
  );

  const locationInput = {
    sessionId: z.string().describe('Session id ([a-z0-9_-]+).'),
    scope: z.enum(['agent', 'multiAgent']).default('agent'),
    scopeId: z.string().default('iterations').describe('Agent or orchestrator id (default "iterations", where cairn_session_post saves).'),
  };
  server.registerTool(
    'cairn_store_list',
    {
      title: 'List stored snapshots',
      description: 'List sessions in the snapshot store, or, with sessionId, the history snapshot ids of one location (oldest first; page with limit/startAfter).',
      inputSchema: {
        sessionId: z.string().optional().describe('Session id; omit to list sessions.'),
        scope: locationInput.scope,
        scopeId: locationInput.scopeId,
        limit: z.number().int().min(1).max(1000).default(100),
        startAfter: z.string().optional().describe('Return ids after this UUID v7 (exclusive cursor).'),
      },
      annotations: READ_ONLY,
    },
    (args: { sessionId?: string | undefined; scope: Scope; scopeId: string; limit: number; startAfter?: string | undefined }) =>
      guarded(async () => {
        const storage = await store();
        if (args.sessionId === undefined) return jsonResult({ sessions: await storage.listSessions() });
        const location = { sessionId: args.sessionId, scope: args.scope, scopeId: args.scopeId };
        const params: Parameters<ManagedSnapshotStorage['listSnapshotIds']>[0] = { location, limit: args.limit };
        if (args.startAfter !== undefined) params.startAfter = args.startAfter;
        return jsonResult({ location, ids: await storage.listSnapshotIds(params) });
      }),
  );

  server.registerTool(
    'cairn_store_show',
    {
      title: 'Read a stored snapshot',
      description: 'Read one snapshot of a session from the store: the latest, or a history snapshot by id (e.g. an iteration record saved by cairn_session_post).',
      inputSchema: { ...locationInput, snapshotId: z.string().optional().describe('History id; omit for the latest.') },
      annotations: READ_ONLY,
    },
    (args: { sessionId: string; scope: Scope; scopeId: string; snapshotId?: string | undefined }) =>
      guarded(async () => {
        const location = { sessionId: args.sessionId, scope: args.scope, scopeId: args.scopeId };
        const params: Parameters<ManagedSnapshotStorage['loadSnapshot']>[0] = { location };
        if (args.snapshotId !== undefined) params.snapshotId = args.snapshotId;
        const snapshot = await (await store()).loadSnapshot(params);
        if (snapshot === null) throw new CairnError('ERR_NOT_FOUND', `no snapshot ${args.snapshotId ?? 'latest'} for ${args.sessionId}/${args.scope}/${args.scopeId}`);
        return jsonResult({ location, snapshotId: args.snapshotId ?? 'latest', snapshot: snapshot });
      }),
  );

  const schemaText = JSON.stringify(RepoSnapshotSchema, null, 2);
  for (const uri of ['axiom://schema/RepoSnapshot', 'cairn://schema/RepoSnapshot']) {
    server.registerResource(
      uri === 'axiom://schema/RepoSnapshot' ? 'RepoSnapshot schema (axiom)' : 'RepoSnapshot schema',
      uri,
      { title: 'RepoSnapshot JSON Schema', description: 'JSON Schema (draft 2020-12) of the document cairn_repo_snapshot returns.', mimeType: 'application/schema+json' },
      () => ({ contents: [{ uri, mimeType: 'application/schema+json', text: schemaText }] }),
    );
  }

  const close = server.close.bind(server);
  server.close = async () => {
    await close();
    if (storePromise) await (await storePromise.catch(() => undefined))?.close();
  };
  return server;
}
