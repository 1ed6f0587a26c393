/**
 * The diff engine: from the paths two inventories disagree on (each with its entry before and
 * after) and a source of their bytes, the changes as git reports them — added, modified,
 * deleted, renamed (identical content first, then similar content scored as git scores it),
 * type changes (file ↔ symlink) and mode changes, binary files marked, text files with their
 * hunks and +/− line counts. Pure apart from the reads it asks of the ContentSource.
 */
import { createHash } from 'node:crypto';
import { diffArrays, structuredPatch } from 'diff';
import { compareUtf8 } from '../core/utf8.js';
import type { InventoryEntry } from '../session/inventory-store/inventory-store.js';
import type { ContentRequest, ContentSource, Side } from './content.js';
import { DEFAULT_RENAME_SCORE, scorePercent, similarity, spans, type Spans } from './similarity.js';

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'typechange';
/** Git's file modes: regular, executable, symlink. */
export type GitMode = '100644' | '100755' | '120000';

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** `+line`, `-line`, ` line` or `\ No newline at end of file`, without line endings. */
  lines: string[];
  /** The line git prints after `@@ … @@`: the nearest line above the hunk that starts with a letter, `_` or `$`. */
  section?: string;
}

export interface FileChange {
  path: string;
  /** The path before, for renames. */
  oldPath?: string;
  status: ChangeStatus;
  /** Similarity percentage of a rename (100: identical content). */
  score?: number;
  additions: number;
  deletions: number;
  binary: boolean;
  oldMode?: GitMode;
  newMode?: GitMode;
  /** Git blob ids of the two sides (as `git hash-object` gives them), when their bytes were read. */
  oldOid?: string;
  newOid?: string;
  oldSize?: number;
  newSize?: number;
  /** Text hunks (3 lines of context); absent for binary files, pure renames and mode-only changes. */
  hunks?: Hunk[];
  /** Sides whose bytes were not available (not captured, or over the size limit): counts are 0 and no hunks. */
  notCaptured?: Side[];
}

export interface DiffOptions {
  /** Detect renames (default true). */
  renames?: boolean;
  /** Minimum similarity for a rename, out of 60000 (default 30000, git's 50 %). */
  renameScore?: number;
  /** Above this many deleted × added candidates, only identical-content renames are found (git's renameLimit² default). */
  renameLimit?: number;
  /** Files bigger than this are not read and not diffed line by line (default 64 MiB). */
  maxFileBytes?: number;
  /**
   * Build hunks and blob ids (default true). False gives the +/- counts only, as `--stat`,
   * `--numstat` and `--json` need: the same edit script's counts without writing its lines.
   */
  hunks?: boolean;
}

const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Edit scripts longer than this are written as one replace hunk instead of searched for (bounded work). */
const MAX_EDIT_LENGTH = 20000;
/** git's buffer_is_binary: a NUL in the first 8000 bytes. */
const BINARY_PROBE = 8000;

export function gitMode(entry: InventoryEntry): GitMode {
  if (entry.kind === 'symlink') return '120000';
  return entry.mode === '0755' ? '100755' : '100644';
}

export function gitBlobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

export function isBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, BINARY_PROBE).includes(0);
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of `bytes` when it is UTF-8 (byte-exact round trip), else null: other encodings are shown as binary. */
function asText(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

interface Side2 {
  entry: InventoryEntry;
  bytes: Buffer | null;
}

/** A text's lines, each with its own newline (the last may have none), as jsdiff's diffLines tokenises it. */
function lineTokens(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
    out.push(text.slice(from, nl + 1));
    from = nl + 1;
  }
  if (from < text.length) out.push(text.slice(from));
  return out;
}

/**
 * The +/- line counts `lineHunks` would give, without its hunks: the same engine (jsdiff's
 * Myers, the same edit budget) over the lines between the common head and tail, lines as ids.
 * Over the budget the file counts as one replace, as `lineHunks` writes it.
 */
export function lineCountsOfTexts(oldText: string, newText: string, maxEditLength = MAX_EDIT_LENGTH): { additions: number; deletions: number } {
  const a = lineTokens(oldText);
  const b = lineTokens(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let endA = a.length;
  let endB = b.length;
  while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  if (endA === head || endB === head) {
    // only additions or only deletions: the edit script is that long, and over the budget the patch is one replace too
    const edits = endA - head + (endB - head);
    return edits > maxEditLength ? { additions: b.length, deletions: a.length } : { additions: endB - head, deletions: endA - head };
  }
  const ids = new Map<string, number>();
  const id = (line: string): number => {
    let v = ids.get(line);
    if (v === undefined) ids.set(line, (v = ids.size));
    return v;
  };
  const changes = diffArrays(a.slice(head, endA).map(id), b.slice(head, endB).map(id), { maxEditLength });
  if (changes === undefined) return { additions: b.length, deletions: a.length };
  let additions = 0;
  let deletions = 0;
  for (const c of changes) {
    if (c.added) additions += c.count;
    else if (c.removed) deletions += c.count;
  }
  return { additions, deletions };
}

/**
 * +/- line counts between two versions of a file's bytes (null: absent), as `git diff --numstat`
 * counts them; null when either side is binary (a NUL in the first 8000 bytes, or not UTF-8).
 * What `session restore --dry-run` shows per file.
 */
export function lineCounts(before: Uint8Array | null, after: Uint8Array | null): { additions: number; deletions: number } | null {
  const text = (bytes: Uint8Array | null): string | null => {
    if (bytes === null) return '';
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return isBinary(buf) ? null : asText(buf);
  };
  const oldText = text(before);
  const newText = text(after);
  return oldText === null || newText === null ? null : lineCountsOfTexts(oldText, newText);
}

/** Lines of context around each hunk, as git's default. */
const CONTEXT = 3;

/**
 * Where the lines the two texts start with in common end, but for the last CONTEXT of them:
 * `lines` whole lines (each with its newline), `chars` long. A last line without a newline is
 * never counted, as jsdiff's line tokens tell it from the same line with one.
 */
function headAboveContext(oldText: string, newText: string): { lines: number; chars: number } {
  const max = Math.min(oldText.length, newText.length);
  let same = 0;
  // in blocks first (one native comparison each), then unit by unit within the block that differs
  while (same + 256 <= max && oldText.startsWith(newText.slice(same, same + 256), same)) same += 256;
  while (same < max && oldText.charCodeAt(same) === newText.charCodeAt(same)) same++;
  const ends: number[] = [];
  for (let nl = oldText.indexOf('\n'); nl >= 0 && nl < same; nl = oldText.indexOf('\n', nl + 1)) ends.push(nl + 1);
  const lines = ends.length - CONTEXT;
  return lines > 0 ? { lines, chars: ends[lines - 1] as number } : { lines: 0, chars: 0 };
}

/**
 * Hunks and counts of two texts; an edit script too long to search is one replace hunk. jsdiff's
 * Myers search takes the lines the texts share at their start as its first step, before any edit,
 * and what it does from there depends only on positions relative to that point (and the edit
 * budget, which the shared lines never use): so the shared lines above a hunk's context are cut
 * off first and the hunks moved down by as many lines. The same hunks (a property test holds
 * them to jsdiff's on the whole texts), without splitting, comparing and joining the file's
 * unchanged top, which is most of a file an agent appended to or edited near its end.
 */
export function lineHunks(oldText: string, newText: string, maxEditLength = MAX_EDIT_LENGTH): { hunks: Hunk[]; additions: number; deletions: number } {
  const head = headAboveContext(oldText, newText);
  const patch = structuredPatch('a', 'b', oldText.slice(head.chars), newText.slice(head.chars), undefined, undefined, { context: CONTEXT, maxEditLength });
  const hunks: Hunk[] =
    patch === undefined
      ? replaceHunk(oldText, newText)
      : patch.hunks.map((h) => ({ oldStart: h.oldStart + head.lines, oldLines: h.oldLines, newStart: h.newStart + head.lines, newLines: h.newLines, lines: h.lines }));
  addSections(hunks, oldText);
  let additions = 0;
  let deletions = 0;
  for (const h of hunks) {
    for (const line of h.lines) {
      const c = line.charCodeAt(0);
      if (c === 43) additions++;
      else if (c === 45) deletions++;
    }
  }
  return { hunks, additions, deletions };
}

/** Whether a UTF-16 unit is one git's default funcname rule accepts first: a letter, `_` or `$`. */
function startsSection(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}

/**
 * git's default funcname rule (xdiff def_ff): searched upwards from the line above each hunk, cut
 * to 80 bytes. Lines are found by their offsets (no split of the whole file into strings).
 */
function addSections(hunks: Hunk[], oldText: string): void {
  if (hunks.length === 0 || oldText === '') return;
  // starts[i]: the offset of line i, lines numbered as oldText.split('\n') numbers them; filled as far as asked
  const starts: number[] = [0];
  const startOf = (i: number): number | undefined => {
    while (starts.length <= i) {
      const nl = oldText.indexOf('\n', starts[starts.length - 1]);
      if (nl < 0) return undefined;
      starts.push(nl + 1);
    }
    return starts[i];
  };
  for (const h of hunks) {
    for (let i = h.oldStart - 2; i >= 0; i--) {
      const from = startOf(i);
      if (from === undefined || from >= oldText.length || !startsSection(oldText.charCodeAt(from))) continue;
      const nl = oldText.indexOf('\n', from);
      const line = oldText.slice(from, nl < 0 ? oldText.length : nl);
      const cut = Buffer.from(line, 'utf8').subarray(0, 80).toString('utf8').replace(/\uFFFD$/, '');
      const section = cut.replace(/\s+$/, '');
      if (section !== '') h.section = section;
      break;
    }
  }
}

function splitLines(text: string): { lines: string[]; endsWithNewline: boolean } {
  if (text === '') return { lines: [], endsWithNewline: true };
  const endsWithNewline = text.endsWith('\n');
  const lines = (endsWithNewline ? text.slice(0, -1) : text).split('\n');
  return { lines, endsWithNewline };
}

function replaceHunk(oldText: string, newText: string): Hunk[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const lines: string[] = a.lines.map((l) => `-${l}`);
  if (!a.endsWithNewline) lines.push('\\ No newline at end of file');
  for (const l of b.lines) lines.push(`+${l}`);
  if (!b.endsWithNewline) lines.push('\\ No newline at end of file');
  // jsdiff's convention: starts are 1-based even for an empty side (the renderer prints git's `-0,0`)
  return [{ oldStart: 1, oldLines: a.lines.length, newStart: 1, newLines: b.lines.length, lines }];
}

/** Fills counts, binary flag, oids and (with `hunks`) the hunks of `change` from the two sides' bytes. */
function describe(change: FileChange, before: Side2 | undefined, after: Side2 | undefined, withHunks: boolean): FileChange {
  const missing: Side[] = [];
  if (before !== undefined) {
    change.oldMode = gitMode(before.entry);
    change.oldSize = before.entry.bytes;
    if (before.bytes === null) missing.push('pre');
    else if (withHunks) change.oldOid = gitBlobId(before.bytes);
  }
  if (after !== undefined) {
    change.newMode = gitMode(after.entry);
    change.newSize = after.entry.bytes;
    if (after.bytes === null) missing.push('post');
    else if (withHunks) change.newOid = gitBlobId(after.bytes);
  }
  if (missing.length > 0) {
    change.notCaptured = missing;
    return change;
  }
  const oldBytes = before?.bytes ?? Buffer.alloc(0);
  const newBytes = after?.bytes ?? Buffer.alloc(0);
  if (before !== undefined) change.oldSize = oldBytes.length;
  if (after !== undefined) change.newSize = newBytes.length;
  // a mode change or an identical rename (the bytes read were checked against these digests)
  if (before !== undefined && after !== undefined && before.entry.kind === after.entry.kind && before.entry.sha256 !== undefined && before.entry.sha256 === after.entry.sha256) return change;
  if (change.oldOid !== undefined && change.oldOid === change.newOid) return change;
  const oldText = isBinary(oldBytes) ? null : asText(oldBytes);
  const newText = isBinary(newBytes) ? null : asText(newBytes);
  if (oldText === null || newText === null) {
    change.binary = true;
    return change;
  }
  if (!withHunks) {
    // a type change is the old file deleted and the new one added
    const counts = change.status === 'typechange' ? { additions: lineTokens(newText).length, deletions: lineTokens(oldText).length } : lineCountsOfTexts(oldText, newText);
    change.additions = counts.additions;
    change.deletions = counts.deletions;
    return change;
  }
  if (change.status === 'typechange') {
    // git shows a type change as the old file deleted and the new one added: two hunks
    const [gone, made] = [replaceHunk(oldText, '')[0] as Hunk, replaceHunk('', newText)[0] as Hunk];
    change.hunks = [gone, made];
    change.deletions = gone.oldLines;
    change.additions = made.newLines;
    return change;
  }
  const { hunks, additions, deletions } = lineHunks(oldText, newText);
  change.hunks = hunks;
  change.additions = additions;
  change.deletions = deletions;
  return change;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/**
 * The changes of an iteration, sorted by path as git sorts them. Every byte read goes through
 * `source` in one call, so a git-backed source answers with one process.
 */
/** A path two inventories disagree on, with its entry on each side (null where absent). */
export interface EntryChange {
  path: string;
  before: InventoryEntry | null;
  after: InventoryEntry | null;
}

export function diffEntries(changes: readonly EntryChange[], source: ContentSource, options: DiffOptions = {}): FileChange[] {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const hunks = options.hunks !== false;
  const requests: ContentRequest[] = [];
  const index = new Map<string, number>();
  const ask = (side: Side, entry: InventoryEntry): void => {
    if (entry.bytes > maxFileBytes && entry.kind === 'file') return;
    index.set(`${side}\0${entry.path}`, requests.length);
    requests.push({ side, path: entry.path, entry });
  };
  for (const c of changes) {
    if (c.before !== null) ask('pre', c.before);
    if (c.after !== null) ask('post', c.after);
  }
  const blobs = source.read(requests);
  const side = (s: Side, entry: InventoryEntry | null): Side2 | undefined => {
    if (entry === null) return undefined;
    const i = index.get(`${s}\0${entry.path}`);
    return { entry, bytes: i === undefined ? null : (blobs[i] ?? null) };
  };

  const out: FileChange[] = [];
  const deleted: Side2[] = [];
  const added: Side2[] = [];
  for (const c of changes) {
    const before = side('pre', c.before);
    const after = side('post', c.after);
    if (before !== undefined && after !== undefined) {
      const status: ChangeStatus = before.entry.kind === after.entry.kind ? 'modified' : 'typechange';
      out.push(describe({ path: c.path, status, additions: 0, deletions: 0, binary: false }, before, after, hunks));
    } else if (before !== undefined) deleted.push(before);
    else if (after !== undefined) added.push(after);
  }

  const renames = options.renames === false ? [] : findRenames(deleted, added, options);
  const renamedFrom = new Set(renames.map((r) => r.from.entry.path));
  const renamedTo = new Set(renames.map((r) => r.to.entry.path));
  for (const r of renames) {
    out.push(describe({ path: r.to.entry.path, oldPath: r.from.entry.path, status: 'renamed', score: scorePercent(r.score), additions: 0, deletions: 0, binary: false }, r.from, r.to, hunks));
  }
  for (const d of deleted) if (!renamedFrom.has(d.entry.path)) out.push(describe({ path: d.entry.path, status: 'deleted', additions: 0, deletions: 0, binary: false }, d, undefined, hunks));
  for (const a of added) if (!renamedTo.has(a.entry.path)) out.push(describe({ path: a.entry.path, status: 'added', additions: 0, deletions: 0, binary: false }, undefined, a, hunks));
  out.sort((a, b) => compareUtf8(a.path, b.path) || compareUtf8(a.oldPath ?? '', b.oldPath ?? ''));
  return out;
}

interface Rename {
  from: Side2;
  to: Side2;
  score: number;
}

/**
 * Git's order: identical content first (a same-named source preferred), then, when the
 * candidates are few enough, the most similar pairs above the threshold, each file used once.
 */
function findRenames(deleted: readonly Side2[], added: readonly Side2[], options: DiffOptions): Rename[] {
  const renames: Rename[] = [];
  const usedFrom = new Set<Side2>();
  const usedTo = new Set<Side2>();
  const byDigest = new Map<string, Side2[]>();
  for (const d of deleted) {
    if (d.entry.sha256 === undefined || d.entry.bytes === 0 || d.entry.kind !== 'file') continue;
    const key = d.entry.sha256;
    const list = byDigest.get(key);
    if (list === undefined) byDigest.set(key, [d]);
    else list.push(d);
  }
  for (const a of added) {
    if (a.entry.sha256 === undefined || a.entry.bytes === 0 || a.entry.kind !== 'file') continue;
    const candidates = (byDigest.get(a.entry.sha256) ?? []).filter((d) => !usedFrom.has(d));
    const from = candidates.find((d) => basename(d.entry.path) === basename(a.entry.path)) ?? candidates[0];
    if (from === undefined) continue;
    usedFrom.add(from);
    usedTo.add(a);
    renames.push({ from, to: a, score: 60000 });
  }

  const sources = deleted.filter((d) => !usedFrom.has(d) && d.bytes !== null && d.bytes.length > 0);
  const targets = added.filter((a) => !usedTo.has(a) && a.bytes !== null && a.bytes.length > 0);
  const limit = options.renameLimit ?? 1000;
  if (sources.length === 0 || targets.length === 0 || sources.length * targets.length > limit * limit) return renames;
  const minScore = options.renameScore ?? DEFAULT_RENAME_SCORE;
  const spanCache = new Map<Side2, Spans>();
  const withSpans = (s: Side2) => ({
    bytes: s.bytes as Buffer,
    spans: () => {
      let v = spanCache.get(s);
      if (v === undefined) {
        v = spans(s.bytes as Buffer, !isBinary(s.bytes as Buffer));
        spanCache.set(s, v);
      }
      return v;
    },
  });
  const scored: Rename[] = [];
  for (const to of targets) {
    for (const from of sources) {
      if (from.entry.kind !== to.entry.kind) continue;
      const score = similarity(withSpans(from), withSpans(to), minScore);
      if (score >= minScore) scored.push({ from, to, score });
    }
  }
  // Best first; ties go to the same name, then to path order (stable output).
  scored.sort(
    (x, y) =>
      y.score - x.score ||
      Number(basename(y.from.entry.path) === basename(y.to.entry.path)) - Number(basename(x.from.entry.path) === basename(x.to.entry.path)) ||
      compareUtf8(x.to.entry.path, y.to.entry.path) ||
      compareUtf8(x.from.entry.path, y.from.entry.path),
  );
  for (const r of scored) {
    if (usedFrom.has(r.from) || usedTo.has(r.to)) continue;
    usedFrom.add(r.from);
    usedTo.add(r.to);
    renames.push(r);
  }
  return renames;
}
