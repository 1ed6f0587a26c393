import * as fs from 'node:fs';
import * as path from 'node:path';
import canonicalizeOracle from 'canonicalize';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/jcs.js';
import { canonicalBody, scanTreeSync, snapshotDigestOf, type RepoSnapshotBody } from '../../src/inventory/index.js';
import { computeDigestOf } from '../../src/inventory/digest.js';
import { cleanupTempDirs, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

const name = fc.constantFrom('a', 'b', 'a-b', 'a.b', 'B', 'é', 'z\u{1F600}', 'x y', 'ü', '\uFF61', 'n1', 'n2');
const treeArb = fc.uniqueArray(fc.tuple(fc.array(name, { minLength: 1, maxLength: 3 }), fc.uint8Array({ maxLength: 64 }), fc.boolean()), {
  minLength: 1,
  maxLength: 20,
  selector: ([segs]) => segs.join('/'),
});

type Tree = [string[], Uint8Array, boolean][];

/** Materialises a tree; entries that clash with a file/directory already there are dropped. */
function build(root: string, tree: Tree): number {
  let n = 0;
  for (const [segs, content, exec] of tree) {
    const abs = path.join(root, ...segs);
    try {
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, content, { flag: 'wx' });
      if (exec) fs.chmodSync(abs, 0o755);
      n++;
    } catch {
      // clashes with an existing path of the other kind
    }
  }
  return n;
}

function body(root: string, o: Parameters<typeof scanTreeSync>[1] = {}): RepoSnapshotBody {
  const r = scanTreeSync(root, { cache: false, ...o });
  return { files: r.files, truncated: r.truncated, counts: r.counts };
}

describe('snapshot properties', () => {
  it('the same tree gives the same digest twice and in another directory', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        const r1 = tempDir();
        const r2 = tempDir();
        build(r1, tree);
        build(r2, tree);
        const d1 = snapshotDigestOf(body(r1));
        expect(snapshotDigestOf(body(r1))).toBe(d1);
        expect(snapshotDigestOf(body(r2))).toBe(d1);
        fs.rmSync(r1, { recursive: true });
        fs.rmSync(r2, { recursive: true });
      }),
      { numRuns: 30 },
    );
  });

  it('changing one byte of one file changes the digest', () => {
    fc.assert(
      fc.property(treeArb, fc.nat(), fc.nat(), (tree, pick, bytePick) => {
        const root = tempDir();
        build(root, tree);
        const before = body(root);
        const target = before.files[pick % before.files.length]!;
        const abs = path.join(root, target.path);
        const data = fs.readFileSync(abs);
        if (data.length === 0) fs.writeFileSync(abs, Buffer.from([0]));
        else {
          const i = bytePick % data.length;
          data[i] = (data[i]! + 1) % 256;
          fs.writeFileSync(abs, data);
        }
        expect(snapshotDigestOf(body(root))).not.toBe(snapshotDigestOf(before));
        fs.rmSync(root, { recursive: true });
      }),
      { numRuns: 30 },
    );
  });

  it('a truncated snapshot is a prefix of the full one', () => {
    fc.assert(
      fc.property(treeArb, fc.integer({ min: 1, max: 25 }), fc.integer({ min: 0, max: 800 }), (tree, maxFiles, maxBytes) => {
        const root = tempDir();
        build(root, tree);
        const full = body(root);
        const cut = body(root, { maxFiles, maxBytes });
        expect(full.files.slice(0, cut.files.length)).toEqual(cut.files);
        expect(cut.truncated).toBe(cut.files.length < full.files.length);
        expect(cut.counts.files).toBeLessThanOrEqual(maxFiles);
        expect(cut.counts.bytes).toBeLessThanOrEqual(maxBytes);
        fs.rmSync(root, { recursive: true });
      }),
      { numRuns: 40 },
    );
  });

  it('the fast canonical body equals RFC 8785 (canonicalize reference) for any entries', () => {
    const entry = fc.record(
      {
        path: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
        bytes: fc.oneof(fc.nat(), fc.maxSafeNat()),
        sha256: fc.stringMatching(/^[a-f0-9]{64}$/),
        mode: fc.constantFrom('0644' as const, '0755' as const),
        kind: fc.constantFrom('file' as const, 'symlink' as const),
      },
      { requiredKeys: ['path', 'bytes', 'mode', 'kind'] },
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 10 }), fc.boolean(), (files, truncated) => {
        const b: RepoSnapshotBody = { files, truncated, counts: { files: files.length, bytes: files.reduce((n, f) => n + f.bytes, 0) } };
        const oracle = `sha256:${sha256Hex(canonicalizeOracle(b)!)}`;
        expect(canonicalBody(b)).toBe(canonicalizeOracle(b));
        expect(snapshotDigestOf(b)).toBe(oracle);
        // The scanner's own digest (entries in its key order, fed to the hash in pieces) gives the same.
        expect(computeDigestOf(files, b.counts.bytes, truncated)).toBe(oracle);
      }),
      { numRuns: 300 },
    );
    // Control characters, U+2028 and astral characters in paths.
    const tricky: RepoSnapshotBody = { files: [{ path: 'a\u2028b\u0001\u{1F600}"\\', bytes: 1, mode: '0644', kind: 'file' }], truncated: false, counts: { files: 1, bytes: 1 } };
    expect(canonicalBody(tricky)).toBe(canonicalizeOracle(tricky));
    expect(computeDigestOf(tricky.files, 1)).toBe(`sha256:${sha256Hex(canonicalizeOracle(tricky)!)}`);
  });
});
