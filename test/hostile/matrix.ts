/**
 * Hostile trees, the whole surface: every CLI command and every MCP tool that touches a path,
 * run against a project with a link of every kind (an outside directory, an outside file, a
 * dangling target, itself) planted at every component of every path cairn uses — `.cairn/` and
 * all below it, the state dir and key files, the stage notes and their lock, the agents' hook
 * settings (project and user scope), output files. Each run must end in success or a coded
 * error (never a stack trace), must not put outside content into what it prints, and the
 * canaries outside must stay byte-identical with nothing new beside them.
 *
 * Commands run in-process (`main()` with captured streams), MCP tools through a real SDK client
 * on an in-memory transport, the agent hook through `handleHook` (what `cairn hook` runs).
 * The table below says which components each command touches; a case runs the commands that
 * touch its component. Bounded by work: one template project, copied per case.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { agentById } from '../../src/hooks/agents.js';
import { handleHook } from '../../src/hooks/handle.js';
import { createCairnMcpServer } from '../../src/mcp/server.js';
import { git } from '../support/git.js';
import { ALL_TOOLS } from '../mcp/support.js';
import { expectOutsideIntact, LINK_KINDS, makeOutside, plantLink, printFigures, startSwapper, type Outside } from './support.js';


/** The canaries' contents: nothing cairn prints may carry them. */
const OUTSIDE_SECRET = /canary\\?":true|secret\\?":\\?"outside|not\\?":\\?"yours|object-like file|\\?"pid\\?":1\b/;
/** A stack frame or an uncaught JS error name: never shown to a user. */
const STACK = /\n\s+at .+:\d+:\d+|^(TypeError|RangeError|ReferenceError|SyntaxError): /m;

const TASK = 'TASK-0001';
const figures = { cases: 0, cliRuns: 0, mcpCalls: 0, hookCalls: 0, racedFailures: 0 };

/** Directories a swapper exchanges with a link to the outside while the commands that touch them run. */
const SWAPPED: readonly string[] = [
  '.cairn',
  '.cairn/iterations',
  '.cairn/iterations/001',
  '.cairn/inventories/objects',
  '.cairn/inventories/packed/packs',
  '.cairn/content/packs',
  '.cairn/store/default/scopes/agent/iterations/snapshots',
  '.cairn/hooks',
  '.aiwg/ralph',
  'datarim/snapshots',
  '.claude',
  '~/.claude',
];
/** Rounds of the commands per swapped directory (bounded by work, never by time). */
const SWAP_ROUNDS = 2;

let tmp: string;
let template: string;
let outside: Outside;

interface Case {
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
}

function sink(): Writable & { text: () => string } {
  const chunks: Buffer[] = [];
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(Buffer.from(chunk));
      cb();
    },
  }) as Writable & { text: () => string };
  w.text = () => Buffer.concat(chunks).toString('utf8');
  return w;
}

/** Runs `cairn <args>` in-process in the case's project; returns status and output. */
async function cli(c: Case, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const status = await main(args, { stdout, stderr, env: { ...c.env, ...env }, cwd: c.root });
  figures.cliRuns++;
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

/** Success, or a coded error as the last stderr line; never a stack trace; nothing from outside. */
function expectContained(label: string, r: { status: number; stdout: string; stderr: string }, okStatuses: readonly number[] = [0], racing = false): void {
  expect(`${r.stdout}${r.stderr}`, `${label}: printed outside content`).not.toMatch(OUTSIDE_SECRET);
  expect(r.stderr, `${label}: stack trace`).not.toMatch(STACK);
  if (okStatuses.includes(r.status)) return;
  // Under a swap a directory may vanish mid-call: any reported error is fair, never an effect outside.
  if (racing) {
    figures.racedFailures++;
    return;
  }
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  let code: unknown;
  try {
    code = (JSON.parse(last) as { code?: unknown }).code;
  } catch {
    code = undefined;
  }
  if (typeof code !== 'string' || !/^ERR_[A-Z_]+$/.test(code)) throw new Error(`${label}: exit ${r.status} without a coded error: ${r.stderr.slice(-400)}`);
}

type Touch = string;
interface CliStep {
  kind: 'cli';
  label: string;
  args: (c: Case) => string[];
  env?: NodeJS.ProcessEnv;
  touches: readonly Touch[];
  /** Exit codes that are a plain outcome, not a failure (stage check's 1 = missing). */
  ok?: readonly number[];
}
interface HookStep {
  kind: 'hook';
  label: string;
  event: string;
  touches: readonly Touch[];
}
interface McpStep {
  kind: 'mcp';
  label: string;
  tool: string;
  args: (c: Case) => Record<string, unknown>;
  touches: readonly Touch[];
}
type Step = CliStep | HookStep | McpStep;

/** What each command reads, writes or deletes (a case runs the steps whose list names its component or a parent of it). */
const ITER = ['.cairn/config.json', '.cairn/iterations'];
const READ_ITER = [...ITER, '.cairn/inventories', '.cairn/content', '.cairn/restores'];
const RESTORE = [...READ_ITER, '.cairn/restore.lock'];
const CAPTURE = [...READ_ITER, '.cairn/.gitignore', '.aiwg', 'package.json'];
const POST = [...CAPTURE, '.cairn/store'];
const STORE = ['.cairn/config.json', '.cairn/store'];
const STAGE = ['.cairn/config.json', 'datarim'];
const HOOKS = ['.cairn/config.json', '.cairn/hooks', '.claude'];
const USER_HOOKS = ['~/.claude', '.cairn/config.json'];
const HOOK_START = ['.cairn/hooks', ...ITER, 'datarim'];
const HOOK_TURN = ['.cairn/hooks', ...POST];
const WHOLE = ['.cairn/config.json', '.aiwg', 'package.json', 'datarim', '.claude', 'snap.json'];

/** Restore's outcomes: done, or 3 = conflicts (listed on stdout). */
const RESTORED = [0, 3];
const storeArgs = ['--session', 'default', '--scope-id', 'iterations'];
const stageWrite = (c: Case): string[] => ['stage', 'write', '--root', c.root, '--task', TASK, '--stage', 'do', '--command', '/dr-do', '--captured-by', 'agent', '--recommended-next', '/dr-qa', '--body-file', path.join(c.root, 'body.md'), '--json'];

/** The order is the order of a day's work: reads, then writes, then deletions. */
const STEPS: readonly Step[] = [
  { kind: 'cli', label: 'snapshot', args: (c) => ['snapshot', '--root', c.root, '--no-cache', '--jobs', '0', '-o', path.join(c.root, 'snap.json')], touches: ['snap.json', 'package.json', '.aiwg'] },
  { kind: 'cli', label: 'snapshot-diff', args: (c) => ['snapshot-diff', path.join(c.root, 'snap.json'), path.join(c.root, 'snap.json')], touches: ['snap.json'] },
  { kind: 'cli', label: 'session list', args: () => ['session', 'list', '--json'], touches: READ_ITER },
  { kind: 'cli', label: 'session report', args: () => ['session', 'report', '1', '--json'], touches: READ_ITER },
  { kind: 'cli', label: 'session report --html', args: (c) => ['session', 'report', '--all', '--html', path.join(c.root, 'review.html')], touches: [...READ_ITER, 'review.html'] },
  { kind: 'cli', label: 'session diff', args: () => ['session', 'diff', '1', '--json'], touches: READ_ITER },
  { kind: 'cli', label: 'session restore --dry-run', args: () => ['session', 'restore', '1', '--dry-run', '--json'], touches: RESTORE, ok: RESTORED },
  { kind: 'cli', label: 'store list', args: () => ['store', 'list', '--json'], touches: STORE },
  { kind: 'cli', label: 'store list --session', args: () => ['store', 'list', '--session', 'default', '--json'], touches: STORE },
  { kind: 'cli', label: 'store show', args: () => ['store', 'show', ...storeArgs, '--json'], touches: STORE },
  { kind: 'cli', label: 'store verify', args: () => ['store', 'verify', '--json'], touches: STORE, ok: [0, 1] },
  { kind: 'cli', label: 'store du', args: () => ['store', 'du', '--json'], touches: STORE },
  { kind: 'cli', label: 'stage check', args: () => ['stage', 'check', '--task', TASK, '--json'], touches: STAGE, ok: [0, 1, 2] },
  { kind: 'cli', label: 'stage show', args: () => ['stage', 'show', TASK, '--json'], touches: STAGE },
  { kind: 'cli', label: 'hooks status', args: () => ['hooks', 'status', '--json'], touches: [...HOOKS, ...USER_HOOKS] },
  // No daemon runs in these cases: through a planted link, none is ever reached (status 1) and nothing is stopped.
  { kind: 'cli', label: 'daemon status', args: () => ['daemon', 'status', '--json'], touches: ['.cairn/daemon.sock'], ok: [1] },
  { kind: 'cli', label: 'daemon stop', args: () => ['daemon', 'stop', '--json'], touches: ['.cairn/daemon.sock'] },
  { kind: 'mcp', label: 'mcp snapshot', tool: 'cairn_repo_snapshot', args: () => ({ withContentDigest: true }), touches: WHOLE },
  { kind: 'mcp', label: 'mcp axiom snapshot', tool: 'axiom_repo_snapshot', args: () => ({}), touches: WHOLE },
  { kind: 'mcp', label: 'mcp session list', tool: 'cairn_session_list', args: () => ({}), touches: READ_ITER },
  { kind: 'mcp', label: 'mcp session diff', tool: 'cairn_session_diff', args: () => ({ iteration: '1', format: 'patch' }), touches: READ_ITER },
  { kind: 'mcp', label: 'mcp store list', tool: 'cairn_store_list', args: () => ({ sessionId: 'default' }), touches: STORE },
  { kind: 'mcp', label: 'mcp store show', tool: 'cairn_store_show', args: () => ({ sessionId: 'default' }), touches: STORE },
  { kind: 'mcp', label: 'mcp stage read', tool: 'cairn_stage_read', args: () => ({ task: TASK }), touches: STAGE },
  { kind: 'mcp', label: 'mcp session restore (dry run)', tool: 'cairn_session_restore', args: () => ({ iteration: '1' }), touches: RESTORE },
  { kind: 'hook', label: 'hook SessionStart', event: 'SessionStart', touches: HOOK_START },
  { kind: 'hook', label: 'hook UserPromptSubmit', event: 'UserPromptSubmit', touches: HOOK_TURN },
  { kind: 'cli', label: 'run', args: () => ['run', '--', 'true'], env: { CAIRN_AGENT_SESSION: 's1' }, touches: ITER },
  { kind: 'hook', label: 'hook Stop', event: 'Stop', touches: HOOK_TURN },
  { kind: 'cli', label: 'session pre', args: () => ['session', 'pre', '--json'], touches: CAPTURE },
  { kind: 'cli', label: 'run (open iteration)', args: () => ['run', '--', 'true'], touches: ITER },
  { kind: 'cli', label: 'session post', args: () => ['session', 'post', '--json'], touches: POST },
  { kind: 'mcp', label: 'mcp session pre', tool: 'cairn_session_pre', args: () => ({}), touches: CAPTURE },
  { kind: 'mcp', label: 'mcp session post', tool: 'cairn_session_post', args: () => ({}), touches: POST },
  { kind: 'cli', label: 'stage write', args: stageWrite, touches: [...STAGE, 'body.md'] },
  { kind: 'mcp', label: 'mcp stage write', tool: 'cairn_stage_write', args: () => ({ task: TASK, stage: 'qa', command: '/dr-qa', capturedBy: 'agent', recommendedNext: '/dr-do', body: 'again' }), touches: STAGE },
  { kind: 'cli', label: 'hooks install', args: () => ['hooks', 'install', 'claude-code', '--json'], touches: HOOKS },
  { kind: 'cli', label: 'hooks install --scope user', args: () => ['hooks', 'install', 'gemini-cli', '--scope', 'user', '--json'], touches: ['~/.gemini', ...USER_HOOKS] },
  { kind: 'cli', label: 'hooks uninstall --scope user', args: () => ['hooks', 'uninstall', 'claude-code', '--scope', 'user', '--json'], touches: USER_HOOKS },
  { kind: 'cli', label: 'hooks uninstall', args: () => ['hooks', 'uninstall', 'claude-code', '--json'], touches: HOOKS },
  { kind: 'cli', label: 'session restore', args: () => ['session', 'restore', '1', '--force', '--json'], touches: RESTORE, ok: RESTORED },
  { kind: 'mcp', label: 'mcp session restore undo', tool: 'cairn_session_restore', args: () => ({ undo: true, dryRun: false }), touches: RESTORE },
  { kind: 'cli', label: 'session restore --undo', args: () => ['session', 'restore', '--undo', '--json'], touches: RESTORE, ok: RESTORED },
  { kind: 'cli', label: 'store prune', args: () => ['store', 'prune', '--keep-last', '0', '--json'], touches: STORE },
  { kind: 'cli', label: 'store prune (temps)', args: () => ['store', 'prune', '--json'], touches: STORE },
  { kind: 'cli', label: 'session prune', args: () => ['session', 'prune', '--keep-last', '1', '--grace-minutes', '0', '--json'], touches: READ_ITER },
  { kind: 'cli', label: 'store delete-session', args: () => ['store', 'delete-session', '--session', 'default', '--json'], touches: STORE },
];

/** Every component of every path cairn uses (`~/` is the user's home), with how to find names that vary. */
const COMPONENTS: readonly string[] = [
  '.cairn',
  '.cairn/config.json',
  '.cairn/.gitignore',
  '.cairn/store',
  '.cairn/store/default',
  '.cairn/store/default/scopes',
  '.cairn/store/default/scopes/agent/iterations/snapshots',
  '.cairn/store/default/scopes/agent/iterations/snapshots/snapshot_latest.json',
  '.cairn/store/default/scopes/agent/iterations/snapshots/immutable_history',
  '.cairn/store/default/scopes/agent/iterations/snapshots/immutable_history/<history>',
  '.cairn/inventories',
  '.cairn/inventories/refs',
  '.cairn/inventories/refs/<ref>',
  '.cairn/inventories/objects',
  '.cairn/inventories/objects/<fan>',
  '.cairn/inventories/packed',
  '.cairn/inventories/packed/packs',
  '.cairn/inventories/packed/packs/<pack>',
  '.cairn/content',
  '.cairn/content/packs',
  '.cairn/content/packs/<pack>',
  '.cairn/restores',
  '.cairn/restore.lock',
  '.cairn/iterations',
  '.cairn/iterations/001',
  '.cairn/iterations/001/pre-snapshot.json',
  '.cairn/iterations/001/post-snapshot.json',
  '.cairn/iterations/001/review.json',
  '.cairn/iterations/001/run-001.json',
  '.cairn/iterations/001/run-001.log',
  '.cairn/iterations/002',
  '.cairn/iterations/002/agent.json',
  '.cairn/iterations/002/pre-snapshot.json',
  '.cairn/hooks',
  '.cairn/hooks/hook.log',
  '.cairn/hooks/locks',
  '.cairn/daemon.sock',
  '.aiwg',
  '.aiwg/ralph',
  '.aiwg/ralph/current-loop.json',
  'package.json',
  'datarim',
  'datarim/snapshots',
  `datarim/snapshots/${TASK}.snapshot.md`,
  `datarim/snapshots/.lock.${TASK}`,
  '.claude',
  '.claude/settings.json',
  '~/.claude',
  '~/.claude/settings.json',
  '~/.gemini',
  'review.html',
  'snap.json',
  'body.md',
];

function touches(step: Step, component: string): boolean {
  return step.touches.some((t) => component === t || component.startsWith(`${t}/`) || t.startsWith(`${component}/`));
}

/** A component's concrete path in a case (variable names taken from the template). */
function resolveComponent(c: Case, component: string): string {
  const at = component.startsWith('~/') ? path.join(c.home, component.slice(2)) : path.join(c.root, component);
  const m = /^(.*)\/<[a-z]+>$/.exec(at);
  if (m === null) return at;
  const names = fs.readdirSync(m[1]!).filter((n) => !n.startsWith('.')).sort();
  expect(names.length, `template has something under ${m[1]}`).toBeGreaterThan(0);
  return path.join(m[1]!, names[0]!);
}

async function runHook(c: Case, event: string): Promise<void> {
  const agent = agentById('claude-code')!;
  const payload = JSON.stringify({ session_id: 's1', hook_event_name: event, cwd: c.root, transcript_path: path.join(c.root, 'transcript.jsonl') });
  const outcome = await handleHook(agent, payload, c.root, c.env);
  figures.hookCalls++;
  // The hook never fails the agent; what it logged must be a message, never outside content.
  expect(JSON.stringify(outcome), `hook ${event}: outside content`).not.toMatch(OUTSIDE_SECRET);
  expect(outcome.entry.message ?? '', `hook ${event}: stack trace`).not.toMatch(STACK);
}

async function runMcp(client: Client, c: Case, step: McpStep, racing = false): Promise<void> {
  const result = (await client.callTool({ name: step.tool, arguments: step.args(c) })) as { isError?: boolean; content: { type: string; text?: string }[] };
  figures.mcpCalls++;
  const text = result.content.map((p) => p.text ?? '').join('\n');
  expect(text, `${step.label}: outside content`).not.toMatch(OUTSIDE_SECRET);
  expect(text, `${step.label}: stack trace`).not.toMatch(STACK);
  if (result.isError === true && racing) figures.racedFailures++;
  else if (result.isError === true && !/^\{"code":"ERR_[A-Z_]+"/.test(text)) throw new Error(`${step.label}: an error without a code: ${text.slice(0, 400)}`);
}

/** What differs outside from the canaries as planted (extra, missing or changed paths). */
function escapes(o: Outside): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!o.canaries.has(p)) found.push(`+${path.relative(o.dir, p)}`);
      else if (!fs.readFileSync(p).equals(o.canaries.get(p)!)) found.push(`~${path.relative(o.dir, p)}`);
    }
  };
  walk(o.dir);
  for (const p of o.canaries.keys()) if (!fs.existsSync(p)) found.push(`-${path.relative(o.dir, p)}`);
  return found;
}

async function runSteps(c: Case, steps: readonly Step[], options: { racing?: boolean } = {}): Promise<void> {
  const mcpSteps = steps.filter((s): s is McpStep => s.kind === 'mcp');
  let client: Client | undefined;
  let closeMcp: (() => Promise<void>) | undefined;
  if (mcpSteps.length > 0) {
    const server = createCairnMcpServer({ roots: [c.root], cwd: c.root, env: c.env });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'hostile-matrix', version: '0' });
    await server.connect(serverSide);
    await client.connect(clientSide);
    closeMcp = async () => {
      await client!.close();
      await server.close();
    };
  }
  try {
    for (const step of steps) {
      if (step.kind === 'cli') expectContained(step.label, await cli(c, step.args(c), step.env), step.ok, options.racing);
      else if (step.kind === 'hook') await runHook(c, step.event);
      else await runMcp(client!, c, step, options.racing);
      const escaped = escapes(outside);
      if (escaped.length > 0) throw new Error(`${step.label}: changed outside: ${escaped.join(', ')}`);
    }
  } finally {
    await closeMcp?.();
  }
}

function makeCase(name: string): Case {
  const dir = path.join(tmp, 'cases', name);
  fs.cpSync(template, dir, { recursive: true, verbatimSymlinks: true });
  const root = path.join(dir, 'project');
  const home = path.join(dir, 'home');
  return { root, home, env: caseEnv(root, home) };
}

function caseEnv(root: string, home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CACHE_HOME: path.join(path.dirname(root), 'cache'),
    CI: '1',
    NO_COLOR: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@example.com',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.com',
    CLAUDE_ENV_FILE: path.join(root, '.claude-env'),
  };
}

/**
 * Defines the matrix for the components `which` selects (the suite is split in two files so
 * vitest runs the halves side by side).
 */
export function defineMatrix(name: string, which: (component: string) => boolean): void {
  afterAll(() => printFigures(name));
  beforeAll(async () => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-matrix-')));
    outside = makeOutside(path.join(tmp, 'outside'));
    template = path.join(tmp, 'template');
    const root = path.join(template, 'project');
    const home = path.join(template, 'home');
    fs.mkdirSync(root, { recursive: true });
    fs.mkdirSync(home);
    const c: Case = { root, home, env: caseEnv(root, home) };
    git(root, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(root, 'package.json'), '{"name":"p"}\n');
    fs.writeFileSync(path.join(root, 'app.ts'), 'export const a = 1;\n');
    fs.writeFileSync(path.join(root, 'body.md'), 'What was done.\n');
    // Eight directories that session post finds changed: its inventory's new objects make a pack.
    const modules = Array.from({ length: 8 }, (_, i) => path.join(root, 'lib', `m${i}`));
    for (const [i, m] of modules.entries()) {
      fs.mkdirSync(m, { recursive: true });
      fs.writeFileSync(path.join(m, 'x.ts'), `export const x = ${i};\n`); // unlike listings: one object each
    }
    fs.mkdirSync(path.join(root, '.aiwg', 'ralph'), { recursive: true });
    fs.writeFileSync(path.join(root, '.aiwg', 'ralph', 'current-loop.json'), '{"loop":1}\n');
    fs.mkdirSync(path.join(root, '.cairn'));
    fs.writeFileSync(path.join(root, '.cairn', 'config.json'), '{"exclude":["*.log"]}\n');
    git(root, 'add', '-A');
    git(root, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
    const must = async (args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> => {
      const r = await cli(c, args, env);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    };
    await must(['session', 'pre']);
    await must(['run', '--', process.execPath, '-e', 'console.log("1 passing")']);
    fs.writeFileSync(path.join(root, 'app.ts'), 'export const a = 2;\n');
    fs.writeFileSync(path.join(root, 'new.ts'), 'export {};\n');
    for (const [i, m] of modules.entries()) fs.writeFileSync(path.join(m, 'x.ts'), `export const x = ${i + 8};\n`);
    await must(['session', 'post']);
    await must(stageWrite(c));
    await must(['hooks', 'install', 'claude-code']);
    await must(['hooks', 'install', 'claude-code', '--scope', 'user']);
    await must(['snapshot', '--root', root, '--no-cache', '--jobs', '0', '-o', path.join(root, 'snap.json')]);
    await must(['session', 'report', '--html', path.join(root, 'review.html')]);
    await runHook(c, 'UserPromptSubmit'); // iteration 002, open, with its agent.json
    await must(['session', 'restore', '1', '--force']);
    await must(['session', 'restore', '--undo']);
    for (const component of COMPONENTS) {
      // held locks; made by a step; the daemon's socket (only `daemon start` makes it, test/daemon covers it)
      if (component.includes('.lock.') || component.endsWith('restore.lock') || component === '~/.gemini' || component.endsWith('daemon.sock')) continue;
      expect(fs.existsSync(resolveComponent(c, component)), `the template has ${component}`).toBe(true);
    }
  });

  afterAll(() => {
    process.stdout.write(`hostile-tree matrix: ${figures.cases} cases, ${figures.cliRuns} CLI runs, ${figures.mcpCalls} MCP calls, ${figures.hookCalls} hook calls, ${figures.racedFailures} runs ended in an error under a swap (expected; none had an effect outside)\n`);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('hostile tree matrix: every command and MCP tool × every path component × every link kind', () => {
    it('the table covers every MCP tool the server lists', () => {
      const covered = new Set(STEPS.flatMap((s) => (s.kind === 'mcp' ? [s.tool] : [])));
      expect([...ALL_TOOLS].sort()).toEqual([...covered].sort());
    });

    for (const component of COMPONENTS.filter(which)) {
      const steps = STEPS.filter((s) => touches(s, component));
      it(`${component}: ${steps.length} commands and tools, each link kind`, async () => {
        expect(steps.length).toBeGreaterThan(0);
        const failures: string[] = [];
        for (const kind of LINK_KINDS) {
          const c = makeCase(`${component.replace(/[^a-z0-9]+/gi, '_')}-${kind}`);
          // Each case its own outside, so one escape is reported where it happened.
          outside = makeOutside(path.join(path.dirname(c.root), 'outside'));
          plantLink(resolveComponent(c, component), kind, outside);
          figures.cases++;
          try {
            await runSteps(c, steps);
            expectOutsideIntact(outside);
          } catch (e) {
            const diff = (e as { diff?: string }).diff ?? '';
            failures.push(`${kind}: ${(e as Error).message.split('\n').slice(0, 12).join('\n')}${diff === '' ? '' : `\n${diff}`}`);
          }
          fs.rmSync(path.dirname(c.root), { recursive: true, force: true });
        }
        expect(failures, failures.join('\n\n')).toEqual([]);
      });
    }
  });

  describe('hostile tree matrix: a swapper exchanges each directory with a link while the commands that touch it run', () => {
    for (const dir of SWAPPED.filter(which)) {
      const steps = STEPS.filter((s) => touches(s, dir));
      it(`${dir}: ${steps.length} commands and tools × ${SWAP_ROUNDS} rounds under RENAME_EXCHANGE`, async () => {
        const c = makeCase(`swap-${dir.replace(/[^a-z0-9]+/gi, '_')}`);
        outside = makeOutside(path.join(path.dirname(c.root), 'outside'));
        const at = resolveComponent(c, dir);
        const swapper = await startSwapper(at, `${at}.swap-link`, outside.dir);
        try {
          for (let round = 0; round < SWAP_ROUNDS; round++) await runSteps(c, steps, { racing: true });
        } finally {
          await swapper.stop();
        }
        expectOutsideIntact(outside);
        fs.rmSync(path.dirname(c.root), { recursive: true, force: true });
      });
    }
  });

}
