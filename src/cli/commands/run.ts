/**
 * `cairn run -- <command…>`: runs a command (tests, a build) as the shell would, streams its output
 * as usual, keeps it under the open iteration (`run-NNN.log` + `run-NNN.json`), and exits with
 * the command's exit code, so it can stand in front of any test command in an agent's loop.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { readFileWithin } from '../../core/contained-dir.js';
import { UsageError, ExitCode, writeLine, type CliIO } from '../io.js';
import { ROOT_HELP, projectRoot } from '../root.js';

const RUN_HELP = `
Examples:
  cairn run -- npm test
  cairn run -- pytest -q
  cairn run --iteration-dir .cairn/iterations/004 -- go test ./...

The output goes to your terminal as usual and, while an iteration is open (after \`cairn session
pre\`, before \`session post\`), also to <iteration>/run-NNN.log with a run-NNN.json record (command,
exit code, duration). \`cairn session post\` reports the tests of the newest run whose output it
recognises (Jest, Vitest, Mocha, TAP, node:test, pytest, go test, cargo test, JUnit), before it
searches the usual places. Which iteration: --iteration-dir, else $CAIRN_ITERATION_DIR, else the
newest open iteration of the agent session in $CAIRN_AGENT_SESSION (set by the agent hooks), else
the newest open iteration. With none open, the command still runs and nothing is kept.

Exit code: the command's own; 128+N when signal N ended it; 127 when it could not be started.`;

/** Logs keep the head and the tail of a longer output (the summary a parser needs is at the end). */
const LOG_HEAD_BYTES = 4 * 1024 * 1024;
const LOG_TAIL_BYTES = 4 * 1024 * 1024;

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

type SessionLib = typeof import('../../session/index.js');

/** The iteration a run belongs to, or null when none is open. */
function openIteration(lib: SessionLib, io: CliIO, root: string, flag: string | undefined): string | null {
  const explicit = flag ?? (io.env.CAIRN_ITERATION_DIR || undefined);
  if (explicit !== undefined) {
    const dir = path.resolve(io.cwd, explicit);
    if (!fs.existsSync(path.join(dir, lib.PRE_SNAPSHOT_FILE))) throw new UsageError(`${dir} holds no pre-snapshot; start the iteration with \`cairn session pre\` or name another with --iteration-dir`);
    return dir;
  }
  const open = lib.openIterationDirs(root);
  const agentSession = io.env.CAIRN_AGENT_SESSION;
  if (agentSession) {
    for (let i = open.length - 1; i >= 0; i--) {
      try {
        // No link followed below the root: a planted agent.json link must not be read.
        const bytes = readFileWithin(path.join(open[i]!, 'agent.json'), root, { maxBytes: 64 * 1024 });
        const agent = bytes === null ? null : (JSON.parse(bytes.toString('utf8')) as { sessionId?: unknown } | null);
        if (agent?.sessionId === agentSession) return open[i]!;
      } catch {
        // not an agent's iteration
      }
    }
  }
  return open.at(-1) ?? null;
}

/** Appends output to the log: everything up to the head cap, then a rolling tail. */
class BoundedLog {
  written = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  constructor(private readonly fd: number) {}
  write(chunk: Buffer): void {
    this.written += chunk.length;
    const headRoom = LOG_HEAD_BYTES - (this.written - chunk.length);
    if (headRoom > 0) {
      fs.writeSync(this.fd, chunk, 0, Math.min(headRoom, chunk.length));
      if (headRoom >= chunk.length) return;
      chunk = chunk.subarray(headRoom);
    }
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes - this.tail[0]!.length >= LOG_TAIL_BYTES) this.tailBytes -= this.tail.shift()!.length;
  }
  close(): boolean {
    const truncated = this.written > LOG_HEAD_BYTES + this.tailBytes;
    if (truncated) fs.writeSync(this.fd, `\n[cairn run: ${this.written - LOG_HEAD_BYTES - this.tailBytes} bytes of output left out here]\n`);
    for (const part of this.tail) fs.writeSync(this.fd, part);
    fs.closeSync(this.fd);
    return truncated;
  }
}

export function registerRunCommand(program: Command, io: CliIO): void {
  program
    .command('run')
    .summary('run a command (tests, a build) and keep its output under the open iteration')
    .description('Run a command, stream its output, keep it under the open iteration, and exit with its exit code')
    .argument('<command...>', 'the command and its arguments (put them after --)')
    .option('--root <dir>', ROOT_HELP)
    .option('--iteration-dir <dir>', 'the iteration to keep the output in (default: the open one, see below)')
    .addHelpText('after', RUN_HELP)
    .action(async (command: string[], opts: { root?: string; iterationDir?: string }) => {
      const lib = await import('../../session/index.js');
      const root = projectRoot(io, opts.root);
      const iterationDir = openIteration(lib, io, root, opts.iterationDir);
      let log: { name: string; out: BoundedLog } | null = null;
      if (iterationDir === null) {
        writeLine(io.stderr, 'cairn run: no open iteration (run `cairn session pre` first); the output is not kept');
      } else {
        try {
          const claimed = lib.claimRunLog(iterationDir, root);
          log = { name: claimed.name, out: new BoundedLog(claimed.fd) };
        } catch (e) {
          writeLine(io.stderr, `cairn run: cannot keep the output in ${iterationDir} (${(e as Error).message}); running anyway`);
        }
      }
      const { spawn } = await import('node:child_process'); // on use: it loads net, streams, dgram
      const startedAt = new Date();
      const result = await new Promise<{ exitCode: number | null; signal: string | null; spawnError?: Error }>((resolve) => {
        const child = spawn(command[0]!, command.slice(1), { cwd: io.cwd, env: io.env, stdio: ['inherit', 'pipe', 'pipe'] });
        const forward = (target: NodeJS.WritableStream) => (chunk: Buffer) => {
          target.write(chunk);
          log?.out.write(chunk);
        };
        child.stdout.on('data', forward(io.stdout));
        child.stderr.on('data', forward(io.stderr));
        // Ctrl-C reaches the child through the terminal's process group; cairn waits for it to end.
        const ignore = (): void => {};
        const term = (): void => void child.kill('SIGTERM');
        process.on('SIGINT', ignore);
        process.on('SIGTERM', term);
        const done = (r: { exitCode: number | null; signal: string | null; spawnError?: Error }): void => {
          process.off('SIGINT', ignore);
          process.off('SIGTERM', term);
          resolve(r);
        };
        child.on('error', (e) => done({ exitCode: null, signal: null, spawnError: e }));
        child.on('close', (code, signal) => done({ exitCode: code, signal }));
      });
      let exit: number;
      if (result.spawnError) {
        writeLine(io.stderr, `cairn run: cannot run ${command[0]}: ${result.spawnError.message}`);
        exit = 127;
      } else if (result.signal !== null) exit = 128 + (SIGNALS[result.signal] ?? 1);
      else exit = result.exitCode ?? 1;
      if (log !== null && iterationDir !== null) {
        const truncated = log.out.close();
        const record: import('../../session/index.js').RunRecord = {
          command,
          exitCode: result.spawnError ? 127 : result.exitCode,
          startedAt: startedAt.toISOString(),
          durationMs: Date.now() - startedAt.getTime(),
          log: `${log.name}.log`,
          outputBytes: log.out.written,
        };
        if (result.signal !== null) record.signal = result.signal;
        if (truncated) record.truncated = true;
        try {
          lib.writeRunRecord(iterationDir, log.name, record, root);
        } catch (e) {
          writeLine(io.stderr, `cairn run: the run record could not be written (${(e as Error).message})`);
        }
      }
      if (exit !== 0) throw new ExitCode(exit);
    });
}
