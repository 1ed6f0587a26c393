/**
 * One hook call of an agent: its stdin document in, at most one JSON document out, and what it
 * did in the hook log. The turn model:
 * - turn start (Claude Code `UserPromptSubmit`, …): `session pre`, unless an iteration of this agent
 *   session is still open (an interrupted turn: this turn joins it);
 * - turn end (`Stop`, …) and session end: `session post` of the session's open iteration, saved to
 *   the store under the agent's session id with its transcript path;
 * - session start: the latest stage note and a two-line summary of the last iteration, as context.
 * The hooks of one agent session take a lock, so concurrent calls never open two iterations or
 * post one twice. Nothing here throws to the caller: errors are logged and the agent goes on.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainedDir, readFileWithin, writeFileWithin } from '../core/contained-dir.js';
import { acquireDirLock, type DirLock } from '../core/lock.js';
import { findProjectRoot } from '../core/root.js';
import { loadConfig, configuredStateDir, configuredStore, type CairnConfig } from '../config/index.js';
import { storeSessionId, type AgentSpec, type HookAction, type HookPayload } from './agents.js';
import { appendHookLog, type HookLogEntry } from './log.js';
import { asManagerClass, residentManagerFactory } from '../daemon/serving.js';
import { timeoutSeconds } from './budget.js';

export { timeoutSeconds };

export const AGENT_FILE = 'agent.json';

export interface AgentIteration {
  agent: string;
  sessionId: string;
  transcriptPath?: string;
  startedAt: string;
}

export interface HookOutcome {
  /** The document to print on stdout, if any. */
  output: unknown;
  entry: HookLogEntry;
  root: string | null;
}

type SessionLib = typeof import('../session/index.js');

const DEFAULT_STAGE_DIR = path.join('datarim', 'snapshots');

function hash(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** An iteration's agent.json (no link followed below the project root), or null. */
export function readAgentFile(dir: string, root: string): AgentIteration | null {
  try {
    const bytes = readFileWithin(path.join(dir, AGENT_FILE), root, { maxBytes: 64 * 1024 });
    if (bytes === null) return null;
    const doc = JSON.parse(bytes.toString('utf8')) as AgentIteration;
    return typeof doc === 'object' && doc !== null && typeof doc.sessionId === 'string' ? doc : null;
  } catch {
    return null;
  }
}

/** The open iterations (pre, no post) this agent session started, oldest first. */
export function openIterationsOf(lib: SessionLib, root: string, agent: string, sessionId: string): string[] {
  return lib.openIterationDirs(root).filter((dir) => {
    const a = readAgentFile(dir, root);
    return a !== null && a.agent === agent && a.sessionId === sessionId;
  });
}

function managerOptions(config: CairnConfig, env: NodeJS.ProcessEnv, phase: 'pre' | 'post'): import('../session/index.js').SnapshotManagerOptions {
  const options: import('../session/index.js').SnapshotManagerOptions = {};
  const stateDir = phase === 'pre' ? configuredStateDir(config, env, undefined) : undefined;
  if (stateDir !== undefined) options.stateDir = stateDir;
  if (config.exclude !== undefined) options.exclude = config.exclude;
  if (config.contentCap !== undefined) options.contentCapBytes = config.contentCap;
  return options;
}

function turnStart(lib: SessionLib, root: string, config: CairnConfig, agent: AgentSpec, p: HookPayload, env: NodeJS.ProcessEnv): Pick<HookLogEntry, 'did' | 'iteration'> {
  const open = openIterationsOf(lib, root, agent.id, p.sessionId);
  if (open.length > 0) return { did: 'joined', iteration: path.basename(open.at(-1)!) };
  const dir = lib.createNextIterationDir(root);
  const record: AgentIteration = { agent: agent.id, sessionId: p.sessionId, startedAt: new Date().toISOString() };
  if (p.transcriptPath !== undefined) record.transcriptPath = p.transcriptPath;
  writeFileWithin(path.join(dir, AGENT_FILE), root, `${JSON.stringify(record, null, 2)}\n`, { exclusive: true });
  new lib.SnapshotManager(root, managerOptions(config, env, 'pre')).capturePreSnapshot(root, dir);
  return { did: 'pre', iteration: path.basename(dir) };
}

async function turnEnd(lib: SessionLib, root: string, config: CairnConfig, agent: AgentSpec, p: HookPayload, env: NodeJS.ProcessEnv): Promise<Pick<HookLogEntry, 'did' | 'iteration' | 'message'>> {
  const open = openIterationsOf(lib, root, agent.id, p.sessionId);
  const dir = open.at(-1);
  if (dir === undefined) return { did: 'nothing', message: 'no open iteration of this session (hooks installed mid-turn, or the turn start failed)' };
  const { openStore } = await import('../store/open.js');
  // The store is opened first: a bad store fails before the post-snapshot is written.
  const spec = configuredStore(config, root, env, undefined) ?? path.join(root, '.cairn', 'store');
  const storage = await openStore(spec, { cwd: root, env, within: root });
  try {
    const manager = new lib.SnapshotManager(root, managerOptions(config, env, 'post'));
    const post = manager.capturePostSnapshot(root, dir);
    const pre = lib.readPreSnapshot(path.join(dir, lib.PRE_SNAPSHOT_FILE), root);
    const diff = manager.calculateDiff(pre, post);
    const started = readAgentFile(dir, root);
    const agentInfo: { name: string; sessionId: string; transcriptPath?: string } = { name: agent.id, sessionId: p.sessionId };
    const transcript = p.transcriptPath ?? started?.transcriptPath;
    if (transcript !== undefined) agentInfo.transcriptPath = transcript;
    // The review (per-file counts, patch) as `session post` keeps it; a review that cannot be built never loses the record.
    let review: unknown = null;
    try {
      review = (await import('../review/index.js')).reviewFinishedIteration(root, dir, { pre, post, diff });
    } catch {
      review = null;
    }
    await lib.saveIterationRecord(storage, { iterationDir: dir, pre, post, diff, agent: agentInfo, ...(review === null ? {} : { review }) }, storeSessionId(p.sessionId, hash));
  } finally {
    await storage.close();
  }
  return { did: 'post', iteration: path.basename(dir) };
}

/** The newest stage note under the stage dir, as `{file, text}`, or null. No link is followed below the root. */
function latestStageNote(root: string, stageDir: string): { file: string; text: string; stage?: string; next?: string } | null {
  const rel = path.relative(root, path.resolve(root, stageDir));
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return null;
  let dir: ContainedDir | null = null;
  try {
    dir = ContainedDir.open(root, rel.split(path.sep));
    if (dir === null) return null;
    let newest: { name: string; mtime: number } | null = null;
    for (const e of dir.entries()) {
      if (!e.isFile() || !e.name.endsWith('.snapshot.md')) continue;
      const mtime = dir.lstat(e.name)?.mtimeMs ?? 0;
      if (newest === null || mtime > newest.mtime || (mtime === newest.mtime && e.name > newest.name)) newest = { name: e.name, mtime };
    }
    if (newest === null) return null;
    const file = dir.shown(newest.name);
    const text = dir.readFile(newest.name, { maxBytes: 64 * 1024 })?.toString('utf8');
    if (text === undefined) return null;
    const fm = /^---\n([\s\S]*?)\n---\n?([\s\S]*)$/.exec(text);
    const field = (name: string): string | undefined => {
      const m = fm === null ? null : new RegExp(`^${name}:\\s*"?([^"\\n]*)"?\\s*$`, 'm').exec(fm[1]!);
      return m?.[1] || undefined;
    };
    const note: { file: string; text: string; stage?: string; next?: string } = { file: path.relative(root, file), text: (fm?.[2] ?? text).trim() };
    const stage = field('stage');
    const next = field('recommended_next');
    if (stage !== undefined) note.stage = stage;
    if (next !== undefined) note.next = next;
    return note;
  } catch {
    return null; // a link, a file or something unreadable where the notes should be: no context
  } finally {
    dir?.close();
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Two lines on the newest finished iteration: what changed, and how to look at it or undo it. */
export function lastIterationSummary(lib: SessionLib, root: string): string[] | null {
  const dir = lib.latestIterationDir(root, { needPost: true });
  if (dir === null) return null;
  const pre = lib.readPreSnapshot(path.join(dir, lib.PRE_SNAPSHOT_FILE), root);
  const post = lib.readPostSnapshot(path.join(dir, lib.POST_SNAPSHOT_FILE), root);
  const diff = new lib.SnapshotManager(root).calculateDiff(pre, post);
  const n = path.basename(dir);
  const added = diff.filesAdded.length;
  const modified = diff.filesModified.length;
  const deleted = diff.filesDeleted.length;
  const tests = post.tests.summary;
  const testText =
    tests && typeof tests.passed === 'number' ? `tests ${tests.passed} passed, ${tests.failed ?? 0} failed` : post.tests.found ? `tests found in ${path.relative(root, post.tests.file ?? '')}` : 'no test results';
  const changed = [...diff.filesAdded, ...diff.filesModified, ...diff.filesDeleted];
  const shown = changed.slice(0, 5).join(', ') + (changed.length > 5 ? ` and ${changed.length - 5} more` : '');
  return [
    `Last iteration ${n} (${post.timestamp}, ${diff.duration}): ${plural(added + modified + deleted, 'file')} changed (${added} added, ${modified} modified, ${deleted} deleted), ${plural(diff.commitCount, 'commit')}, ${testText}.`,
    `${changed.length > 0 ? `Changed: ${shown}. ` : ''}Review it with \`cairn session diff ${n}\` or \`cairn session report\`; put the files back with \`cairn session restore ${n}\`.`,
  ];
}

function sessionStartContext(lib: SessionLib, root: string, config: CairnConfig): string | null {
  if (config.hooks?.sessionStartContext === false) return null;
  const parts: string[] = [];
  const note = latestStageNote(root, config.hooks?.stageDir ?? DEFAULT_STAGE_DIR);
  if (note !== null) {
    const about = [note.stage === undefined ? null : `stage ${note.stage}`, note.next === undefined ? null : `recommended next: ${note.next}`].filter(Boolean).join(', ');
    parts.push(`Latest stage note (${note.file}${about === '' ? '' : `; ${about}`}):\n${note.text}`);
  }
  const summary = lastIterationSummary(lib, root);
  if (summary !== null) parts.push(summary.join('\n'));
  if (parts.length === 0) return null;
  return `cairn records this project's agent turns.\n\n${parts.join('\n\n')}\n`;
}

/** Lets later shell commands of this agent session (`cairn run`) find the session's iteration. */
function exportSessionForShell(agent: AgentSpec, p: HookPayload, env: NodeJS.ProcessEnv): void {
  const file = agent.envFileVariable === undefined ? undefined : env[agent.envFileVariable];
  if (!file) return;
  const quoted = `'${p.sessionId.replace(/'/g, "'\\''")}'`;
  fs.appendFileSync(file, `export CAIRN_AGENT_SESSION=${quoted}\n`);
}

/**
 * Handles one hook call. `stdin` is what the agent wrote; `cwd` and `env` are the process's.
 * Resolves to what to print and what was logged; never rejects.
 */
export async function handleHook(agent: AgentSpec, stdin: string, cwd: string, env: NodeJS.ProcessEnv): Promise<HookOutcome> {
  const started = Date.now();
  const entry: HookLogEntry = { time: new Date(started).toISOString(), level: 'info', agent: agent.id };
  let root: string | null = null;
  let output: unknown = null;
  let lock: DirLock | null = null;
  let locks: ContainedDir | null = null;
  let prefetched: import('../session/capture/git-prefetch.js').PrefetchedGitStatus | null = null;
  try {
    let doc: unknown;
    try {
      doc = JSON.parse(stdin);
    } catch {
      root = findProjectRoot(env.CLAUDE_PROJECT_DIR || cwd).root;
      throw new Error(`the hook's stdin is not JSON (${stdin.length} bytes); nothing was recorded`);
    }
    const payload = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? agent.payload(doc as Record<string, unknown>) : null;
    if (payload === null) {
      root = findProjectRoot(env.CLAUDE_PROJECT_DIR || cwd).root;
      throw new Error('the hook\'s stdin names no session or event; nothing was recorded');
    }
    entry.event = payload.event;
    entry.session = payload.sessionId;
    root = findProjectRoot(payload.cwd !== undefined && fs.existsSync(payload.cwd) ? payload.cwd : env.CLAUDE_PROJECT_DIR || cwd).root;
    output = agent.ack(payload.event);
    const action: HookAction | undefined = Object.hasOwn(agent.events, payload.event) ? agent.events[payload.event] : undefined;
    if (action === undefined) {
      entry.did = 'nothing';
      entry.message = `event ${payload.event} is not one cairn handles`;
      return { output, entry, root };
    }
    const config = loadConfig(root).config;
    // A turn's pre or post: git status starts now and runs while the library loads (session/capture/git-prefetch.ts).
    // In `cairn daemon`, its resident manager instead (src/daemon/serving.ts).
    const resident = residentManagerFactory();
    const gitPrefetch = action === 'session-start' || resident !== null ? null : await import('../session/capture/git-prefetch.js');
    prefetched = gitPrefetch?.prefetchGitStatus(root) ?? null;
    const loaded = await import('../session/index.js');
    const lib: SessionLib =
      resident !== null ? { ...loaded, SnapshotManager: asManagerClass(resident) } : gitPrefetch === null ? loaded : { ...loaded, SnapshotManager: gitPrefetch.withPrefetchedGitStatus(loaded.SnapshotManager, prefetched) };
    if (action === 'session-start') {
      exportSessionForShell(agent, payload, env);
      const text = sessionStartContext(lib, root, config);
      const context = text === null ? null : agent.contextOutput(payload.event, text);
      if (context !== null) output = context;
      entry.did = context === null ? 'nothing' : 'context';
      return { output, entry, root };
    }
    // One agent session's hooks one at a time; bounded, so a stuck holder never stalls the agent.
    // Reached through the opened directory (no link followed below the root), as the stage lock is.
    locks = ContainedDir.require(root, ['.cairn', 'hooks', 'locks'], { create: true });
    const lockName = `${agent.id}-${hash(payload.sessionId).slice(0, 16)}`;
    lock = await acquireDirLock(locks.at(lockName), {
      timeoutMs: Math.max(1000, Math.floor((timeoutSeconds(config) * 1000) / 2)),
      releaseOnSignal: true,
      shownPath: locks.shown(lockName),
    });
    const result = action === 'turn-start' ? turnStart(lib, root, config, agent, payload, env) : await turnEnd(lib, root, config, agent, payload, env);
    Object.assign(entry, result);
    return { output, entry, root };
  } catch (e) {
    entry.level = 'error';
    entry.message = e instanceof Error ? e.message : String(e);
    return { output, entry, root };
  } finally {
    prefetched?.dispose();
    if (lock !== null) await lock.release().catch(() => false);
    locks?.close();
    entry.ms = Date.now() - started;
    if (root !== null) appendHookLog(root, entry);
  }
}
