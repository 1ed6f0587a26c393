/**
 * The last put of a long-running process, kept in memory so that its next put costs what
 * changed: the tree it built (each directory with its object), an index of its files by path,
 * and the objects known to be on disk. A put of new entries finds the paths whose entry differs
 * from the last put's, patches only the directories on those paths, and makes (serialises and
 * names) only their objects, with the same makeObject the plain put uses; every other directory
 * keeps its object.
 *
 * The patched tree names exactly the objects a plain put of the same entries names. A listing's
 * object depends on nothing but its entries, sorted by UTF-8 order with a stable sort, files
 * first: the plain put's order of the list could only show where two entries of a directory
 * have one name. Two files of one name come from a path listed twice: the memory is made only
 * of a list without one, and a patch meeting one gives up (null: the caller drops the memory
 * and puts plainly). A file and a directory of one name (`a`, `a/b`) are ordered alike by
 * both: the file first. What may be trusted on disk (the epoch, the root) is the caller's to
 * check.
 */
import { dirNodeAt, fileNodeOf, makeObject, type BuildNode, type DirRef, type FileNode, type InventoryEntry, type MadeObject } from './tree-object.js';

/** A file of the last put: its node, its place in that put's list, and the number of the put that last met it. */
interface Slot {
  path: string;
  file: FileNode;
  at: number;
  seen: number;
}

/** A path whose file differs from the last put's: the new file node, or null when the path is gone. */
interface Change {
  path: string;
  file: FileNode | null;
}

export class PutMemory {
  /** The last put's files by path, made on the first patch (a one-shot process never needs it). */
  private slots: Map<string, Slot> | null | undefined;
  /** The last put's list, in its order: a scan lists the paths of a tree in the same order each time. */
  private order: Slot[] = [];
  private puts = 0;
  /**
   * A copy of the last put's list (so a caller's later edit of its array cannot reach it), made
   * only when every entry was frozen: the next list's entries that are the same frozen objects at
   * the same offsets are unchanged without a look at their slots (a resident scan hands back the
   * entries it built for every row no event named).
   */
  private lastEntries: readonly InventoryEntry[] | null = null;

  /**
   * `root`: the last put's tree, every directory with its object (`made`); `onDisk`: the objects
   * known to be whole on disk in prune epoch `epoch` (the last put's at least).
   */
  constructor(
    readonly epoch: string,
    private readonly root: BuildNode,
    readonly onDisk: Set<string>,
  ) {}

  get rootHex(): string {
    return (this.root.made as MadeObject).hex;
  }

  /** The last put's tree: a plain put that replaces this memory reuses its directories' objects (hashNode). */
  get tree(): BuildNode {
    return this.root;
  }

  /**
   * Patches the tree to `entries` and returns the objects made for it (children before parents,
   * the root last), or null when the tree cannot be patched exactly (the memory is then spoiled:
   * drop it). Nothing changed: no object, the root stays.
   */
  patch(entries: readonly InventoryEntry[]): MadeObject[] | null {
    if (this.slots === undefined) {
      const index = indexFiles(this.root);
      this.slots = index?.slots ?? null;
      this.order = index?.order ?? [];
    }
    const slots = this.slots;
    if (slots === null) return null;
    const found = changedAtOffsets(entries, this.lastEntries, this.order) ?? changedFiles(entries, slots, this.order, ++this.puts);
    if (found === null) return null;
    this.order = found.order;
    this.lastEntries = found.allFrozen ? entries.slice() : null;
    const changes = found.changes;
    if (changes.length === 0) return [];
    // Each touched directory's new files by name; a directory on a changed path has no object now.
    const touched = new Map<BuildNode, Change[]>();
    for (const change of changes) {
      const segments = change.path.split('/');
      segments.pop();
      const node = dirNodeAt(this.root, segments, (onPath) => {
        onPath.made = undefined;
      });
      const here = touched.get(node);
      if (here === undefined) touched.set(node, [change]);
      else here.push(change);
    }
    for (const [node, here] of touched) {
      // A new array: a made object keeps the one it was made of (the plain put compares with it).
      const files = new Map(node.files.map((f) => [f.name, f]));
      for (const { path, file } of here) {
        if (file === null) files.delete(nameOf(path));
        else files.set(file.name, file);
      }
      node.files = [...files.values()];
    }
    const made: MadeObject[] = [];
    remake(this.root, made, true);
    return made;
  }
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The files of `root` by path and in the tree's order, or null when a path is there twice (a plain put's list had it twice). */
function indexFiles(root: BuildNode): { slots: Map<string, Slot>; order: Slot[] } | null {
  const slots = new Map<string, Slot>();
  const order: Slot[] = [];
  const walk = (node: BuildNode, prefix: string): boolean => {
    for (const file of node.files) {
      const path = prefix + file.name;
      if (slots.has(path)) return false;
      const slot = { path, file, at: order.length, seen: 0 };
      slots.set(path, slot);
      order.push(slot);
    }
    for (const [name, child] of node.dirs) if (!walk(child, `${prefix}${name}/`)) return false;
    return true;
  };
  return walk(root, '') ? { slots, order } : null;
}

/** The changes found, the new list's slots in its order, and whether every entry of the list is frozen. */
interface Found {
  changes: Change[];
  order: Slot[];
  allFrozen: boolean;
}

/**
 * changedFiles for a list of the last one's length whose entries, but a few, are the last list's
 * frozen objects at the same offsets: only the others are compared with their slots. Undefined
 * when the list is not such (the caller runs changedFiles): no list kept, another length, or an
 * entry that is new at its offset under another path (a path added, removed or moved).
 */
function changedAtOffsets(entries: readonly InventoryEntry[], last: readonly InventoryEntry[] | null, order: readonly Slot[]): Found | undefined {
  if (last === null || entries.length !== last.length || order.length !== last.length) return undefined;
  const changes: Change[] = [];
  const moved: Slot[] = [];
  let allFrozen = true;
  for (let k = 0; k < entries.length; k++) {
    const entry = entries[k] as InventoryEntry;
    const frozen = Object.isFrozen(entry);
    if (entry === last[k] && frozen) continue;
    allFrozen &&= frozen;
    const slot = order[k] as Slot;
    if (slot.path !== entry.path) return undefined;
    const f = slot.file;
    if (f.bytes !== entry.bytes || f.sha256 !== entry.sha256 || f.mode !== entry.mode || f.kind !== entry.kind) {
      changes.push({ path: entry.path, file: fileNodeOf(entry, f.name) });
      moved.push(slot);
    }
  }
  // Only now the slots move: a list sent on to changedFiles must meet them as they were.
  for (let c = 0; c < moved.length; c++) (moved[c] as Slot).file = (changes[c] as Change).file as FileNode;
  return { changes, order: order as Slot[], allFrozen };
}

/**
 * The paths whose file differs from the last put's (the slots brought up to date), and the new
 * list's slots in its order; null when `entries` lists a path twice. A path is looked for first
 * where the last list had the one at the same offset (a string compare, no hashing of the
 * path), and only on a miss in the map, which sets the offset again. Each slot met is stamped
 * with `put`; the unstamped are gone.
 */
function changedFiles(entries: readonly InventoryEntry[], slots: Map<string, Slot>, last: readonly Slot[], put: number): Found | null {
  const changes: Change[] = [];
  const order = new Array<Slot>(entries.length);
  let shift = 0;
  let allFrozen = true;
  for (let k = 0; k < entries.length; k++) {
    const entry = entries[k] as InventoryEntry;
    allFrozen &&= Object.isFrozen(entry);
    let slot = last[k + shift];
    if (slot === undefined || slot.path !== entry.path) {
      slot = slots.get(entry.path);
      if (slot === undefined) {
        const file = fileNodeOf(entry, nameOf(entry.path));
        slot = { path: entry.path, file, at: -1, seen: put };
        slots.set(entry.path, slot);
        changes.push({ path: entry.path, file });
        order[k] = slot;
        continue;
      }
      if (slot.at >= 0) shift = slot.at - k;
    }
    if (slot.seen === put) return null;
    slot.seen = put;
    const f = slot.file;
    if (f.bytes !== entry.bytes || f.sha256 !== entry.sha256 || f.mode !== entry.mode || f.kind !== entry.kind) {
      slot.file = fileNodeOf(entry, f.name);
      changes.push({ path: entry.path, file: slot.file });
    }
    order[k] = slot;
  }
  // Each entry stamped one slot (met or added): any more are the paths gone.
  if (slots.size > entries.length) {
    for (const [path, slot] of slots) {
      if (slot.seen === put) continue;
      slots.delete(path);
      changes.push({ path, file: null });
    }
  }
  for (let k = 0; k < order.length; k++) (order[k] as Slot).at = k;
  return { changes, order, allFrozen };
}

/**
 * Makes the object of every directory below `node` (and of `node`) that has none, children
 * first, dropping directories left empty (a plain put never makes one): 'empty' when `node` is
 * such a directory (the root never is: its object is made even empty).
 */
function remake(node: BuildNode, out: MadeObject[], isRoot: boolean): 'made' | 'empty' {
  const children: DirRef[] = [];
  for (const [name, child] of node.dirs) {
    if (child.made === undefined && remake(child, out, false) === 'empty') {
      node.dirs.delete(name);
      continue;
    }
    children.push({ name, tree: (child.made as MadeObject).hex });
  }
  if (!isRoot && node.files.length === 0 && children.length === 0) return 'empty';
  node.made = makeObject(node.files, children, true);
  out.push(node.made);
  return 'made';
}
