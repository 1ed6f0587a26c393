import { CairnError } from './errors.js';
/**
 * Code-point order, which equals the byte order of the UTF-8 encodings.
 * JS `<` compares UTF-16 code units and differs when a string holds a surrogate pair
 * next to U+E000..U+FFFF; this comparator never does.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Only when both units are >= 0xD800 can UTF-16 order disagree with code-point order.
    if (ca >= 0xd800 && cb >= 0xd800) {
      const pa = a.codePointAt(i) ?? ca;
      const pb = b.codePointAt(i) ?? cb;
      // A lone low surrogate after an equal prefix compares as itself.
      return pa < pb ? -1 : pa > pb ? 1 : 0;
    }
    return ca < cb ? -1 : 1;
  }
  return a.length - b.length;
}

/** True when `s` contains an unpaired UTF-16 surrogate (not representable in UTF-8). */
export function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

const STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of `bytes`, refusing invalid UTF-8 (ERR_CORRUPT naming `file`) instead of replacing
 * it with U+FFFD as Buffer#toString does: the one rule for stored JSON, stage bodies and options files.
 */
export function decodeUtf8Strict(bytes: Uint8Array, file: string): string {
  try {
    return STRICT.decode(bytes);
  } catch (e) {
    throw new CairnError('ERR_CORRUPT', `${file} is not valid UTF-8; cairn writes only UTF-8, so it was damaged or written by something else — restore or remove it`, { path: file, cause: e, exitCode: 1 });
  }
}
