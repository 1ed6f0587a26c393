/**
 * Gemini CLI, Codex CLI and Cursor through their documented contracts: installed into their own
 * settings files, a turn driven by their documented payloads through the installed command,
 * recorded under their session id; context in each agent's own output format.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { trackedDirs, write } from '../session/helpers.js';
import { git, installedCommand, payload, runHookCommand, storedRecords } from './support.js';

const { repo, dir: scratch } = trackedDirs();

function project(): { root: string; env: NodeJS.ProcessEnv } {
  const root = repo();
  write(root, 'a.txt', 'a\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'init');
  return { root, env: { XDG_CACHE_HOME: scratch('cairn-cache-'), HOME: scratch('home-'), CLAUDE_PROJECT_DIR: '' } };
}

const cli = (args: string[], cwd: string, env: NodeJS.ProcessEnv) => runCli(args, { cwd, env: { CAIRN_STORE: '', ...env } });

const CASES = [
  { agent: 'gemini-cli', file: '.gemini/settings.json', start: 'BeforeAgent', end: 'AfterAgent', sessionStart: 'SessionStart', session: '3f2c7a1e-8b9d-4c5e-a6f7-0123456789ab', timeout: 30_000 },
  { agent: 'codex', file: '.codex/hooks.json', start: 'UserPromptSubmit', end: 'Stop', sessionStart: 'SessionStart', session: '11111111-1111-4111-8111-111111111111', timeout: 30 },
  { agent: 'cursor', file: '.cursor/hooks.json', start: 'beforeSubmitPrompt', end: 'stop', sessionStart: null, session: 'conv-123', timeout: undefined },
] as const;

describe.each(CASES)('$agent', ({ agent, file, start, end, sessionStart, session, timeout }) => {
  it('records a turn under its session id through its installed hooks, and answers in its own format', () => {
    const { root, env } = project();
    const install = cli(['hooks', 'install', agent], root, env);
    expect(install.status, install.stderr).toBe(0);
    const settings = path.join(root, file);
    const doc = JSON.parse(fs.readFileSync(settings, 'utf8')) as { version?: number; hooks: Record<string, { hooks?: { timeout?: number }[]; command?: string }[]> };
    if (agent === 'cursor') {
      expect(doc.version).toBe(1);
      expect(Object.keys(doc.hooks)).toEqual(['beforeSubmitPrompt', 'stop']);
    } else expect(doc.hooks[start]![0]!.hooks![0]!.timeout).toBe(timeout);

    const where = agent === 'cursor' ? { workspace_roots: [root] } : { cwd: root };
    const hook = (event: string, cwd = root) => runHookCommand(installedCommand(settings, event), JSON.stringify(payload(agent, event, where)), cwd, env);
    const begin = hook(start);
    expect(begin.status).toBe(0);
    if (agent === 'gemini-cli') expect(JSON.parse(begin.stdout)).toEqual({});
    else if (agent === 'cursor') expect(JSON.parse(begin.stdout)).toEqual({ continue: true });
    else expect(begin.stdout).toBe('');
    write(root, 'b.txt', 'b\n');
    // Codex's Stop carries no cwd: the hook runs in the project, as Codex runs it.
    const finish = agent === 'codex' ? runHookCommand(installedCommand(settings, end), JSON.stringify(payload(agent, end)), root, env) : hook(end);
    expect(finish.status).toBe(0);
    const records = storedRecords(root, session);
    expect(records).toHaveLength(1);
    expect(records[0]!.data.diff.filesAdded).toEqual(['b.txt']);
    expect(records[0]!.data.agent).toMatchObject({ name: agent, sessionId: session });

    if (sessionStart !== null) {
      const r = runHookCommand(installedCommand(settings, sessionStart), JSON.stringify(payload(agent, sessionStart, { cwd: root, session_id: 'another' })), root, env);
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
      expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
      expect(out.hookSpecificOutput.additionalContext).toContain('Last iteration 001');
    }
    expect(cli(['hooks', 'uninstall', agent], root, env).status).toBe(0);
    expect(fs.existsSync(settings)).toBe(false);
  });
});
