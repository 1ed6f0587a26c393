/** File snapshots: the seed's key files and the agent state directory, hashed with SHA-256. */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compareUtf8, decodeUtf8Strict } from '../core/utf8.js';
import { isTempName } from '../core/atomic-write.js';
import type { AiwgState, FileSnapshot } from './types.js';
import { isRecord } from '../core/jcs.js';
import { STATE_JSON_DEPTH, parseJsonBounded } from '../core/bounded-json.js';
import { ContainedDir, ContainmentError, rootedAt } from '../core/contained-dir.js';
import { CairnError } from '../core/errors.js';

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
 * SHA-256, size and mtime of one file; `path` is POSIX and relative to projectRoot. The file is
 * reached from the root with no link followed in any component (ContainedDir); a path outside
 * the root, a link or anything but a regular file is refused with ERR_CONTAINMENT. One open:
 * the size is that of the bytes hashed and the mtime that of the file read. Opened
 * non-blocking, so a FIFO in its place cannot hang the snapshot.
 */
export function createFileSnapshot(projectRoot: string, filePath: string): FileSnapshot {
  const root = path.resolve(projectRoot);
  const absolute = path.resolve(root, filePath);
  const { root: from, parts } = rootedAt(path.dirname(absolute), root);
  if (from !== root) throw new ContainmentError(absolute, 'outside');
  const dir = ContainedDir.require(root, parts);
  try {
    const name = path.basename(absolute);
    const fd = dir.openFile(name);
    if (fd === null) throw Object.assign(new Error(`ENOENT: no such file ${absolute}`), { code: 'ENOENT' });
    try {
      const stat = fs.fstatSync(fd);
      if (!stat.isFile()) throw new ContainmentError(absolute, 'not-a-file');
      const content = fs.readFileSync(fd);
      return { path: toPosixRelative(root, absolute), hash: createHash('sha256').update(content).digest('hex'), size: content.length, mtime: stat.mtime.toISOString() };
    } finally {
      fs.closeSync(fd);
    }
  } finally {
    dir.close();
  }
}

/** SHA-256, size and mtime of the regular file `name` in an opened directory (no link followed); null when it is not one. */
function snapshotIn(dir: ContainedDir, name: string, relPath: string): FileSnapshot | null {
  let fd: number | null;
  try {
    fd = dir.openFile(name);
  } catch {
    return null; // a link, or unreadable
  }
  if (fd === null) return null;
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return null;
    const content = fs.readFileSync(fd);
    return { path: relPath, hash: createHash('sha256').update(content).digest('hex'), size: content.length, mtime: stat.mtime.toISOString() };
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A snapshot of each key file that exists as a regular file at its name; missing ones, links
 * (a `package.json -> /etc/hostname` is not the project's), directories and the like are skipped.
 */
export function captureKeyFiles(projectRoot: string): FileSnapshot[] {
  const out: FileSnapshot[] = [];
  const root = ContainedDir.open(projectRoot);
  if (root === null) return out;
  try {
    for (const name of KEY_FILES) {
      const snap = snapshotIn(root, name, name);
      if (snap !== null) out.push(snap);
    }
  } finally {
    root.close();
  }
  return out;
}

function isOwnFile(name: string): boolean {
  return name === PRE_SNAPSHOT_FILE || name === POST_SNAPSHOT_FILE || isTempName(name);
}

/**
 * The state directory's components below the project root. A state dir outside the root (or
 * the root itself) is refused with ERR_CONTAINMENT (exit 2): cairn records the agent's state,
 * not the machine's.
 */
export function stateDirParts(projectRoot: string, stateDir: string): string[] {
  const root = path.resolve(projectRoot);
  const { root: from, parts } = rootedAt(path.resolve(root, stateDir), root);
  if (from !== root || parts.length === 0) {
    throw new CairnError('ERR_CONTAINMENT', `state dir ${JSON.stringify(stateDir)} is not inside the project root ${root}; name a directory inside it (default .aiwg)`, { path: stateDir, exitCode: 2 });
  }
  return parts;
}

/**
 * Every regular file under the state directory, sorted by path. Links are never followed, at
 * the state dir itself or anywhere below it (a link to `/` must not make us hash the machine):
 * each directory is opened through its parent (ContainedDir). The manager's own snapshot files
 * and in-flight temp files are left out, so they never show up as artifacts.
 */
export function captureStateDir(projectRoot: string, stateDir: string = DEFAULT_STATE_DIR): AiwgState {
  const parts = stateDirParts(projectRoot, stateDir);
  const files: FileSnapshot[] = [];
  let ralphState: Record<string, unknown> | null = null;
  let base: ContainedDir | null;
  try {
    base = ContainedDir.open(path.resolve(projectRoot), parts);
  } catch {
    base = null; // a link or a file where the state dir should be: no state to report
  }
  if (base === null) return { files, ralphState };
  const walk = (dir: ContainedDir, rel: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = dir.entries();
    } catch {
      return;
    }
    for (const entry of entries) {
      const relPath = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        let child: ContainedDir | null;
        try {
          child = dir.child(entry.name);
        } catch {
          continue; // swapped for a link meanwhile
        }
        if (child === null) continue;
        try {
          walk(child, relPath);
        } finally {
          child.close();
        }
      } else if (entry.isFile() && !isOwnFile(entry.name)) {
        const snap = snapshotIn(dir, entry.name, relPath);
        if (snap !== null) files.push(snap);
      }
    }
  };
  try {
    walk(base, parts.join('/'));
    ralphState = readRalphState(base);
  } finally {
    base.close();
  }
  files.sort((a, b) => compareUtf8(a.path, b.path));
  return { files, ralphState };
}

/** The largest Ralph state file embedded in a record. */
const MAX_RALPH_STATE_BYTES = 1024 * 1024;

/** `ralph/current-loop.json`, when it is a regular file (no link) of bounded size and depth; else null. */
function readRalphState(stateDir: ContainedDir): Record<string, unknown> | null {
  try {
    const ralph = stateDir.child('ralph');
    if (ralph === null) return null;
    try {
      const where = path.join(ralph.path, 'current-loop.json');
      const bytes = ralph.readFile('current-loop.json', { maxBytes: MAX_RALPH_STATE_BYTES });
      if (bytes === null) return null;
      const parsed = parseJsonBounded(decodeUtf8Strict(bytes, where), { file: where, maxDepth: STATE_JSON_DEPTH });
      return isRecord(parsed) ? parsed : null;
    } finally {
      ralph.close();
    }
  } catch {
    return null; // a link, too big, too deep, not UTF-8 or not JSON: no state to embed
  }
}
