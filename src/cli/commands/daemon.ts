/**
 * `cairn daemon start|stop|status|run`: a process per project that keeps what `session pre|post`
 * and agent hook turns need between calls (src/cli/daemon/server.ts). Opt-in: nothing starts one but
 * `cairn daemon start` (or `run`, in the foreground, for a supervisor).
 */
import type { Command } from 'commander';
import { CairnError } from '../../core/errors.js';
import { writeJson, writeLine, ExitCode, type CliIO } from '../io.js';
import { ROOT_HELP, projectRoot } from '../root.js';
import type { StatusReply } from '../../daemon/protocol.js';

const DAEMON_HELP = `
A daemon serves the project's \`cairn session pre\`, \`cairn session post\` and \`cairn hook <agent>\`
turns (run as separate processes, e.g. by an agent's hooks) from one process that stays: the
library loaded once, a tree watcher and git's last answer kept (docs/long-running.md). Opt-in:
nothing starts it but \`cairn daemon start\`. Its socket is <root>/.cairn/daemon.sock (mode 0600).

A command is served only when the daemon would print and write exactly what the command would
in-process: the same cairn build and Node, user, umask, project root and environment (CAIRN_*,
GIT_*, XDG_*, HOME, PATH, locale ...). Otherwise, or when the daemon does not answer (stopped,
killed, busy past CAIRN_DAEMON_WAIT_MS), the command runs in-process as before.
CAIRN_DAEMON=0 turns delegation off for one command.

It stops on \`cairn daemon stop\`, after 30 minutes without a request, and when the project's
.cairn/ is removed. \`start\` while one runs is harmless (exit 0); a build change restarts it.

Exit codes: start 0 running (started or already); 1 it did not start. stop 0 (also when none
ran). status 0 running, 1 not running.`;

function runningDaemon(root: string): Promise<StatusReply | null> {
  return import('../daemon/client.js').then(async ({ ask }) => {
    const r = (await ask(root, { op: 'status' }, 10_000)) as StatusReply | null;
    return r !== null && typeof r.pid === 'number' ? r : null;
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Asks the daemon to stop and waits (bounded by tries) until its socket no longer answers. */
async function stopDaemon(root: string): Promise<boolean> {
  const { ask } = await import('../daemon/client.js');
  for (let i = 0; i < 200; i++) {
    const r = await ask(root, { op: 'stop' }, 10_000);
    if (r === null) return true;
    await sleep(25);
  }
  return false;
}

function describe(s: StatusReply): string {
  const git = s.git === null || s.git === undefined ? '' : `; git status: ${s.git.runs} whole, ${s.git.tracked} of the tracked files, ${s.git.partial} limited, ${s.git.reused} reused`;
  return `pid ${s.pid}, since ${s.startedAt}, served ${s.served}, declined ${s.declined}${git}`;
}

/** A daemon subcommand: every one takes --root; one that prints a JSON document takes --json (`json`: what it prints). */
function subcommand(daemon: Command, name: string, description: string, json?: string): Command {
  const command = daemon.command(name).description(description).option('--root <dir>', ROOT_HELP);
  return json === undefined ? command : command.option('--json', json);
}

/** A subcommand's action: `run` gets the project root (--root, else found from the cwd) and whether --json was given. */
function onProjectRoot(io: CliIO, run: (root: string, json: boolean) => Promise<void>): (opts: { root?: string; json?: boolean }) => Promise<void> {
  return async (opts) => run(projectRoot(io, opts.root), opts.json === true);
}

export function registerDaemonCommands(program: Command, io: CliIO): void {
  const daemon = program
    .command('daemon')
    .description('Serve session pre/post and hook turns from a process that stays (faster per turn)')
    .addHelpText('after', DAEMON_HELP);

  subcommand(daemon, 'start', 'Start the project\'s daemon in the background (harmless when one runs)', 'print {running, started, pid, root} as one JSON document').action(
    onProjectRoot(io, async (root, json) => {
      // A link at .cairn or at the socket's name is refused here, before anything is spawned.
      (await import('../daemon/server.js')).checkSocketPlace(root);
      const { buildId } = await import('../../daemon/protocol.js');
      let running = await runningDaemon(root);
      if (running !== null && running.build !== buildId()) {
        await stopDaemon(root); // another cairn build: its answers could differ from this one's
        running = null;
      }
      let started = false;
      if (running === null) {
        const script = process.argv[1];
        if (script === undefined) throw new CairnError('ERR_IO', 'cannot tell which cairn executable to start', { exitCode: 1 });
        const { spawn } = await import('node:child_process'); // loaded on use: the CLI's start-up never loads it
        const child = spawn(process.execPath, [...process.execArgv, script, 'daemon', 'run', '--root', root], { cwd: root, detached: true, stdio: 'ignore', env: process.env });
        const end: { code: number | null } = { code: null };
        child.on('exit', (code) => (end.code = code ?? 1));
        child.on('error', () => (end.code = 1));
        // Bounded by tries: a daemon answers once its socket is bound.
        for (let i = 0; i < 400 && end.code === null; i++) {
          running = await runningDaemon(root);
          if (running !== null) break;
          await sleep(25);
        }
        child.unref();
        if (running === null) {
          throw new CairnError('ERR_DAEMON_START', `the daemon for ${root} did not start${end.code !== null ? ` (exit ${end.code})` : ''}; run \`cairn daemon run --root ${root}\` to see why`, { exitCode: 1 });
        }
        started = running.pid === child.pid;
      }
      if (json) writeJson(io, { running: true, started, pid: running.pid, root });
      else writeLine(io.stdout, `cairn daemon: ${started ? 'started' : 'already running'} for ${root} (${describe(running)})`);
    }),
  );

  subcommand(daemon, 'stop', 'Stop the project\'s daemon (exit 0 also when none runs)', 'print {stopped, pid} as one JSON document').action(
    onProjectRoot(io, async (root, json) => {
      const running = await runningDaemon(root);
      if (running !== null && !(await stopDaemon(root))) throw new CairnError('ERR_DAEMON_STOP', `the daemon for ${root} (pid ${running.pid}) did not stop; end it with \`kill ${running.pid}\``, { exitCode: 1 });
      if (json) writeJson(io, { stopped: running !== null, pid: running?.pid ?? null });
      else writeLine(io.stdout, running === null ? `cairn daemon: none running for ${root}` : `cairn daemon: stopped (pid ${running.pid})`);
    }),
  );

  subcommand(daemon, 'status', 'Say whether the project\'s daemon runs (exit 0) or not (exit 1)', 'print {running, pid, root, build, startedAt, served, declined, watching, git} as one JSON document').action(
    onProjectRoot(io, async (root, json) => {
      const running = await runningDaemon(root);
      if (json) writeJson(io, running === null ? { running: false, root } : { running: true, ...running, root });
      else writeLine(io.stdout, running === null ? `cairn daemon: not running for ${root}` : `cairn daemon: running for ${root} (${describe(running)})`);
      if (running === null) throw new ExitCode(1);
    }),
  );

  subcommand(daemon, 'run', 'Run the project\'s daemon in the foreground (for a supervisor; `start` runs this in the background)').action(
    onProjectRoot(io, async (root) => {
      const { startDaemon } = await import('../daemon/server.js');
      const started = await startDaemon(root, (line) => writeLine(io.stderr, `cairn daemon: ${line}`));
      const code = await started.ended;
      if (io.ownsProcess === true) process.exit(code); // watcher threads and timers end with it
    }),
  );
}
