// The running CRC-32 of a file written in parts equals the CRC of the whole, empty parts included.
import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32 } from '../../src/core/crc32.js';

// Every kind of empty part the writers hand over: a zero-length Buffer, a view of an empty
// ArrayBuffer (no backing store), an empty slice of a real buffer.
const emptyArb = fc.constantFrom(
  () => Buffer.alloc(0),
  () => Buffer.allocUnsafe(0),
  () => Buffer.from(new Uint32Array(0).buffer),
  () => new Uint8Array(0),
  () => Buffer.from('abc').subarray(1, 1),
);
const partArb = fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => () => Buffer.from(b)), emptyArb);

describe('crc32', () => {
  it('continued over parts, empty ones anywhere, equals the CRC of the parts joined', () => {
    fc.assert(
      fc.property(fc.array(partArb, { maxLength: 8 }), (makers) => {
        const parts = makers.map((m) => m());
        let crc = 0;
        for (const p of parts) crc = crc32(p, crc);
        expect(crc).toBe(zlibCrc32(Buffer.concat(parts)));
      }),
    );
  });

  it('an empty part without a backing store keeps the running CRC (zlib alone would answer 0)', () => {
    const running = crc32(Buffer.from('cairn'));
    expect(crc32(Buffer.from(new Uint32Array(0).buffer), running)).toBe(running);
  });
});
