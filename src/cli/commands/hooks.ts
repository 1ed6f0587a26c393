/**
 * `cairn hooks install|uninstall|status <agent>` (edit the agent's hook settings) and
 * `cairn hook <agent>` (the entry point the agent runs on each event: stdin JSON in, exit 0 always).
 * The entry point loads the session library only for the events that need it, and stays quiet on
 * stdout except for the one document the agent reads.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Option, type Command } from 'commander';
import { AGENTS, agentById, type AgentSpec, type HookScope } from '../../hooks/agents.js';
import { UsageError, writeJson, writeLine, type CliIO } from '../io.js';
import { ROOT_HELP, projectContext, projectRoot } from '../root.js';
import { runHook } from './hook-run.js';

const AGENT_IDS = AGENTS.map((a) => a.id);

const HOOKS_HELP = `
Agents: ${AGENT_IDS.join(', ')}.
  cairn hooks install claude-code            # this project: .claude/settings.json
  cairn hooks install claude-code --scope user   # every project: ~/.claude/settings.json
  cairn hooks status                         # what is installed, and the latest hook errors
  cairn hooks uninstall claude-code          # removes exactly cairn's entries

Each agent turn then becomes one iteration: \`session pre\` when the turn starts, \`session post\`
when it ends (saved to the store under the agent's session id, with the transcript path), and at
session start the agent gets the latest stage note and a summary of the last iteration.
Installing twice leaves one copy. A settings file with comments or formatting cairn cannot keep
byte for byte is left alone (exit 2) with the entries to add by hand; --reformat rewrites it
(keeping <file>.cairn-backup).`;

function agentArg(id: string): AgentSpec {
  const agent = agentById(id);
  if (agent === undefined) throw new UsageError(`unknown agent '${id}'; cairn knows ${AGENT_IDS.join(', ')}`);
  return agent;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_/.,:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/** `cairn` when the PATH finds a cairn, else this very node and script (an npx or local install). */
function selfCommand(io: CliIO): string {
  for (const dir of (io.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    try {
      fs.accessSync(path.join(dir, 'cairn'), fs.constants.X_OK);
      return 'cairn';
    } catch {
      // not here
    }
  }
  const script = process.argv[1] === undefined ? 'cairn' : fs.realpathSync(process.argv[1]);
  return `${shellQuote(process.execPath)} ${shellQuote(script)}`;
}

function scopeOption(): Option {
  return new Option('--scope <scope>', 'project (this project, the default) or user (every project)').choices(['project', 'user']).default('project');
}

function home(io: CliIO): string {
  const h = io.env.HOME || io.env.USERPROFILE;
  if (!h) throw new UsageError('--scope user needs $HOME to find the agent\'s user settings');
  return h;
}

interface ScopeOpts {
  scope: HookScope;
  root?: string;
  json?: boolean;
}

export function registerHooksCommands(program: Command, io: CliIO): void {
  const hooks = program.command('hooks').description("Install cairn into an agent's hooks so every turn is recorded").addHelpText('after', HOOKS_HELP);

  hooks
    .command('install')
    .description("Add cairn's hooks to the agent's settings (idempotent)")
    .argument('<agent>', AGENT_IDS.join(' | '))
    .addOption(scopeOption())
    .option('--root <dir>', ROOT_HELP)
    .option('--command <cmd>', 'the command the hooks run (default: cairn when it is on PATH, else this node and script)')
    .option('--reformat', 'rewrite a settings file cairn cannot keep byte for byte as standard JSON (a backup is kept)')
    .option('--json', 'print {file, events, changed} as one JSON document')
    .action(async (id: string, opts: ScopeOpts & { command?: string; reformat?: boolean }) => {
      const agent = agentArg(id);
      const { root, config } = projectContext(io, opts.root);
      const { installHooks, settingsFragment } = await import('../../hooks/settings.js');
      const { timeoutSeconds } = await import('../../hooks/handle.js');
      const file = agent.settingsFile(opts.scope, root, opts.scope === 'user' ? home(io) : '');
      const command = `${opts.command ?? selfCommand(io)} hook ${agent.id}`;
      let change;
      try {
        change = installHooks(agent, file, command, timeoutSeconds(config), { reformat: opts.reformat === true, within: opts.scope === 'user' ? home(io) : root });
      } catch (e) {
        writeLine(io.stderr, `cairn hooks install: the entries to add to ${file}:\n${JSON.stringify(settingsFragment(agent, command, timeoutSeconds(config)), null, 2)}`);
        throw e;
      }
      if (opts.json) writeJson(io, change);
      else if (change.changed) writeLine(io.stdout, `${agent.name}: cairn's hooks ${change.events.length > 0 ? `(${change.events.join(', ')}) ` : ''}written to ${file}${change.backup ? ` (the old file is kept as ${change.backup})` : ''}`);
      else writeLine(io.stdout, `${agent.name}: cairn's hooks are already in ${file}; nothing changed`);
      if (agent.installNote !== undefined && !opts.json) writeLine(io.stderr, `cairn: note: ${agent.installNote.replace('\\n', ' ')}`);
    });

  hooks
    .command('uninstall')
    .description("Remove exactly cairn's hooks from the agent's settings")
    .argument('<agent>', AGENT_IDS.join(' | '))
    .addOption(scopeOption())
    .option('--root <dir>', ROOT_HELP)
    .option('--reformat', 'rewrite a settings file cairn cannot keep byte for byte as standard JSON (a backup is kept)')
    .option('--json', 'print {file, events, changed} as one JSON document')
    .action(async (id: string, opts: ScopeOpts & { reformat?: boolean }) => {
      const agent = agentArg(id);
      const root = projectRoot(io, opts.root);
      const { uninstallHooks } = await import('../../hooks/settings.js');
      const file = agent.settingsFile(opts.scope, root, opts.scope === 'user' ? home(io) : '');
      const change = uninstallHooks(agent, file, { reformat: opts.reformat === true, within: opts.scope === 'user' ? home(io) : root });
      if (opts.json) writeJson(io, change);
      else writeLine(io.stdout, change.changed ? `${agent.name}: cairn's hooks (${change.events.join(', ')}) removed from ${file}` : `${agent.name}: no cairn hooks in ${file}; nothing changed`);
    });

  hooks
    .command('status')
    .description('Say which agents have cairn installed, and show the latest hook calls and errors')
    .argument('[agent]', AGENT_IDS.join(' | '))
    .option('--root <dir>', ROOT_HELP)
    .option('--json', 'print {agents: [...], recent: [...], errors: [...]} as one JSON document')
    .action(async (id: string | undefined, opts: { root?: string; json?: boolean }) => {
      const agents = id === undefined ? AGENTS : [agentArg(id)];
      const root = projectRoot(io, opts.root);
      const { hooksStatus } = await import('../../hooks/settings.js');
      const { readHookLog } = await import('../../hooks/log.js');
      const userHome = io.env.HOME || io.env.USERPROFILE || '';
      const rows = agents.map((agent) => ({
        agent: agent.id,
        scopes: (['project', 'user'] as const).filter((s) => s === 'project' || userHome !== '').map((scope) => ({ scope, ...hooksStatus(agent, agent.settingsFile(scope, root, userHome), scope === 'user' ? userHome : root) })),
      }));
      const log = readHookLog(root).filter((e) => agents.some((a) => a.id === e.agent));
      const errors = log.filter((e) => e.level === 'error').slice(-10);
      if (opts.json) {
        writeJson(io, { root, agents: rows, recent: log.slice(-10), errors });
        return;
      }
      for (const row of rows) {
        for (const s of row.scopes) {
          const state = s.problem !== undefined ? `cannot read: ${s.problem}` : s.installed.length === 0 ? 'not installed' : s.missing.length === 0 ? 'installed' : `partly installed (missing ${s.missing.join(', ')})`;
          writeLine(io.stdout, `${row.agent} (${s.scope}): ${state}  ${s.file}`);
        }
      }
      const last = log.at(-1);
      if (last !== undefined) writeLine(io.stdout, `last hook call: ${last.time} ${last.agent} ${last.event ?? ''} → ${last.did ?? last.level}${last.iteration ? ` (iteration ${last.iteration})` : ''}`);
      if (errors.length > 0) {
        writeLine(io.stdout, `hook errors (newest last, from ${path.join(root, '.cairn', 'hooks', 'hook.log')}):`);
        for (const e of errors) writeLine(io.stdout, `  ${e.time} ${e.agent} ${e.event ?? '-'}: ${e.message ?? ''}`);
      }
    });

  program
    .command('hook')
    .description("The entry point an agent's hooks run: reads the event's JSON on stdin; always exits 0")
    .argument('<agent>', AGENT_IDS.join(' | '))
    .action(async (id: string) => runHook(io, agentArg(id)));
}
