import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateIdentifier, validateScope, validateUuidV7 } from '../../src/store/index.js';

const idMessage = (id: string) => `Identifier '${id}' can only contain lowercase letters, numbers, hyphens, and underscores`;
const uuidMessage = (id: string) => `'${id}' is not a valid UUID v7 snapshot ID`;

describe('validateIdentifier (upstream validation tests)', () => {
  it("returns a valid id such as 'valid-id'", () => {
    expect(validateIdentifier('valid-id')).toBe('valid-id');
  });

  it("throws upstream's exact message for 'invalid/id' and 'invalid\\\\id'", () => {
    expect(() => validateIdentifier('invalid/id')).toThrow(idMessage('invalid/id'));
    expect(() => validateIdentifier('invalid\\id')).toThrow(idMessage('invalid\\id'));
  });

  it('accepts exactly the strings made of [a-z0-9_-] (property)', () => {
    const allowed = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789_-'.split('')), minLength: 1 });
    fc.assert(fc.property(allowed, (id) => {
      expect(validateIdentifier(id)).toBe(id);
    }));
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (id) => {
        const ok = /^[a-z0-9_-]+$/.test(id);
        if (ok) expect(validateIdentifier(id)).toBe(id);
        else expect(() => validateIdentifier(id)).toThrow(idMessage(id));
      }),
    );
  });

  it('rejects anything carrying a path separator, a dot, NUL or upper case (property)', () => {
    const hostile = fc.tuple(fc.string(), fc.constantFrom('/', '\\', '.', '\0', 'A', 'Z', ' ', 'é'), fc.string()).map(([a, bad, b]) => a + bad + b);
    fc.assert(fc.property(hostile, (id) => {
      expect(() => validateIdentifier(id)).toThrow(Error);
    }));
  });
});

describe('validateUuidV7 (upstream validation tests)', () => {
  it("accepts '01956891-2b4c-7000-8abc-123456789abc', in either case", () => {
    expect(validateUuidV7('01956891-2b4c-7000-8abc-123456789abc')).toBe('01956891-2b4c-7000-8abc-123456789abc');
    expect(validateUuidV7('01956891-2B4C-7000-8ABC-123456789ABC')).toBe('01956891-2B4C-7000-8ABC-123456789ABC');
  });

  it("throws upstream's exact message for a v4 UUID, a timestamp, '../evil' and ''", () => {
    for (const bad of ['550e8400-e29b-41d4-a716-446655440000', '1741689600000', '../evil', '']) {
      expect(() => validateUuidV7(bad)).toThrow(uuidMessage(bad));
    }
  });

  it('accepts exactly version 7, variant 10 UUIDs (property)', () => {
    const hex = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'.split('')), minLength: n, maxLength: n });
    const uuid = fc.tuple(hex(8), hex(4), fc.constantFrom(...'0123456789abcdef'.split('')), hex(3), fc.constantFrom(...'0123456789abcdef'.split('')), hex(3), hex(12));
    fc.assert(
      fc.property(uuid, ([a, b, version, c, variant, d, e]) => {
        const id = `${a}-${b}-${version}${c}-${variant}${d}-${e}`;
        const valid = version === '7' && '89ab'.includes(variant);
        if (valid) expect(validateUuidV7(id)).toBe(id);
        else expect(() => validateUuidV7(id)).toThrow(uuidMessage(id));
      }),
    );
  });
});

describe('validateScope (cairn addition, as harness-sdk #2993)', () => {
  it('accepts agent and multiAgent only', () => {
    expect(validateScope('agent')).toBe('agent');
    expect(validateScope('multiAgent')).toBe('multiAgent');
    for (const bad of ['Agent', 'multiagent', '', '../agent', 'agent/']) expect(() => validateScope(bad)).toThrow(`Scope '${bad}' is not valid`);
  });
});

describe('library surface', () => {
  it('the backend conformance suite is importable from the package root as well as cairn/conformance', async () => {
    const root = await import('../../src/index.js');
    const sub = await import('../../src/store/conformance/index.js');
    expect(root.runSnapshotStorageConformance).toBe(sub.runSnapshotStorageConformance);
  });
});
