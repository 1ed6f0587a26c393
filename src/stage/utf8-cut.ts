const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * The largest cut point ≤ `limit` that does not split a valid UTF-8 character of `bytes`.
 * Bytes before the cut are kept as they are: only a character that straddles the cut is
 * dropped whole, so a valid input gives a valid prefix and an invalid one is not "repaired"
 * (the upstream `iconv -c` dropped every invalid sequence in the kept part).
 */
export function utf8CutPoint(bytes: Uint8Array, limit: number): number {
  if (limit >= bytes.length) return bytes.length;
  if (limit <= 0) return 0;
  // A character is at most 4 bytes, so its lead byte is at most 3 bytes before the cut.
  for (let j = limit - 1; j >= Math.max(0, limit - 3); j--) {
    const b = bytes[j] ?? 0;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const len = sequenceLength(b);
    if (len === 0 || j + len <= limit || j + len > bytes.length) return limit;
    try {
      strictUtf8.decode(bytes.subarray(j, j + len));
      return j; // a whole, valid character crosses the cut: drop it entirely
    } catch {
      return limit; // not a character, just bytes: cut where the budget says
    }
  }
  return limit;
}

export function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}
