/** File snapshots: the seed's key files and the agent state directory, hashed with SHA-256. */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compareUtf8 } from '../core/utf8.js';
import { isTempName } from '../core/atomic-write.js';
import type { AiwgState, FileSnapshot } from './types.js';
import { isRecord } from '../core/jcs.js';

/** The seed's key files, in the seed's order. */
export const KEY_FILES: readonly string[] = Object.freeze([
  'package.json',
  'package-lock.json',
  'CLAUDE.md',
  'CHANGELOG.md',
  '.gitignore',
  'tsconfig.json',
]);

/** The seed's state directory. */
export const DEFAULT_STATE_DIR = '.aiwg';

/** Names of the snapshot manager's own files: never reported as state-dir artifacts. */
export const PRE_SNAPSHOT_FILE = 'pre-snapshot.json';
export const POST_SNAPSHOT_FILE = 'post-snapshot.json';

/** `path.relative` in POSIX form, whatever the platform separator. */
export function toPosixRelative(from: string, to: string): string {
  return path.relative(from, to).split(path.sep).join('/');
}

/**
 * SHA-256, size and mtime of one file; `path` is POSIX and relative to projectRoot. One open:
 * the size is that of the bytes hashed and the mtime that of the file read (no second stat that
 * could see another version). Opened non-blocking, so a FIFO in its place cannot hang the
 * snapshot; anything but a regular file is refused.
 */
export function createFileSnapshot(projectRoot: string, filePath: string): FileSnapshot {
  const absolute = path.resolve(projectRoot, filePath);
  const fd = fs.openSync(absolute, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw Object.assign(new Error(`not a regular file: ${absolute}`), { code: stat.isDirectory() ? 'EISDIR' : 'EINVAL' });
    const content = fs.readFileSync(fd);
    return {
      path: toPosixRelative(path.resolve(projectRoot), absolute),
      hash: createHash('sha256').update(content).digest('hex'),
      size: content.length,
      mtime: stat.mtime.toISOString(),
    };
  } finally {
    fs.closeSync(fd);
  }
}

/** A snapshot of each key file that exists as a regular file; missing ones, directories and the like are skipped. */
export function captureKeyFiles(projectRoot: string): FileSnapshot[] {
  const out: FileSnapshot[] = [];
  for (const name of KEY_FILES) {
    try {
      out.push(createFileSnapshot(projectRoot, path.join(projectRoot, name)));
    } catch {
      // missing, not a regular file, or unreadable: skipped
    }
  }
  return out;
}

function isOwnFile(name: string): boolean {
  return name === PRE_SNAPSHOT_FILE || name === POST_SNAPSHOT_FILE || isTempName(name);
}

/**
 * Every regular file under the state directory, sorted by path. Symlinks are never followed
 * (a link to `/` must not make us hash the machine); the manager's own snapshot files and
 * in-flight temp files are left out, so they never show up as artifacts.
 */
export function captureStateDir(projectRoot: string, stateDir: string = DEFAULT_STATE_DIR): AiwgState {
  const base = path.resolve(projectRoot, stateDir);
  const files: FileSnapshot[] = [];
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const absolute = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(absolute);
      else if (entry.isFile() && !isOwnFile(entry.name)) {
        try {
          files.push(createFileSnapshot(projectRoot, absolute));
        } catch {
          // removed or unreadable mid-walk: not an artifact we can vouch for
        }
      }
    }
  };
  walk(base);
  files.sort((a, b) => compareUtf8(a.path, b.path));
  return { files, ralphState: readRalphState(base) };
}

function readRalphState(stateDirAbsolute: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(path.join(stateDirAbsolute, 'ralph', 'current-loop.json'), 'utf8'));
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
