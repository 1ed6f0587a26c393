/**
 * A simulated Claude Code session through the real hook entry point: cairn's hooks installed in
 * the project's settings, each event's documented payload piped into the command the settings
 * hold, run through a shell as the agent runs it. Turns edit files by tool and by bash, commit,
 * run the tests through `cairn run`; one turn's tests fail. The store ends with one record per
 * turn under the agent's session id, and the next session starts with the stage note.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { trackedDirs, write } from '../session/helpers.js';
import { git, installedCommand, payload, runHookCommand, runHookCommandAsync, storedRecords } from './support.js';

const { repo, dir: scratch } = trackedDirs();

function project(): { root: string; env: NodeJS.ProcessEnv } {
  const root = repo();
  const env = { XDG_CACHE_HOME: scratch('cairn-cache-'), HOME: scratch('home-'), CLAUDE_PROJECT_DIR: root };
  write(root, 'src/math.mjs', 'export const double = (n) => n * 2;\n');
  write(root, 'test/math.test.mjs', "import test from 'node:test';\nimport assert from 'node:assert';\nimport { double } from '../src/math.mjs';\ntest('double', () => assert.strictEqual(double(2), 4));\n");
  write(root, 'package.json', '{"name":"demo","type":"module"}\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'init');
  return { root, env };
}

const cli = (args: string[], cwd: string, env: NodeJS.ProcessEnv) => runCli(args, { cwd, env: { CAIRN_STORE: '', ...env } });

describe('a Claude Code session through the installed hooks', () => {
  it('records one iteration per turn under the agent session id, with diffs and tests, and resumes the next session from the stage note', () => {
    const { root, env } = project();
    expect(cli(['hooks', 'install', 'claude-code'], root, env).status).toBe(0);
    const settings = path.join(root, '.claude', 'settings.json');
    const hook = (event: string, patch: Record<string, unknown> = {}, cwd = root) => {
      const r = runHookCommand(installedCommand(settings, event), JSON.stringify(payload('claude-code', event, { cwd, ...patch })), cwd, env);
      expect(r.status, r.stderr).toBe(0);
      return r;
    };
    const session = '6f1c9a2e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';
    const transcript = path.join(env.HOME!, '.claude', 'projects', 'demo', `${session}.jsonl`);
    const ids = { session_id: session, transcript_path: transcript };
    const run = (args: string[]) => cli(['run', '--', ...args], root, { ...env, CAIRN_AGENT_SESSION: session });

    // Start: nothing to resume yet, so nothing on stdout.
    expect(hook('SessionStart', ids).stdout).toBe('');

    // Turn 1: a file edited by a tool, one written by bash, tests pass.
    hook('UserPromptSubmit', ids);
    write(root, 'src/math.mjs', 'export const double = (n) => n * 2;\nexport const triple = (n) => n * 3;\n');
    expect(runHookCommand("printf 'notes\\n' > NOTES.md", '', root).status).toBe(0);
    expect(run(['node', '--test']).status).toBe(0);
    hook('Stop', ids);

    // Turn 2: a new file, committed by bash; a prompt submitted twice (a retry) opens one iteration.
    hook('UserPromptSubmit', ids);
    hook('UserPromptSubmit', ids);
    write(root, 'src/square.mjs', 'export const square = (n) => n * n;\n');
    git(root, 'add', 'src/square.mjs');
    git(root, 'commit', '-q', '-m', 'add square');
    expect(run(['node', '--test']).status).toBe(0);
    hook('Stop', ids);

    // Turn 3 fails: the agent breaks double; the tests fail and cairn run passes the failure on.
    hook('UserPromptSubmit', ids);
    expect(runHookCommand("sed -i 's/n \\* 2/n * 5/' src/math.mjs && rm NOTES.md", '', root).status).toBe(0);
    expect(run(['node', '--test']).status).toBe(1);
    // Stop arrives from a subdirectory without cwd in the payload (CLAUDE_PROJECT_DIR names the project).
    fs.mkdirSync(path.join(root, 'src', 'deep'), { recursive: true });
    const stop = runHookCommand(installedCommand(settings, 'Stop'), JSON.stringify({ ...payload('claude-code', 'Stop', ids), cwd: undefined }), path.join(root, 'src', 'deep'), env);
    expect(stop.status).toBe(0);

    const records = storedRecords(root, session);
    expect(records.map((r) => path.basename(r.data.iterationDir))).toEqual(['001', '002', '003']);
    for (const r of records) expect(r.data.agent).toEqual({ name: 'claude-code', sessionId: session, transcriptPath: transcript });
    const [one, two, three] = records.map((r) => r.data);
    expect(one!.diff).toMatchObject({ filesAdded: ['NOTES.md'], filesModified: ['src/math.mjs'], filesDeleted: [], commitCount: 0 });
    expect(one!.post.tests).toMatchObject({ found: true, summary: { passed: 1, failed: 0 } });
    expect(two!.diff).toMatchObject({ filesAdded: ['src/square.mjs'], filesModified: [], commitCount: 1 });
    expect(two!.post.tests.summary).toMatchObject({ passed: 1, failed: 0 });
    expect(three!.diff).toMatchObject({ filesAdded: [], filesModified: ['src/math.mjs'], filesDeleted: ['NOTES.md'] });
    expect(three!.post.tests.summary).toMatchObject({ passed: 0, failed: 1 });
    // Nothing else was recorded anywhere: no default session, no iteration left open.
    expect(fs.readdirSync(path.join(root, '.cairn', 'store')).filter((n) => !n.startsWith('.'))).toEqual([session]);
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations', '004'))).toBe(false);

    // The person (or the agent) leaves a stage note; the next session starts with it.
    const body = path.join(scratch(), 'body.md');
    fs.writeFileSync(body, '## Where we are\nTriple and square are in; double is broken by turn 3.\n');
    const stage = cli(['stage', 'write', '--root', root, '--task', 'MATH-0001', '--stage', 'do', '--command', '/dr-do', '--captured-by', 'agent', '--recommended-next', '/dr-qa', '--body-file', body], root, env);
    expect(stage.status, stage.stderr).toBe(0);
    const start = hook('SessionStart', { session_id: 'next-session', transcript_path: transcript, source: 'startup' });
    const out = JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    const context = out.hookSpecificOutput.additionalContext;
    expect(context).toContain('Triple and square are in; double is broken by turn 3.');
    expect(context).toContain('recommended next: /dr-qa');
    expect(context).toMatch(/Last iteration 003 \([^)]*\): 2 files changed \(0 added, 1 modified, 1 deleted\), 0 commits, tests 0 passed, 1 failed\.\nChanged: src\/math\.mjs, NOTES\.md\./);

    // The hook log has every call, and status shows no errors.
    const status = cli(['hooks', 'status', 'claude-code', '--json'], root, env);
    const doc = JSON.parse(status.stdout) as { agents: { scopes: { scope: string; installed: unknown[]; missing: string[] }[] }[]; errors: unknown[] };
    expect(doc.errors).toEqual([]);
    expect(doc.agents[0]!.scopes.find((s) => s.scope === 'project')!.missing).toEqual([]);
  });

  it('concurrent turns of one session open one iteration and save one record', async () => {
    const { root, env } = project();
    expect(cli(['hooks', 'install', 'claude-code'], root, env).status).toBe(0);
    const settings = path.join(root, '.claude', 'settings.json');
    const ids = { session_id: 'concurrent-1', cwd: root };
    const starts = await Promise.all(Array.from({ length: 4 }, () => runHookCommandAsync(installedCommand(settings, 'UserPromptSubmit'), JSON.stringify(payload('claude-code', 'UserPromptSubmit', ids)), root, env)));
    expect(starts.map((r) => r.status)).toEqual([0, 0, 0, 0]);
    expect(fs.readdirSync(path.join(root, '.cairn', 'iterations'))).toEqual(['001']);
    write(root, 'new.txt', 'n');
    const stops = await Promise.all(Array.from({ length: 4 }, () => runHookCommandAsync(installedCommand(settings, 'Stop'), JSON.stringify(payload('claude-code', 'Stop', ids)), root, env)));
    expect(stops.map((r) => r.status)).toEqual([0, 0, 0, 0]);
    const records = storedRecords(root, 'concurrent-1');
    expect(records).toHaveLength(1);
    expect(records[0]!.data.diff.filesAdded).toEqual(['new.txt']);
  });

  it('malformed stdin, an unknown event, a bad config and outside-git calls all exit 0; errors are logged and shown by hooks status', () => {
    const { root, env } = project();
    expect(cli(['hooks', 'install', 'claude-code'], root, env).status).toBe(0);
    const command = installedCommand(path.join(root, '.claude', 'settings.json'), 'Stop');
    for (const input of ['', 'not json {', '[1,2]', '{"hook_event_name":"Stop"}']) {
      const r = runHookCommand(command, input, root, env);
      expect(r).toMatchObject({ status: 0, stdout: '' });
    }
    expect(runHookCommand(command, JSON.stringify(payload('claude-code', 'UserPromptSubmit', { cwd: root, hook_event_name: 'PreToolUse' })), root, env)).toMatchObject({ status: 0, stdout: '' });
    write(root, '.cairn/config.json', '{"hookz": {}}');
    expect(runHookCommand(command, JSON.stringify(payload('claude-code', 'UserPromptSubmit', { cwd: root })), root, env).status).toBe(0);
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations'))).toBe(false);
    const status = cli(['hooks', 'status', 'claude-code'], root, env);
    expect(status.status).toBe(0);
    expect(status.stdout).toContain('the hook\'s stdin is not JSON');
    expect(status.stdout).toContain('names no session');
    expect(status.stdout).toContain('unknown key "hookz"');

    // Outside git: the hook records into the directory the agent works in (or its .cairn/ parent).
    const plain = scratch('plain-');
    const sub = path.join(plain, 'sub');
    fs.mkdirSync(path.join(plain, '.cairn'), { recursive: true });
    fs.mkdirSync(sub);
    const ids = { session_id: 'outside', cwd: sub };
    expect(runHookCommand(command, JSON.stringify(payload('claude-code', 'UserPromptSubmit', ids)), sub, { ...env, CLAUDE_PROJECT_DIR: '' }).status).toBe(0);
    write(plain, 'sub/file.txt', 'x');
    expect(runHookCommand(command, JSON.stringify(payload('claude-code', 'Stop', ids)), sub, { ...env, CLAUDE_PROJECT_DIR: '' }).status).toBe(0);
    expect(storedRecords(plain, 'outside').map((r) => r.data.diff.filesAdded)).toEqual([['sub/file.txt']]);
  });

  it('an interrupted turn (no Stop) is joined by the next prompt, and SessionEnd saves what is open', () => {
    const { root, env } = project();
    expect(cli(['hooks', 'install', 'claude-code'], root, env).status).toBe(0);
    const settings = path.join(root, '.claude', 'settings.json');
    const ids = { session_id: 'interrupted', cwd: root };
    const hook = (event: string) => expect(runHookCommand(installedCommand(settings, event), JSON.stringify(payload('claude-code', event, ids)), root, env).status).toBe(0);
    hook('UserPromptSubmit');
    write(root, 'a.txt', 'a');
    hook('UserPromptSubmit');
    write(root, 'b.txt', 'b');
    hook('SessionEnd');
    hook('SessionEnd');
    const records = storedRecords(root, 'interrupted');
    expect(records).toHaveLength(1);
    expect(records[0]!.data.diff.filesAdded).toEqual(['a.txt', 'b.txt']);
  });
});
