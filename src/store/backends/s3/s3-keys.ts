/**
 * The S3 key layout: the file store's directory layout under an optional prefix, as upstream:
 * `[<prefix>/]<sessionId>/scopes/<scope>/<scopeId>/snapshots/{snapshot_latest.json, manifest.json,
 * immutable_history/snapshot_<id>.json}`.
 */
import type { SnapshotLocation } from '../../contract/types.js';
import { historyIdOf } from '../../contract/rules.js';
import { isIdentifier, isScope } from '../../contract/validation.js';

export const LATEST_NAME = 'snapshot_latest.json';
export const MANIFEST_NAME = 'manifest.json';
export const HISTORY_DIR = 'immutable_history/';
/** Capability-probe sentinels live here; `.` keeps them out of the session namespace. */
export const PROBE_DIR = '.cairn-probe/';

/** `'a/b/'` for `'/a/b'`, `'a/b'` or `'a/b/'`; `''` for no prefix. */
export function normalisePrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

export class S3KeyLayout {
  constructor(readonly prefix: string) {}

  session(sessionId: string): string {
    return `${this.prefix}${sessionId}/`;
  }

  scopes(sessionId: string): string {
    return `${this.session(sessionId)}scopes/`;
  }

  location(location: SnapshotLocation): string {
    return `${this.scopes(location.sessionId)}${location.scope}/${location.scopeId}/snapshots/`;
  }

  latest(location: SnapshotLocation): string {
    return this.location(location) + LATEST_NAME;
  }

  manifest(location: SnapshotLocation): string {
    return this.location(location) + MANIFEST_NAME;
  }

  historyDir(location: SnapshotLocation): string {
    return this.location(location) + HISTORY_DIR;
  }

  history(location: SnapshotLocation, snapshotId: string): string {
    return `${this.historyDir(location)}snapshot_${snapshotId}.json`;
  }

  probe(token: string): string {
    return `${this.prefix}${PROBE_DIR}${token}`;
  }

  /** What a key under the prefix is, by the layout; `stray` for anything else. */
  classify(key: string): KeyKind {
    if (!key.startsWith(this.prefix)) return { kind: 'stray' };
    const rest = key.slice(this.prefix.length);
    if (rest.startsWith(PROBE_DIR)) return { kind: 'probe' };
    const m = /^([^/]+)\/scopes\/([^/]+)\/([^/]+)\/snapshots\/(.+)$/.exec(rest);
    if (!m) return { kind: 'stray' };
    const [, sessionId, scope, scopeId, tail] = m as unknown as [string, string, string, string, string];
    if (!isIdentifier(sessionId) || !isScope(scope) || !isIdentifier(scopeId)) return { kind: 'stray' };
    const location: SnapshotLocation = { sessionId, scope, scopeId };
    if (tail === LATEST_NAME) return { kind: 'latest', location };
    if (tail === MANIFEST_NAME) return { kind: 'manifest', location };
    if (tail.startsWith(HISTORY_DIR)) {
      const snapshotId = historyIdOf(tail.slice(HISTORY_DIR.length));
      if (snapshotId !== undefined) return { kind: 'history', location, snapshotId };
    }
    return { kind: 'stray', location };
  }
}

export type KeyKind =
  | { kind: 'latest' | 'manifest'; location: SnapshotLocation }
  | { kind: 'history'; location: SnapshotLocation; snapshotId: string }
  | { kind: 'probe' }
  | { kind: 'stray'; location?: SnapshotLocation };
