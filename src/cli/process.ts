/**
 * `cairn` as a whole process: what every way of running a command (the full CLI, a fast lane)
 * does around it. The exit code goes to process.exitCode, never process.exit, so stdout drains.
 */
import { defaultIO, type CliIO } from './io.js';

/** Runs `command` as this process: its exit code, quiet EPIPE on stdout, an internal error's stack. */
export function runAsCairnProcess(command: (io: CliIO) => Promise<number>): void {
  // The AWS SDK warns on stderr that Node 20 support ends; that is noise in a CLI's diagnostics.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // A reader that stops early (`cairn --help | head`) closes the pipe: end quietly, as Unix tools
  // do, instead of a stack trace for the EPIPE. Other stdout errors still surface.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(process.exitCode ?? 0);
  });
  command({ ...defaultIO(), ownsProcess: true }).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`cairn: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
