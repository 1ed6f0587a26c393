/**
 * Git's three text layouts of a diff, written from FileChange lists: `--name-status`,
 * `--stat` (diffstat, 80 columns, git's scaling and `{old => new}` rename names) and the
 * unified patch (`diff --git` headers, mode and index lines, hunks) that `git apply` takes.
 * Paths are quoted as git quotes them (core.quotePath): control characters, `"`, `\` and
 * non-ASCII bytes escaped inside double quotes.
 */
import type { FileChange, Hunk } from './diff.js';

const ESCAPES: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 34: '\\"', 92: '\\\\' };

function needsQuote(bytes: Buffer): boolean {
  for (const b of bytes) if (b < 0x20 || b === 34 || b === 92 || b >= 0x7f) return true;
  return false;
}

/** Whether a string holds only printable ASCII other than `"` and `\\`: its UTF-8 bytes then need no quoting. */
function plainAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 34 || c === 92 || c >= 0x7f) return false;
  }
  return true;
}

/** A path as git prints it: as is, or C-quoted when it holds a byte git escapes. `prefix` (`a/`) goes inside the quotes. */
export function quotePath(p: string, prefix = ''): string {
  // Most paths: no byte to escape, and no UTF-8 encoding needed to tell
  if (plainAscii(prefix) && plainAscii(p)) return prefix + p;
  const bytes = Buffer.from(prefix + p, 'utf8');
  if (!needsQuote(bytes)) return prefix + p;
  let out = '"';
  for (const b of bytes) {
    const esc = ESCAPES[b];
    if (esc !== undefined) out += esc;
    else if (b < 0x20 || b >= 0x7f) out += `\\${b.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

const LETTER = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', typechange: 'T' } as const;

/** `A`, `M`, `D`, `T`, or `R<score>` (three digits, as git pads it). */
export function statusLetter(change: FileChange): string {
  if (change.status === 'renamed') return `R${String(change.score ?? 100).padStart(3, '0')}`;
  return LETTER[change.status];
}

export function renderNameStatus(changes: readonly FileChange[]): string {
  let out = '';
  for (const c of changes) {
    out += c.oldPath !== undefined ? `${statusLetter(c)}\t${quotePath(c.oldPath)}\t${quotePath(c.path)}\n` : `${statusLetter(c)}\t${quotePath(c.path)}\n`;
  }
  return out;
}

/** git's pprint_rename: `dir/{old => new}/rest`, or `old => new` when nothing is shared. */
export function renameName(a: string, b: string): string {
  if (quotePath(a) !== a || quotePath(b) !== b) return `${quotePath(a)} => ${quotePath(b)}`;
  let pfx = 0;
  for (let i = 0; i < a.length && i < b.length && a[i] === b[i]; i++) if (a[i] === '/') pfx = i + 1;
  let sfx = 0;
  const adjust = pfx > 0 ? 1 : 0;
  for (let i = a.length, j = b.length; i >= pfx - adjust && j >= pfx - adjust && a[i] === b[j]; i--, j--) {
    if (a[i] === '/') sfx = a.length - i;
  }
  const aMid = Math.max(0, a.length - pfx - sfx);
  const bMid = Math.max(0, b.length - pfx - sfx);
  const middle = `${a.slice(pfx, pfx + aMid)} => ${b.slice(pfx, pfx + bMid)}`;
  return pfx + sfx > 0 ? `${a.slice(0, pfx)}{${middle}}${a.slice(a.length - sfx)}` : middle;
}

function decimalWidth(n: number): number {
  return String(n).length;
}

function scaleLinear(it: number, width: number, maxChange: number): number {
  return it === 0 ? 0 : 1 + Math.floor((it * (width - 1)) / maxChange);
}

/** The summary line git ends a diffstat with. */
export function statSummary(files: number, insertions: number, deletions: number): string {
  if (files === 0) return ' 0 files changed\n';
  let out = ` ${files} file${files === 1 ? '' : 's'} changed`;
  if (insertions > 0 || deletions === 0) out += `, ${insertions} insertion${insertions === 1 ? '' : 's'}(+)`;
  if (deletions > 0 || insertions === 0) out += `, ${deletions} deletion${deletions === 1 ? '' : 's'}(-)`;
  return `${out}\n`;
}

/** git's show_stats for a non-terminal (80 columns). */
export function renderStat(changes: readonly FileChange[], width = 80): string {
  if (changes.length === 0) return '';
  const names = changes.map((c) => (c.oldPath !== undefined ? renameName(c.oldPath, c.path) : quotePath(c.path)));
  let maxLen = 0;
  let maxChange = 0;
  let numberWidth = 0;
  let binWidth = 0;
  changes.forEach((c, i) => {
    maxLen = Math.max(maxLen, (names[i] as string).length);
    if (c.binary) {
      binWidth = Math.max(binWidth, 14 + decimalWidth(c.newSize ?? 0) + decimalWidth(c.oldSize ?? 0));
      numberWidth = 3;
      return;
    }
    maxChange = Math.max(maxChange, c.additions + c.deletions);
  });
  numberWidth = Math.max(numberWidth, decimalWidth(maxChange));
  if (width < 16 + 6 + numberWidth) width = 16 + 6 + numberWidth;
  let graphWidth = maxChange + 4 > binWidth ? maxChange : binWidth - 4;
  let nameWidth = maxLen;
  if (nameWidth + numberWidth + 6 + graphWidth > width) {
    if (graphWidth > Math.floor((width * 3) / 8) - numberWidth - 6) {
      graphWidth = Math.floor((width * 3) / 8) - numberWidth - 6;
      if (graphWidth < 6) graphWidth = 6;
    }
    if (nameWidth > width - numberWidth - 6 - graphWidth) nameWidth = width - numberWidth - 6 - graphWidth;
    else graphWidth = width - numberWidth - 6 - nameWidth;
  }
  let out = '';
  let insertions = 0;
  let deletions = 0;
  changes.forEach((c, i) => {
    let name = names[i] as string;
    let prefix = '';
    let len = nameWidth;
    if (nameWidth < name.length) {
      prefix = '...';
      len = Math.max(0, len - 3);
      name = name.slice(name.length - len);
      const slash = name.indexOf('/');
      if (slash >= 0) name = name.slice(slash);
    }
    const shown = ` ${prefix}${name.padEnd(len)} |`;
    if (c.binary) {
      out += `${shown} ${'Bin'.padStart(numberWidth)}`;
      out += c.oldSize || c.newSize ? ` ${c.oldSize ?? 0} -> ${c.newSize ?? 0} bytes\n` : '\n';
      return;
    }
    insertions += c.additions;
    deletions += c.deletions;
    let add = c.additions;
    let del = c.deletions;
    if (graphWidth <= maxChange) {
      let total = scaleLinear(add + del, graphWidth, maxChange);
      if (total < 2 && add > 0 && del > 0) total = 2;
      if (add < del) {
        add = scaleLinear(add, graphWidth, maxChange);
        del = total - add;
      } else {
        del = scaleLinear(del, graphWidth, maxChange);
        add = total - del;
      }
    }
    const count = c.additions + c.deletions;
    out += `${shown} ${String(count).padStart(numberWidth)}${count > 0 ? ' ' : ''}${'+'.repeat(add)}${'-'.repeat(del)}\n`;
  });
  return out + statSummary(changes.length, insertions, deletions);
}

function range(start: number, lines: number): string {
  if (lines === 1) return String(start);
  return `${lines === 0 ? start - 1 : start},${lines}`;
}

function hunkText(h: Hunk): string {
  const section = h.section !== undefined ? ` ${h.section}` : '';
  return `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@${section}\n${h.lines.join('\n')}\n`;
}

function short(oid: string | undefined): string {
  return oid === undefined ? '0000000' : oid.slice(0, 7);
}

/** `--- a/x` / `+++ b/x`; git appends a tab to a name holding a space, so the name's end is unambiguous. */
function fileLine(marker: string, name: string): string {
  return `${marker} ${name}${name.includes(' ') ? '\t' : ''}\n`;
}

/** One `diff --git` block; a type change is written as git writes it, a deletion and an addition. */
function fileBlock(c: FileChange): string {
  if (c.status === 'typechange') {
    const [gone, made] = [c.hunks?.[0], c.hunks?.[1]];
    const deleted: FileChange = { path: c.path, status: 'deleted', additions: 0, deletions: c.deletions, binary: c.binary };
    const added: FileChange = { path: c.path, status: 'added', additions: c.additions, deletions: 0, binary: c.binary };
    for (const [k, v] of [['oldMode', c.oldMode], ['oldOid', c.oldOid], ['oldSize', c.oldSize]] as const) if (v !== undefined) Object.assign(deleted, { [k]: v });
    for (const [k, v] of [['newMode', c.newMode], ['newOid', c.newOid], ['newSize', c.newSize]] as const) if (v !== undefined) Object.assign(added, { [k]: v });
    if (gone !== undefined && gone.lines.length > 0) deleted.hunks = [gone];
    if (made !== undefined && made.lines.length > 0) added.hunks = [made];
    return fileBlock(deleted) + fileBlock(added);
  }
  const oldName = c.oldPath ?? c.path;
  const a = quotePath(oldName, 'a/');
  const b = quotePath(c.path, 'b/');
  let out = `diff --git ${a} ${b}\n`;
  if (c.status === 'added') out += `new file mode ${c.newMode ?? '100644'}\n`;
  else if (c.status === 'deleted') out += `deleted file mode ${c.oldMode ?? '100644'}\n`;
  else if (c.oldMode !== undefined && c.newMode !== undefined && c.oldMode !== c.newMode) out += `old mode ${c.oldMode}\nnew mode ${c.newMode}\n`;
  if (c.status === 'renamed') out += `similarity index ${c.score ?? 100}%\nrename from ${quotePath(oldName)}\nrename to ${quotePath(c.path)}\n`;
  const oldOid = c.status === 'added' ? undefined : c.oldOid;
  const newOid = c.status === 'deleted' ? undefined : c.newOid;
  if (oldOid !== newOid) {
    const sameMode = c.status !== 'added' && c.status !== 'deleted' && c.oldMode === c.newMode;
    out += `index ${short(oldOid)}..${short(newOid)}${sameMode ? ` ${c.newMode}` : ''}\n`;
  }
  const from = c.status === 'added' ? '/dev/null' : a;
  const to = c.status === 'deleted' ? '/dev/null' : b;
  if (c.binary) return `${out}Binary files ${from} and ${to} differ\n`;
  if (c.hunks === undefined || c.hunks.length === 0) return out;
  out += fileLine('---', from) + fileLine('+++', to);
  for (const h of c.hunks) out += hunkText(h);
  return out;
}

/**
 * The unified patch. Files whose bytes were not captured cannot be shown; they are left out of
 * the patch (so what is printed still applies) and returned in `omitted` for the caller to name.
 */
export function renderPatch(changes: readonly FileChange[]): { text: string; omitted: FileChange[] } {
  let text = '';
  const omitted: FileChange[] = [];
  for (const c of changes) {
    if (c.notCaptured !== undefined) omitted.push(c);
    else text += fileBlock(c);
  }
  return { text, omitted };
}

/** One file's block (for reports that show files one at a time). */
export function renderFilePatch(change: FileChange): string {
  return change.notCaptured !== undefined ? '' : fileBlock(change);
}
