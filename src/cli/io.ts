import { CairnError, isCodedError } from '../core/errors.js';

/** Everything a command needs to talk to the terminal; injectable so tests can run commands in-process. */
export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /**
   * The CLI is the whole process (its entry point ran it), so a command may change process-wide
   * state such as the working directory. False when main() is called as a library (tests).
   */
  ownsProcess?: boolean;
  /** The executable's daemon lane asked the project's `cairn daemon` already, which did not serve: do not ask again. */
  daemonTried?: boolean;
}

export function defaultIO(): CliIO {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** Thrown by commands for bad flags or arguments; the CLI exits 2. */
export class UsageError extends CairnError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('ERR_USAGE', message, details === undefined ? { exitCode: 2 } : { exitCode: 2, details });
  }
}

/** Thrown by a command to finish with a given exit code after it already printed what it had to. */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export function writeJson(io: CliIO, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function writeLine(stream: NodeJS.WritableStream, line = ''): void {
  stream.write(`${line}\n`);
}

/** Progress lines go to a TTY stderr only, never under --json or in CI. */
export function progressAllowed(io: CliIO, json = false): boolean {
  return Boolean(io.stderr.isTTY) && !json && !io.env.CI;
}

/**
 * Prints an error the way every command does and returns the exit code to use. A coded error
 * (CairnError, SessionError) is one JSON line `{code, message, path?, details?}` on stderr, for
 * machines and pipes; on a terminal, unless `--json` was given, it is one human line plus a hint.
 */
export function reportError(io: CliIO, e: unknown, style: { json?: boolean; command?: string } = {}): number {
  if (e instanceof ExitCode) return e.code;
  if (isCodedError(e)) {
    if (io.stderr.isTTY === true && style.json !== true) {
      const help = style.command ? `cairn ${style.command} --help` : 'cairn --help';
      io.stderr.write(`cairn: ${e.message}\n`);
      io.stderr.write(`hint: ${e.code} (exit ${e.exitCode}); \`${help}\` shows usage and exit codes, --json prints this error as JSON\n`);
    } else io.stderr.write(`${JSON.stringify(e.toJSON())}\n`);
    return e.exitCode;
  }
  if (e instanceof Error) {
    const code = (e as { exitCode?: unknown }).exitCode;
    const name = e.name && e.name !== 'Error' ? `${e.name}: ` : 'error: ';
    io.stderr.write(`${name}${e.message}\n`);
    return typeof code === 'number' ? code : 1;
  }
  io.stderr.write(`error: ${String(e)}\n`);
  return 1;
}
