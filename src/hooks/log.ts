/**
 * The hook log, `<root>/.cairn/hooks/hook.log`: one JSON line per hook call (what it did, how long
 * it took) and per problem. A hook never reports to the agent (that would break its turn), so this
 * is where errors go; `cairn hooks status` shows the latest. Lines are appended with O_APPEND (one
 * write each, so concurrent hooks do not interleave); past 1 MiB the log moves to `hook.log.1`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const HOOK_LOG = path.join('.cairn', 'hooks', 'hook.log');
const MAX_LOG_BYTES = 1024 * 1024;

export interface HookLogEntry {
  time: string;
  level: 'info' | 'error';
  agent: string;
  event?: string;
  session?: string;
  /** What the hook did: pre, post, context, joined (an iteration was open), nothing. */
  did?: string;
  iteration?: string;
  ms?: number;
  message?: string;
}

export function appendHookLog(root: string, entry: HookLogEntry): void {
  const file = path.join(root, HOOK_LOG);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      if (fs.statSync(file).size > MAX_LOG_BYTES) fs.renameSync(file, `${file}.1`);
    } catch {
      // no log yet
    }
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o644);
    try {
      fs.writeSync(fd, `${JSON.stringify(entry)}\n`);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Nowhere left to report to; the hook still exits 0.
  }
}

/** The newest `limit` entries, newest last. */
export function readHookLog(root: string, limit = 200): HookLogEntry[] {
  const out: HookLogEntry[] = [];
  for (const file of [`${path.join(root, HOOK_LOG)}.1`, path.join(root, HOOK_LOG)]) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        out.push(JSON.parse(line) as HookLogEntry);
      } catch {
        // a torn line
      }
    }
  }
  return out.slice(-limit);
}
