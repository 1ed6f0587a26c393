import { CairnError } from '../core/errors.js';
import { hasLoneSurrogate } from '../core/utf8.js';
import { snapshotDigestOf } from './digest.js';
import { relPathProblem } from './rules/relpath.js';
import type { RepoSnapshot } from './types.js';
import { isRecord } from '../core/jcs.js';

/**
 * JSON Schema (draft 2020-12) of the seed's RepoSnapshot document, identical to
 * `schemas/RepoSnapshot.schema.json` (a test keeps the two equal). Like the seed's schema it
 * does not check order, uniqueness, counts or the digest; `validateRepoSnapshot` checks the digest.
 */
export const RepoSnapshotSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://axiom.dev/schemas/v2/RepoSnapshot.schema.json',
  title: 'RepoSnapshot',
  description: 'Deterministic, content-addressed inventory of a directory tree (axiom.dev/v2).',
  type: 'object',
  additionalProperties: false,
  required: ['apiVersion', 'kind', 'root', 'snapshotDigest', 'body'],
  properties: {
    apiVersion: { const: 'axiom.dev/v2' },
    kind: { const: 'RepoSnapshot' },
    root: {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: { kind: { const: 'relative' } },
    },
    snapshotDigest: { type: 'string', pattern: '^sha256:[a-f0-9]{64}$' },
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['files', 'truncated', 'counts'],
      properties: {
        files: { type: 'array', items: { $ref: '#/$defs/Entry' } },
        truncated: { type: 'boolean' },
        counts: {
          type: 'object',
          additionalProperties: false,
          required: ['files', 'bytes'],
          properties: {
            files: { type: 'integer', minimum: 0 },
            bytes: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
  },
  $defs: {
    Entry: {
      type: 'object',
      additionalProperties: false,
      required: ['path', 'bytes', 'mode', 'kind'],
      properties: {
        path: { type: 'string', minLength: 1, maxLength: 1024 },
        bytes: { type: 'integer', minimum: 0 },
        sha256: { type: 'string', pattern: '^[a-f0-9]{64}$' },
        mode: { enum: ['0644', '0755'] },
        kind: { enum: ['file', 'symlink'] },
      },
    },
  },
} as const;

const DIGEST_RE = /^sha256:[a-f0-9]{64}$/;
const SHA_RE = /^[a-f0-9]{64}$/;

function isNonNegInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

function onlyKeys(obj: Record<string, unknown>, allowed: readonly string[], at: string, errors: string[]): void {
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) errors.push(`${at}: unexpected property "${k}"`);
}

function requireKeys(obj: Record<string, unknown>, required: readonly string[], at: string, errors: string[]): void {
  for (const k of required) if (!(k in obj)) errors.push(`${at}: missing property "${k}"`);
}

/** Code-point length, as JSON Schema counts string length. */
function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Schema violations of `doc` (the JSON Schema above, checked by hand so the library needs no
 * schema engine at run time; a property test holds it equal to ajv). Empty when valid.
 */
export function repoSnapshotSchemaErrors(doc: unknown): string[] {
  const errors: string[] = [];
  if (!isRecord(doc)) return ['document: must be a JSON object'];
  onlyKeys(doc, ['apiVersion', 'kind', 'root', 'snapshotDigest', 'body'], 'document', errors);
  requireKeys(doc, ['apiVersion', 'kind', 'root', 'snapshotDigest', 'body'], 'document', errors);
  if ('apiVersion' in doc && doc.apiVersion !== 'axiom.dev/v2') errors.push('apiVersion: must be "axiom.dev/v2"');
  if ('kind' in doc && doc.kind !== 'RepoSnapshot') errors.push('kind: must be "RepoSnapshot"');
  if ('root' in doc) {
    const root = doc.root;
    if (!isRecord(root)) errors.push('root: must be an object');
    else {
      onlyKeys(root, ['kind'], 'root', errors);
      requireKeys(root, ['kind'], 'root', errors);
      if ('kind' in root && root.kind !== 'relative') errors.push('root.kind: must be "relative"');
    }
  }
  if ('snapshotDigest' in doc && (typeof doc.snapshotDigest !== 'string' || !DIGEST_RE.test(doc.snapshotDigest))) errors.push('snapshotDigest: must match sha256:<64 lowercase hex>');
  if ('body' in doc) {
    const body = doc.body;
    if (!isRecord(body)) errors.push('body: must be an object');
    else {
      onlyKeys(body, ['files', 'truncated', 'counts'], 'body', errors);
      requireKeys(body, ['files', 'truncated', 'counts'], 'body', errors);
      if ('truncated' in body && typeof body.truncated !== 'boolean') errors.push('body.truncated: must be a boolean');
      if ('counts' in body) {
        const counts = body.counts;
        if (!isRecord(counts)) errors.push('body.counts: must be an object');
        else {
          onlyKeys(counts, ['files', 'bytes'], 'body.counts', errors);
          requireKeys(counts, ['files', 'bytes'], 'body.counts', errors);
          for (const k of ['files', 'bytes'] as const) if (k in counts && !isNonNegInt(counts[k])) errors.push(`body.counts.${k}: must be an integer >= 0`);
        }
      }
      if ('files' in body) {
        const files = body.files;
        if (!Array.isArray(files)) errors.push('body.files: must be an array');
        else files.forEach((e: unknown, i) => entryErrors(e, `body.files[${i}]`, errors));
      }
    }
  }
  return errors;
}

function entryErrors(e: unknown, at: string, errors: string[]): void {
  if (!isRecord(e)) {
    errors.push(`${at}: must be an object`);
    return;
  }
  onlyKeys(e, ['path', 'bytes', 'sha256', 'mode', 'kind'], at, errors);
  requireKeys(e, ['path', 'bytes', 'mode', 'kind'], at, errors);
  if ('path' in e) {
    const p = e.path;
    if (typeof p !== 'string' || codePointLength(p) < 1 || codePointLength(p) > 1024) errors.push(`${at}.path: must be a string of 1..1024 characters`);
  }
  if ('bytes' in e && !isNonNegInt(e.bytes)) errors.push(`${at}.bytes: must be an integer >= 0`);
  if ('sha256' in e && (typeof e.sha256 !== 'string' || !SHA_RE.test(e.sha256))) errors.push(`${at}.sha256: must be 64 lowercase hex characters`);
  if ('mode' in e && e.mode !== '0644' && e.mode !== '0755') errors.push(`${at}.mode: must be "0644" or "0755"`);
  if ('kind' in e && e.kind !== 'file' && e.kind !== 'symlink') errors.push(`${at}.kind: must be "file" or "symlink"`);
}

/**
 * Checks a parsed document: schema first (ERR_INVALID_SNAPSHOT, with the first problems in
 * `details.errors`), then that `snapshotDigest` is the digest of its body (ERR_DIGEST_MISMATCH).
 * Returns the document typed.
 */
export function validateRepoSnapshot(doc: unknown, source?: string): RepoSnapshot {
  const errors = repoSnapshotSchemaErrors(doc);
  const where = source === undefined ? {} : { path: source };
  if (errors.length > 0) {
    throw new CairnError('ERR_INVALID_SNAPSHOT', `not a valid RepoSnapshot${source === undefined ? '' : ` (${source})`}: ${errors[0]}${errors.length > 1 ? ` (+${errors.length - 1} more)` : ''}`, {
      ...where,
      details: { errors: errors.slice(0, 20) },
    });
  }
  const snap = doc as RepoSnapshot;
  if (snap.body.files.some((f) => hasLoneSurrogate(f.path))) {
    throw new CairnError('ERR_INVALID_SNAPSHOT', 'a path holds a lone UTF-16 surrogate, which has no canonical form', where);
  }
  // The seed's entry path is a RelPath (as its Zod schema checks): `../x`, `/etc/passwd` or
  // `a//b` cannot come from a snapshot and must not be diffed as if they could.
  for (const f of snap.body.files) {
    const problem = relPathProblem(f.path);
    if (problem !== null) {
      throw new CairnError('ERR_INVALID_SNAPSHOT', `not a valid RepoSnapshot${source === undefined ? '' : ` (${source})`}: path ${JSON.stringify(f.path)} is not a relative POSIX path (${problem})`, {
        ...where,
        details: { errors: [`body.files: path ${JSON.stringify(f.path)}: ${problem}`] },
      });
    }
  }
  const actual = snapshotDigestOf(snap.body);
  if (actual !== snap.snapshotDigest) {
    throw new CairnError('ERR_DIGEST_MISMATCH', `snapshotDigest does not match the body${source === undefined ? '' : ` of ${source}`}: the file was edited or damaged; take the snapshot again`, {
      ...where,
      details: { expected: snap.snapshotDigest, actual },
    });
  }
  return snap;
}
