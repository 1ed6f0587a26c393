/**
 * The agents cairn plugs into, each as its documented hook contract: where its hook settings
 * live, which of its events mean "session start", "turn start", "turn end" and "session end",
 * how its payload names the session and the directory, and how it takes context back.
 * Everything agent-specific is in this table; the rest of `src/hooks/` is shared.
 *
 * Sources (checked against each agent's current documentation; the payloads in
 * test/fixtures/hooks/ are the documented examples):
 * - Claude Code: code.claude.com/docs/en/hooks (settings.json `hooks`, stdin JSON, SessionStart
 *   `hookSpecificOutput.additionalContext`).
 * - Gemini CLI: geminicli.com/docs/hooks/reference (settings.json `hooks`, BeforeAgent/AfterAgent,
 *   timeout in milliseconds, stdout must be JSON only).
 * - Codex CLI: developers.openai.com/codex/hooks and codex-rs/hooks/schema (hooks.json, behind
 *   `[features] codex_hooks = true`; UserPromptSubmit/Stop/SessionStart).
 * - Cursor: cursor.com/docs/agent/hooks (hooks.json version 1; beforeSubmitPrompt/stop;
 *   `conversation_id`, `workspace_roots`).
 */
import * as path from 'node:path';

export type HookAction = 'session-start' | 'turn-start' | 'turn-end' | 'session-end';
export type HookScope = 'project' | 'user';

export interface HookPayload {
  event: string;
  sessionId: string;
  /** The directory the agent works in (the root is found from it). */
  cwd?: string;
  transcriptPath?: string;
}

export interface AgentSpec {
  id: string;
  name: string;
  /** `claude`: `{hooks: {Event: [{matcher?, hooks: [{type, command, timeout}]}]}}`; `cursor`: `{version: 1, hooks: {event: [{command}]}}`. */
  layout: 'claude' | 'cursor';
  settingsFile(scope: HookScope, root: string, home: string): string;
  /** The agent's event names cairn installs, and what each means. */
  events: Record<string, HookAction>;
  /** Unit of the settings' `timeout` field, or null when the agent has none. */
  timeoutUnit: 's' | 'ms' | null;
  /** Reads the agent's stdin document; null when it names no session. */
  payload(doc: Record<string, unknown>): HookPayload | null;
  /** What to print for context at session start (null: the agent takes none). */
  contextOutput(event: string, text: string): unknown;
  /** What to print on stdout for other events (null: nothing). */
  ack(event: string): unknown;
  /** Said after install: what else the user must do. */
  installNote?: string;
  /** Environment file the agent offers at session start for later shell commands. */
  envFileVariable?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function sessionPayload(doc: Record<string, unknown>): HookPayload | null {
  const sessionId = str(doc.session_id);
  const event = str(doc.hook_event_name);
  if (sessionId === undefined || event === undefined) return null;
  const p: HookPayload = { event, sessionId };
  const cwd = str(doc.cwd);
  if (cwd !== undefined) p.cwd = cwd;
  const transcript = str(doc.transcript_path);
  if (transcript !== undefined) p.transcriptPath = transcript;
  return p;
}

/** Every agent keeps its hooks in `<dir>/<file>` under the project (scope project) or the home directory (scope user). */
const settingsIn =
  (dir: string, file: string) =>
  (scope: HookScope, root: string, home: string): string =>
    path.join(scope === 'user' ? home : root, dir, file);

const additionalContext = (event: string, text: string): unknown => ({ hookSpecificOutput: { hookEventName: event, additionalContext: text } });

export const AGENTS: readonly AgentSpec[] = [
  {
    id: 'claude-code',
    name: 'Claude Code',
    layout: 'claude',
    settingsFile: settingsIn('.claude', 'settings.json'),
    events: { SessionStart: 'session-start', UserPromptSubmit: 'turn-start', Stop: 'turn-end', SessionEnd: 'session-end' },
    timeoutUnit: 's',
    payload: sessionPayload,
    contextOutput: additionalContext,
    ack: () => null,
    envFileVariable: 'CLAUDE_ENV_FILE',
  },
  {
    id: 'gemini-cli',
    name: 'Gemini CLI',
    layout: 'claude',
    settingsFile: settingsIn('.gemini', 'settings.json'),
    events: { SessionStart: 'session-start', BeforeAgent: 'turn-start', AfterAgent: 'turn-end', SessionEnd: 'session-end' },
    timeoutUnit: 'ms',
    payload: sessionPayload,
    contextOutput: additionalContext,
    // "Silence is mandatory": stdout is parsed as JSON, so every event answers with an object.
    ack: () => ({}),
  },
  {
    id: 'codex',
    name: 'Codex CLI',
    layout: 'claude',
    settingsFile: settingsIn('.codex', 'hooks.json'),
    events: { SessionStart: 'session-start', UserPromptSubmit: 'turn-start', Stop: 'turn-end' },
    timeoutUnit: 's',
    payload: sessionPayload,
    contextOutput: additionalContext,
    ack: () => null,
    installNote: 'Codex runs hooks only with `[features]\\ncodex_hooks = true` in ~/.codex/config.toml (or the project\'s .codex/config.toml); cairn does not edit that file.',
  },
  {
    id: 'cursor',
    name: 'Cursor',
    layout: 'cursor',
    settingsFile: settingsIn('.cursor', 'hooks.json'),
    events: { beforeSubmitPrompt: 'turn-start', stop: 'turn-end' },
    timeoutUnit: null,
    payload: (doc) => {
      const sessionId = str(doc.conversation_id);
      const event = str(doc.hook_event_name);
      if (sessionId === undefined || event === undefined) return null;
      const p: HookPayload = { event, sessionId };
      const roots = Array.isArray(doc.workspace_roots) ? doc.workspace_roots : [];
      const cwd = str(roots[0]) ?? str(doc.cwd);
      if (cwd !== undefined) p.cwd = cwd;
      const transcript = str(doc.transcript_path);
      if (transcript !== undefined) p.transcriptPath = transcript;
      return p;
    },
    contextOutput: () => null,
    ack: (event) => (event === 'beforeSubmitPrompt' ? { continue: true } : {}),
  },
];

export function agentById(id: string): AgentSpec | undefined {
  return AGENTS.find((a) => a.id === id);
}

/**
 * The agent's session id as a store session id (`[a-z0-9_-]+`): lower-cased, other characters as
 * `-`; an id that had to change gets a short hash of the original, so two ids never merge.
 */
export function storeSessionId(agentSessionId: string, hash: (s: string) => string): string {
  const lowered = agentSessionId.toLowerCase();
  const cleaned = lowered.replace(/[^a-z0-9_-]/g, '-').slice(0, 100);
  return cleaned === agentSessionId && cleaned !== '' ? cleaned : `${cleaned || 'session'}-${hash(agentSessionId).slice(0, 8)}`;
}
