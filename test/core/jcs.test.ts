import canonicalizeOracle from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CairnError } from '../../src/core/errors.js';
import { canonicalDigest, canonicalize, sha256Hex } from '../../src/core/jcs.js';

/** The IEEE 754 double with these 64 bits (big-endian hex), as RFC 8785 Appendix B lists them. */
function fromIeeeHex(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('RFC 8785 Appendix B: number serialization', () => {
  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'], // -0
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('%s serializes as %s', (hex, expected) => {
    expect(canonicalize(fromIeeeHex(hex))).toBe(expected);
  });

  it('rejects the NaN and Infinity bit patterns of Appendix B', () => {
    for (const hex of ['7fffffffffffffff', '7ff0000000000000', 'fff0000000000000']) {
      expect(() => canonicalize(fromIeeeHex(hex))).toThrow(expect.objectContaining({ code: 'ERR_CANONICALIZE' }));
    }
  });

  it('prints the exponent boundaries as ECMAScript does: 1e21, 1e-7, -0', () => {
    expect(canonicalize([1e21, 1e20, 1e-7, 1e-6, -0, 0.1 + 0.2])).toBe('[1e+21,100000000000000000000,1e-7,0.000001,0,0.30000000000000004]');
  });
});

describe('RFC 8785 § 3.2.3: property sorting by UTF-16 code units', () => {
  it('orders the RFC example keys as the RFC shows', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    const values = Object.values(JSON.parse(canonicalize(input)) as Record<string, string>);
    // JSON.parse re-orders integer-like keys first; read the order from the text instead.
    const order = [...canonicalize(input).matchAll(/:"([^"]+)"/g)].map((m) => m[1]);
    expect(order).toEqual([
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
    expect(values).toHaveLength(7);
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('sorts nested objects too, and keeps array order', () => {
    expect(canonicalize({ b: [{ z: 1, a: 2 }, 3], a: { d: null, c: true } })).toBe('{"a":{"c":true,"d":null},"b":[{"a":2,"z":1},3]}');
  });
});

describe('RFC 8785 § 3.2.4: the full example', () => {
  it('produces the RFC output byte for byte', () => {
    const input = JSON.parse(
      String.raw`{
        "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
        "literals": [null, true, false]
      }`,
    ) as unknown;
    const expected = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;
    expect(canonicalize(input)).toBe(expected);
    // The RFC's UTF-8 rendering of the same output, as hex.
    expect(Buffer.from(canonicalize(input), 'utf8').toString('hex')).toBe(
      '7b226c6974657261' + '6c73223a5b6e756c' + '6c2c747275652c66' + '616c73655d2c226e' + '756d62657273223a' + '5b33333333333333' + '33332e3333333333' + '33332c31652b3330' + '2c342e352c302e30' + '30322c31652d3237' + '5d2c22737472696e' + '67223a22e282ac24' + '5c75303030665c6e' + '4127425c225c5c5c' + '5c5c222f227d',
    );
  });
});

describe('values JSON cannot carry are rejected with ERR_CANONICALIZE', () => {
  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['a bigint', 10n],
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate', 'x\udc00y'],
    ['a lone surrogate in a key', { '\ud83d': 1 }],
    ['a nested NaN', { a: [1, { b: NaN }] }],
    ['a function at the top', () => 1],
    ['undefined at the top', undefined],
    ['a symbol at the top', Symbol('s')],
  ])('%s', (_name, value) => {
    let thrown: unknown;
    try {
      canonicalize(value);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CairnError);
    expect((thrown as CairnError).code).toBe('ERR_CANONICALIZE');
    expect((thrown as CairnError).message.length).toBeGreaterThan(10);
  });

  it('a cyclic structure', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => canonicalize(a)).toThrow(expect.objectContaining({ code: 'ERR_CANONICALIZE' }));
  });

  it('a structure shared twice without a cycle is fine', () => {
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: [shared, shared] })).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
  });
});

describe('JSON.stringify conventions', () => {
  it('drops undefined members and turns undefined array items into null', () => {
    expect(canonicalize({ a: undefined, b: [undefined, 1], c: () => 1 })).toBe('{"b":[null,1]}');
  });

  it('uses toJSON, as JSON.stringify does (a Date becomes its ISO string)', () => {
    expect(canonicalize({ at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) })).toBe('{"at":"2026-01-02T03:04:05.000Z"}');
  });

  it('escapes strings as JSON.stringify does: control characters, quotes, backslash; not /', () => {
    expect(canonicalize('\u0000\b\t\n\f\r"\\/\u001f\u007f')).toBe('"\\u0000\\b\\t\\n\\f\\r\\"\\\\/\\u001f\u007f"');
  });
});

describe('properties', () => {
  const jsonArb = fc.jsonValue({ stringUnit: 'binary', maxDepth: 4 });

  it('equals the canonicalize package (the RFC 8785 oracle) on any JSON value', () => {
    fc.assert(
      fc.property(jsonArb, (v) => {
        expect(canonicalize(v)).toBe(canonicalizeOracle(v));
      }),
      { numRuns: 1000 },
    );
  });

  it('canonicalize ∘ JSON.parse ∘ canonicalize is stable', () => {
    fc.assert(
      fc.property(jsonArb, (v) => {
        const once = canonicalize(v);
        expect(canonicalize(JSON.parse(once))).toBe(once);
      }),
      { numRuns: 1000 },
    );
  });

  it('any finite double prints as the oracle prints it and parses back to the same value', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const text = canonicalize(d);
        expect(text).toBe(canonicalizeOracle(d));
        expect(Object.is(JSON.parse(text), d === 0 ? 0 : d)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('key order in the input never changes the output', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 1 })), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalize(reversed)).toBe(canonicalize(obj));
      }),
    );
  });
});

describe('digests', () => {
  it("sha256Hex('abc') is the FIPS 180-2 test vector", () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(sha256Hex('abc'));
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('canonicalDigest is sha256: of the canonical text, whatever the key order', () => {
    expect(canonicalDigest({ b: 1, a: 2 })).toBe(`sha256:${sha256Hex('{"a":2,"b":1}')}`);
    expect(canonicalDigest({ a: 2, b: 1 })).toBe(canonicalDigest({ b: 1, a: 2 }));
  });
});
