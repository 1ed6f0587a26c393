/**
 * The file store's view of its base directory, built on the containment primitive
 * (src/core/contained-dir.ts, whose header says how it works and what holds on each platform):
 * every directory below the base, and below `within` when the base itself lies inside a
 * directory cairn owns (the CLI's default `<root>/.cairn/store`), is opened without following
 * a link, and every read, write and delete goes through the opened directory, so neither a
 * planted link nor one swapped in mid-operation can take it outside. Only regular files are read.
 */
import type * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainedDir, ContainmentError, rootedAt } from '../../../core/contained-dir.js';
import { decodeUtf8Strict } from '../../../core/utf8.js';
import { stampOf, type DirStamp } from './history-index.js';

/** A link, a non-directory or a swap met where the store expects its own directory or file (ERR_CONTAINMENT). */
export { ContainmentError as RefusedPathError };

/** The most a store document may be: larger files are refused unread (cairn never writes one). */
export const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;

export class ContainedFs {
  /** Absolute, normalised base directory. */
  readonly base: string;
  /** Where no link is followed from: the base itself, or the `within` directory above it. */
  private readonly root: string;
  private readonly prefix: readonly string[];

  constructor(base: string, within?: string) {
    this.base = path.resolve(base);
    const { root, parts } = rootedAt(this.base, within);
    this.root = root;
    this.prefix = parts;
  }

  /** Absolute path of `parts` below the base; refuses anything that would leave it. */
  pathOf(...parts: string[]): string {
    const p = path.resolve(this.base, ...parts);
    if (p !== this.base && !p.startsWith(this.base.endsWith(path.sep) ? this.base : this.base + path.sep)) {
      throw new ContainmentError(p, 'outside');
    }
    return p;
  }

  /**
   * Runs `fn` with the directory `parts` opened (made when `create`), closing it after; `fn`
   * gets null when it is missing. Paths from `dir.at(name)` stay valid only inside `fn`.
   */
  async withDir<T>(parts: readonly string[], create: boolean, fn: (dir: ContainedDir | null) => T | Promise<T>): Promise<T> {
    if (create) this.pathOf(...parts);
    const dir = ContainedDir.open(this.root, [...this.prefix, ...parts], { create });
    try {
      return await fn(dir);
    } finally {
      dir?.close();
    }
  }

  /** True when every directory of `parts` exists as a real directory, false when one is missing; ContainmentError on a link or a file. */
  probeDirs(parts: readonly string[]): Promise<boolean> {
    return this.withDir(parts, false, (dir) => dir !== null);
  }

  /** Creates the directories of `parts` one by one, each a real directory reached without links. */
  async ensureDirs(parts: readonly string[]): Promise<string> {
    await this.withDir(parts, true, () => undefined);
    return this.pathOf(...parts);
  }

  /** Text (strict UTF-8) of the regular file `parts/name`, or null when it (or a directory above it) is missing. */
  readText(parts: readonly string[], name: string): Promise<string | null> {
    return this.withDir(parts, false, (dir) => {
      const bytes = dir?.readFile(name, { maxBytes: MAX_DOCUMENT_BYTES }) ?? null;
      return bytes === null ? null : decodeUtf8Strict(bytes, dir!.shown(name));
    });
  }

  /** Writes `parts/name` atomically in its opened directory (made as needed); `exclusive` fails with EEXIST. */
  writeText(parts: readonly string[], name: string, text: string, options: { exclusive: boolean; fsync: boolean }): Promise<void> {
    return this.withDir(parts, true, (dir) => dir!.writeFile(name, text, options));
  }

  /** Names in the directory `parts`, or null when it is missing. */
  list(parts: readonly string[]): Promise<fs.Dirent[] | null> {
    return this.withDir(parts, false, (dir) => dir?.entries() ?? null);
  }

  /** Streams the entries of the directory `parts` to `visit`. False when the directory is missing. */
  forEachEntry(parts: readonly string[], visit: (entry: fs.Dirent) => void): Promise<boolean> {
    return this.withDir(parts, false, (dir) => {
      dir?.forEachEntry(visit);
      return dir !== null;
    });
  }

  /** Identity and timestamps (ns) of the directory `parts`, which must exist. */
  dirStamp(parts: readonly string[]): Promise<DirStamp> {
    return this.withDir(parts, false, (dir) => {
      if (dir === null) throw Object.assign(new Error(`ENOENT: ${this.pathOf(...parts)}`), { code: 'ENOENT' });
      return stampOf(dir.stat({ bigint: true }));
    });
  }

  /** lstat of `parts/name`, or null when missing. */
  lstat(parts: readonly string[], name: string): Promise<fs.Stats | null> {
    return this.withDir(parts, false, (dir) => dir?.lstat(name) ?? null);
  }

  /** Removes the file (or link) `parts/name`; false when it was already gone. */
  unlink(parts: readonly string[], name: string): Promise<boolean> {
    return this.withDir(parts, false, (dir) => dir?.unlink(name) ?? false);
  }

  /** Removes `parts/name` and everything below it; links are removed, never followed. */
  removeTree(parts: readonly string[], name: string): Promise<boolean> {
    return this.withDir(parts, false, (dir) => dir?.removeTree(name) ?? false);
  }

  /** fsync the directory `parts` (best effort). */
  syncDir(parts: readonly string[]): Promise<void> {
    return this.withDir(parts, false, (dir) => dir?.fsync());
  }
}
