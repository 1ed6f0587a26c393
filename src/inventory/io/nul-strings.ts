/**
 * The NUL-separated UTF-8 strings of `raw` (a cache's paths). Decoded as latin1, a straight
 * copy, and only the few strings with non-ASCII bytes decoded again as UTF-8: decoding the whole
 * table as UTF-8 would make every path a two-byte string (twice the memory, slower everywhere)
 * as soon as one path has an accent. The loaded cache and the verifying worker both decode with it.
 */
export function splitNulUtf8(raw: Buffer, isAscii: (b: Uint8Array) => boolean): string[] {
  if (raw.length === 0) return [''];
  const text = raw.toString('latin1');
  const parts = text.split('\0');
  if (isAscii(raw)) return parts;
  const high = /[\x80-\xff]/g;
  let m = high.exec(text);
  for (let k = 0, at = 0; k < parts.length && m !== null; k++) {
    const end = at + parts[k]!.length;
    if (m.index < end) {
      parts[k] = Buffer.from(parts[k]!, 'latin1').toString('utf8');
      high.lastIndex = end;
      m = high.exec(text);
    }
    at = end + 1;
  }
  return parts;
}
