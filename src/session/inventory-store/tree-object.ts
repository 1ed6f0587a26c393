/**
 * The directory objects of an inventory: what a listing holds (files and subdirectories), the
 * tree of listings a list of entries makes, and the one canonical text and name of a listing's
 * object. The plain put (./inventory-store.ts) and the resident put (./put-memory.ts) both make
 * their objects here, so the two cannot disagree on a byte.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '../../core/jcs.js';
import { compareUtf8 } from '../../core/utf8.js';

/** One inventoried path, as the repo-snapshot engine reports it. */
export interface InventoryEntry {
  path: string;
  bytes: number;
  sha256?: string;
  mode: string;
  kind: string;
}

export interface FileNode {
  name: string;
  bytes: number;
  sha256?: string;
  mode: string;
  kind: string;
}
export interface DirRef {
  name: string;
  tree: string;
}
export type TreeEntry = FileNode | DirRef;
export interface TreeObject {
  entries: TreeEntry[];
}

export function isDirRef(entry: TreeEntry): entry is DirRef {
  return 'tree' in entry;
}

/** A directory of the tree being put; `made` is its object once named (see hashNode, PutMemory). */
export interface BuildNode {
  files: FileNode[];
  dirs: Map<string, BuildNode>;
  made?: MadeObject;
}

/**
 * A directory object with what it was made of: an object is a function of its listing alone
 * (files, and the names and objects of its subdirectories).
 */
export interface MadeObject {
  files: readonly FileNode[];
  children: readonly DirRef[];
  hex: string;
  text: string;
  object: TreeObject;
}

/**
 * The object of a listing: its entries sorted by UTF-8 order (a stable sort, files first),
 * serialised and named. `keepTexts`: keep the frozen file nodes' texts for the next time (a
 * caller that makes the same listings again; a one-shot put would only pay for the keeping).
 */
export function makeObject(files: readonly FileNode[], children: readonly DirRef[], keepTexts = false): MadeObject {
  const entries: TreeEntry[] = [...files, ...children];
  entries.sort((a, b) => compareUtf8(a.name, b.name));
  const text = canonicalTree(entries, keepTexts);
  return { files, children, hex: createHash('sha256').update(text).digest('hex'), text, object: { entries } };
}

/** The file node of an entry named `name` (its path's last segment); frozen, so that its text may be kept (fileText). */
export function fileNodeOf(entry: InventoryEntry, name: string): FileNode {
  const file: FileNode = { name, bytes: entry.bytes, mode: entry.mode, kind: entry.kind };
  if (entry.sha256 !== undefined) file.sha256 = entry.sha256;
  return Object.freeze(file);
}

/** The directory tree of `entries` (POSIX paths), files in the order given. */
export function buildTree(entries: readonly InventoryEntry[]): BuildNode {
  const root: BuildNode = { files: [], dirs: new Map() };
  for (const entry of entries) {
    const segments = entry.path.split('/');
    const name = segments.pop() as string;
    dirNodeAt(root, segments).files.push(fileNodeOf(entry, name));
  }
  return root;
}

/** The node of directory `segments` below `root`, made where missing; `visit` sees `root` and each node on the way. */
export function dirNodeAt(root: BuildNode, segments: readonly string[], visit?: (node: BuildNode) => void): BuildNode {
  let node = root;
  visit?.(node);
  for (const segment of segments) {
    let child = node.dirs.get(segment);
    if (child === undefined) {
      child = { files: [], dirs: new Map() };
      node.dirs.set(segment, child);
    }
    node = child;
    visit?.(node);
  }
  return node;
}

/**
 * `canonicalize({entries})` (RFC 8785), written out for the two fixed entry shapes: trees of
 * 10^5 files are serialized on every snapshot, and the generic canonicalizer's per-object key
 * sort dominated. Keys are emitted in JCS order (bytes < kind < mode < name < sha256; name < tree);
 * a test checks equality with `canonicalize`.
 */
export function canonicalTree(entries: readonly TreeEntry[], keepTexts = false): string {
  const parts: string[] = [];
  for (const e of entries) parts.push(isDirRef(e) ? `{"name":${JSON.stringify(e.name)},"tree":${JSON.stringify(e.tree)}}` : fileText(e, keepTexts));
  return `{"entries":[${parts.join(',')}]}`;
}

/**
 * The texts of frozen file nodes kept by makeObject's callers that asked: a long-running
 * process's put makes again the objects of the directories on every changed path, whose other
 * files are the same nodes as last time (a 1 % change of a 50k-file tree remakes ~2,000
 * listings). A text goes with its node.
 */
const FILE_TEXT = new WeakMap<FileNode, string>();

function fileText(e: FileNode, keep: boolean): string {
  const known = keep ? FILE_TEXT.get(e) : undefined;
  if (known !== undefined) return known;
  const sha = e.sha256 === undefined ? '' : `,"sha256":${JSON.stringify(e.sha256)}`;
  const text = `{"bytes":${canonicalNumber(e.bytes)},"kind":${JSON.stringify(e.kind)},"mode":${JSON.stringify(e.mode)},"name":${JSON.stringify(e.name)}${sha}}`;
  // (A node not frozen might be changed after: its text is not kept.)
  if (keep && Object.isFrozen(e)) FILE_TEXT.set(e, text);
  return text;
}

function canonicalNumber(n: number): string {
  // Sizes are non-negative integers; anything else goes through the full canonicalizer (which rejects NaN).
  return Number.isSafeInteger(n) ? String(n) : canonicalize(n);
}

