/**
 * The seed's RelPath rules: which relative POSIX paths a snapshot may record.
 * A path that fails them is not inventoried (the scanner reports it as skipped with the reason).
 * The rules keep a snapshot portable: every recorded path can be re-created on Windows, macOS
 * and Linux and names the same file there.
 */

import { hasLoneSurrogate } from '../../core/utf8.js';

export const MAX_REL_PATH_LENGTH = 1024;

// Windows device names, reserved with or without an extension and in any case ("con.txt").
export const RESERVED_WINDOWS_NAME = /^(CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9])(\..*)?$/i;
// Characters Windows forbids in names; `\` is also its separator, so `a\b` would be two segments.
const FORBIDDEN_CHAR = /[<>:"|?*\\]/;
/** C0 controls and DEL (not C1: the seed allows them). */
function hasControlChar(p: string): boolean {
  for (let i = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** `null` when `p` is a valid RelPath, else a short reason naming the first rule it breaks. */
export function relPathProblem(p: string): string | null {
  if (p.length === 0) return 'empty path';
  if (p.length > MAX_REL_PATH_LENGTH) return 'too long';
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p)) return 'absolute path';
  if (hasControlChar(p)) return 'control character';
  if (hasLoneSurrogate(p)) return 'lone surrogate';
  if (p.normalize('NFC') !== p) return 'not NFC';
  const forbidden = FORBIDDEN_CHAR.exec(p);
  if (forbidden) return `contains "${forbidden[0]}"`;
  for (const segment of p.split('/')) {
    if (segment === '') return 'empty segment';
    if (segment === '.' || segment === '..') return '"." or ".." segment';
    if (segment.endsWith(' ')) return 'segment ends with a space';
    if (segment.endsWith('.')) return 'segment ends with "."';
    const reserved = RESERVED_WINDOWS_NAME.exec(segment);
    if (reserved) return `reserved Windows name "${reserved[1]!.toUpperCase()}"`;
  }
  return null;
}

export function isValidRelPath(p: string): boolean {
  return relPathProblem(p) === null;
}
