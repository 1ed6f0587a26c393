import { crc32 as zlibCrc32 } from 'node:zlib';

/**
 * CRC-32 of `bytes`, continuing from `crc` (the CRC of what came before). node:zlib's own
 * crc32 passes zlib a null pointer for an empty buffer without a backing store, and zlib then
 * returns its initial value, 0: the running CRC of a file written in parts was lost at any
 * empty part (an empty tree's cache was always "corrupt"). Here an empty part changes nothing.
 */
export function crc32(bytes: Uint8Array, crc = 0): number {
  return bytes.length === 0 ? crc : zlibCrc32(bytes, crc);
}
