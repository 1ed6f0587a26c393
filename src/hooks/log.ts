/**
 * The hook log, `<root>/.cairn/hooks/hook.log`: one JSON line per hook call (what it did, how long
 * it took) and per problem. A hook never reports to the agent (that would break its turn), so this
 * is where errors go; `cairn hooks status` shows the latest. Lines are appended with O_APPEND (one
 * write each, so concurrent hooks do not interleave); past 1 MiB the log moves to `hook.log.1`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainedDir } from '../core/contained-dir.js';

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

/** `<root>/.cairn/hooks`, reached without following a link below the root (a planted link is refused). */
function openHooksDir(root: string, create: boolean): ContainedDir | null {
  return ContainedDir.open(root, path.dirname(HOOK_LOG).split(path.sep), { create });
}

export function appendHookLog(root: string, entry: HookLogEntry): void {
  const name = path.basename(HOOK_LOG);
  let dir: ContainedDir | null = null;
  try {
    dir = openHooksDir(root, true)!;
    if ((dir.lstat(name)?.size ?? 0) > MAX_LOG_BYTES) dir.rename(name, `${name}.1`);
    const fd = fs.openSync(dir.at(name), fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK, 0o644);
    try {
      if (fs.fstatSync(fd).isFile()) fs.writeSync(fd, `${JSON.stringify(entry)}\n`);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Nowhere left to report to (or a link planted there); the hook still exits 0.
  } finally {
    dir?.close();
  }
}

/** The newest `limit` entries, newest last. */
export function readHookLog(root: string, limit = 200): HookLogEntry[] {
  const out: HookLogEntry[] = [];
  let dir: ContainedDir | null;
  try {
    dir = openHooksDir(root, false);
  } catch {
    return out; // a link or a file where .cairn/hooks should be: no log to show
  }
  if (dir === null) return out;
  const name = path.basename(HOOK_LOG);
  try {
    for (const file of [`${name}.1`, name]) {
      let text: string;
      try {
        text = dir.readFile(file, { maxBytes: 4 * MAX_LOG_BYTES })?.toString('utf8') ?? '';
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
  } finally {
    dir.close();
  }
  return out.slice(-limit);
}
