import * as fs from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RepoSnapshotSchema, diffSnapshots, makeRepoSnapshot, repoSnapshotSchemaErrors, validateRepoSnapshot, type RepoSnapshot, type RepoSnapshotEntry } from '../../src/inventory/index.js';
import { REPO_ROOT } from '../support/cli.js';

const ajv = new Ajv2020({ strict: true });
const validate = ajv.compile(RepoSnapshotSchema);
const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);

function doc(files: RepoSnapshotEntry[]): RepoSnapshot {
  return makeRepoSnapshot({ files, truncated: false, counts: { files: files.length, bytes: files.reduce((n, f) => n + f.bytes, 0) } });
}

describe('RepoSnapshot JSON Schema', () => {
  it('the shipped schemas/RepoSnapshot.schema.json equals the exported schema (draft 2020-12, seed $id)', () => {
    const file = JSON.parse(fs.readFileSync(`${REPO_ROOT}/schemas/RepoSnapshot.schema.json`, 'utf8')) as unknown;
    expect(file).toEqual(RepoSnapshotSchema);
    expect(RepoSnapshotSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(RepoSnapshotSchema.$id).toBe('https://axiom.dev/schemas/v2/RepoSnapshot.schema.json');
    expect(RepoSnapshotSchema.additionalProperties).toBe(false);
  });

  it('the built-in validator agrees with ajv on valid and mutated documents', () => {
    const base = doc([
      { path: 'a', bytes: 1, sha256: SHA_A, mode: '0644', kind: 'file' },
      { path: 'b', bytes: 0, mode: '0755', kind: 'symlink' },
    ]);
    const mutation = fc.constantFrom<((d: Record<string, unknown>) => void)[]>(
      [(d) => (d.apiVersion = 'axiom.dev/v1')],
      [(d) => (d.kind = 'Manifest')],
      [(d) => (d.extra = 1)],
      [(d) => delete d.root],
      [(d) => ((d.root as Record<string, unknown>).kind = 'absolute')],
      [(d) => (d.snapshotDigest = 'sha256:XYZ')],
      [(d) => ((d.body as Record<string, unknown>).truncated = 'no')],
      [(d) => ((d.body as { counts: Record<string, unknown> }).counts.files = -1)],
      [(d) => ((d.body as { counts: Record<string, unknown> }).counts.bytes = 1.5)],
      [(d) => ((d.body as { files: Record<string, unknown>[] }).files[0]!.mode = '0777')],
      [(d) => ((d.body as { files: Record<string, unknown>[] }).files[0]!.kind = 'dir')],
      [(d) => ((d.body as { files: Record<string, unknown>[] }).files[0]!.sha256 = 'A'.repeat(64))],
      [(d) => ((d.body as { files: Record<string, unknown>[] }).files[0]!.path = '')],
      [(d) => ((d.body as { files: Record<string, unknown>[] }).files[0]!.path = 'x'.repeat(1025))],
      [(d) => ((d.body as { files: Record<string, unknown>[] }).files[0]!.path = '\u{1F600}'.repeat(1024))],
      [(d) => delete (d.body as { files: Record<string, unknown>[] }).files[1]!.bytes],
      [(d) => ((d.body as { files: Record<string, unknown>[] }).files[1]!.owner = 'me')],
      [(d) => ((d.body as Record<string, unknown>).files = {})],
      [() => undefined],
    );
    fc.assert(
      fc.property(fc.array(mutation, { maxLength: 3 }), (muts) => {
        const d = structuredClone(base) as unknown as Record<string, unknown>;
        for (const m of muts) {
          try {
            m[0]!(d);
          } catch {
            // an earlier mutation removed what this one edits
          }
        }
        expect(repoSnapshotSchemaErrors(d).length === 0).toBe(validate(d));
      }),
      { numRuns: 200 },
    );
  });

  it('validateRepoSnapshot rejects schema violations (ERR_INVALID_SNAPSHOT) and digest mismatches (ERR_DIGEST_MISMATCH)', () => {
    const good = doc([{ path: 'a', bytes: 1, sha256: SHA_A, mode: '0644', kind: 'file' }]);
    expect(validateRepoSnapshot(structuredClone(good))).toEqual(good);
    expect(() => validateRepoSnapshot({ ...good, kind: 'X' })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_SNAPSHOT' }) as Error);
    const tampered = structuredClone(good);
    tampered.body.files[0]!.bytes = 2;
    expect(() => validateRepoSnapshot(tampered)).toThrow(expect.objectContaining({ code: 'ERR_DIGEST_MISMATCH' }) as Error);
    // Key order in the file does not matter: the digest is over the canonical form.
    const reordered = JSON.parse(JSON.stringify({ body: { counts: good.body.counts, truncated: false, files: [{ kind: 'file', mode: '0644', sha256: SHA_A, bytes: 1, path: 'a' }] }, snapshotDigest: good.snapshotDigest, root: good.root, kind: good.kind, apiVersion: good.apiVersion })) as unknown;
    expect(() => validateRepoSnapshot(reordered)).not.toThrow();
  });

  it('validateRepoSnapshot rejects entries whose path is not a RelPath (../x, /abs, a//b, CON), even with a matching digest', () => {
    for (const bad of ['../etc/passwd', '/etc/passwd', 'a//b', './a', 'dir/CON', 'trail ', 'a\\b']) {
      const d = doc([{ path: bad, bytes: 1, sha256: SHA_A, mode: '0644', kind: 'file' }]);
      expect(() => validateRepoSnapshot(d), bad).toThrow(expect.objectContaining({ code: 'ERR_INVALID_SNAPSHOT' }) as Error);
    }
    expect(() => validateRepoSnapshot(doc([{ path: 'src/ok.ts', bytes: 1, sha256: SHA_A, mode: '0644', kind: 'file' }]))).not.toThrow();
  });
});

describe('diffSnapshots', () => {
  const f = (path: string, over: Partial<RepoSnapshotEntry> = {}): RepoSnapshotEntry => ({ path, bytes: 1, sha256: SHA_A, mode: '0644', kind: 'file', ...over });

  it('counts a mode change or a kind change even with equal content', () => {
    const a = doc([f('m'), f('k')]);
    const b = doc([f('m', { mode: '0755' }), f('k', { kind: 'symlink' })]);
    expect(diffSnapshots(a, b).changed).toEqual([
      { path: 'k', from: SHA_A, to: SHA_A },
      { path: 'm', from: SHA_A, to: SHA_A },
    ]);
  });

  it('uses sizes when either side lacks a digest, digests when both have one', () => {
    const a = doc([f('same-size', { sha256: SHA_A }), f('both', { sha256: SHA_A }), f('grew', { sha256: SHA_A })]);
    const b = doc([f('same-size', { sha256: undefined }), f('both', { sha256: SHA_B }), f('grew', { bytes: 2, sha256: undefined })]);
    for (const e of b.body.files) if (e.sha256 === undefined) delete e.sha256;
    expect(diffSnapshots(a, b)).toEqual({ added: [], removed: [], changed: [{ path: 'both', from: SHA_A, to: SHA_B }, { path: 'grew', from: SHA_A, to: null }].sort((x, y) => (x.path < y.path ? -1 : 1)) });
  });

  it('sorts by code point, tolerates unsorted input and lets a later duplicate win', () => {
    const a = doc([f('b'), f('a')]);
    const b = doc([f('\u{1F600}'), f('\uFF61'), f('a', { sha256: SHA_B }), f('a')]);
    expect(diffSnapshots(a, b)).toEqual({ added: ['\uFF61', '\u{1F600}'], removed: ['b'], changed: [] });
  });
});
