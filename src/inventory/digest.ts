import { hash } from 'node:crypto';
import type { RepoSnapshotBody } from './types.js';

/**
 * Every key that can occur in a body, in UTF-16 order. With this replacer list JSON.stringify
 * emits each object's keys in that order, and for this schema (strings, booleans, safe
 * integers) its output IS the RFC 8785 form: the digest needs no general canonicalizer on the
 * hot path (tests cross-check against the `canonicalize` reference implementation).
 */
const BODY_KEYS_SORTED = ['bytes', 'counts', 'files', 'kind', 'mode', 'path', 'sha256', 'truncated'];

/** RFC 8785 canonical JSON of a RepoSnapshot body. */
export function canonicalBody(body: RepoSnapshotBody): string {
  return JSON.stringify(body, BODY_KEYS_SORTED);
}

/** `sha256:` + hex sha256 of the canonical body — the seed's `snapshotDigest`. */
export function snapshotDigestOf(body: RepoSnapshotBody): string {
  return `sha256:${hash('sha256', canonicalBody(body), 'hex')}`;
}
