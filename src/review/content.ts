/**
 * Where the review reads the bytes of a path as it was at pre or at post. The diff engine asks
 * through `ContentSource` only. The source used is the content store `session pre`/`post` fill
 * (`src/content/`), which looks in the store, then in the commits git holds the files at, then
 * on disk, each checked against the inventory's sha256; so a source that lost a version gives
 * null (the file is then reported as "not captured"), never a wrong diff. Iterations captured
 * before cairn kept content are read the same way from their pre and post HEAD commits.
 */
import * as fs from 'node:fs';
import { commitsOf, resolversBySide, type Side } from '../content/read.js';
import { capturedBytes, openContentStore } from '../content/capture.js';
import { ContainedDir } from '../core/contained-dir.js';
import type { InventoryEntry } from '../session/inventory-store/inventory-store.js';
import type { PostSnapshot, PreSnapshot } from '../session/types.js';

export type { Side };

export interface ContentRequest {
  side: Side;
  /** POSIX path relative to the project root. */
  path: string;
  /** The inventory's entry for this path on this side (kind, mode, size, sha256). */
  entry: InventoryEntry;
}

/** Bytes of a regular file, or a symlink's target as bytes; null when not available. */
export interface ContentSource {
  read(requests: readonly ContentRequest[]): Array<Buffer | null>;
}

const COMMIT = /^[0-9a-f]{40,64}$/;

/**
 * A symlink's target read from the working tree, when the path is still a symlink (post only).
 * Its directory is reached from the root with no link followed (ContainedDir): a directory
 * swapped for a link cannot make this read a link outside the project.
 */
function linkOnDisk(root: string, rel: string): Buffer | null {
  const parts = rel.split('/');
  const name = parts.pop()!;
  let dir: ContainedDir | null = null;
  try {
    dir = ContainedDir.open(root, parts);
    return dir?.lstat(name)?.isSymbolicLink() === true ? fs.readlinkSync(dir.at(name), { encoding: 'buffer' }) : null;
  } catch {
    return null;
  } finally {
    dir?.close();
  }
}

/**
 * The content of an iteration's two sides, from `<cairnDir>/content` and git. When `post` is
 * the record this process's capture just made, the bytes that capture copied (checked against
 * their digests as it copied them) are taken from it first (content/capture.ts capturedBytes).
 */
export function iterationContentSource(root: string, cairnDir: string, pre: PreSnapshot, post: PostSnapshot): ContentSource {
  const kept = pre.content !== undefined || post.content !== undefined;
  const captured = capturedBytes(post.content);
  const held = (r: ContentRequest): Buffer | undefined => (r.entry.kind === 'file' && r.entry.sha256 !== undefined ? captured.get(r.entry.sha256) : undefined);
  const heads = (side: Side): string[] => (side === 'pre' ? [pre.git.commit, post.git.commit] : [post.git.commit, pre.git.commit]).filter((c) => COMMIT.test(c));
  // As openIteration reads a side, and the HEADs too: iterations kept before content was get their bytes from git
  const resolver = resolversBySide(root, openContentStore(cairnDir), (side) => (kept ? [...new Set([...commitsOf(pre, post, side), ...heads(side)])] : heads(side)));
  return {
    read(requests) {
      for (const side of ['pre', 'post'] as const) {
        const files = requests.filter((r) => r.side === side && r.entry.kind === 'file' && held(r) === undefined).map((r) => r.entry);
        if (files.length > 0) resolver(side).prefetch(files);
      }
      return requests.map((r) => {
        if (r.entry.kind === 'file') return held(r) ?? resolver(r.side).bytes(r.entry);
        const target = (r.side === 'pre' ? pre.content : post.content)?.symlinks?.[r.path];
        if (target !== undefined) return Buffer.from(target, 'utf8');
        return r.side === 'post' && !kept ? linkOnDisk(root, r.path) : null;
      });
    },
  };
}
