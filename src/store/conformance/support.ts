/** What every group of the conformance suite shares: fixtures, helpers, and how a case is registered. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ManagedSnapshotStorage, Snapshot, SnapshotLocation, SnapshotStorage } from '../contract/types.js';
import { uuidV7 } from '../contract/uuid.js';

/** Registers one case: it runs on a fresh store, in a fresh session at `location`. */
export type CaseRegistrar = (name: string, body: (storage: SnapshotStorage, location: SnapshotLocation) => Promise<void>) => void;

export const IDENTIFIER_MESSAGE = (id: string) => `Identifier '${id}' can only contain lowercase letters, numbers, hyphens, and underscores`;
export const UUID_MESSAGE = (id: string) => `'${id}' is not a valid UUID v7 snapshot ID`;

/** Ids that must never pass as session, scope or snapshot ids (path tricks, case, NUL, unicode, size). */
export const HOSTILE_IDENTIFIERS: readonly string[] = [
  '',
  '.',
  '..',
  '../evil',
  'a/b',
  'a\\b',
  'a\0b',
  'UPPER',
  'with space',
  'café',
  '😀',
  'a.json',
  `A${'a'.repeat(10_000)}`,
];

/** Upstream's three fixture ids (out of order on purpose in tests). */
export const FIXTURE_IDS = ['019c9bf1-14e5-7eef-8a3b-1c2d3e4f5a6b', '019c9bf1-1d34-7eef-9a3b-1c2d3e4f5a6b', '019c9bf1-24bb-7eef-aa3b-1c2d3e4f5a6b'] as const;

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export function snapshotOf(data: Snapshot['data'] = {}, extra: Partial<Snapshot> = {}): Snapshot {
  return { scope: 'agent', schemaVersion: '1.0', createdAt: new Date().toISOString(), data, appData: {}, ...extra };
}

export async function expectSessionError(promise: Promise<unknown>, message?: string | RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof Error, `expected an Error, got ${String(e)}`);
    assert.equal(e.name, 'SessionError', `expected a SessionError, got ${e.name}: ${e.message}`);
    if (typeof message === 'string') assert.equal(e.message, message);
    else if (message !== undefined) assert.match(e.message, message);
    return true;
  });
}

export function managed(storage: SnapshotStorage): ManagedSnapshotStorage {
  return storage as ManagedSnapshotStorage;
}

/** Saves `count` history snapshots under fresh UUID v7 ids, optionally with chosen `createdAt`s; returns the ids in order. */
export async function fill(s: SnapshotStorage, location: SnapshotLocation, count: number, createdAt?: (i: number) => string): Promise<string[]> {
  const ids = Array.from({ length: count }, () => uuidV7());
  for (const [i, id] of ids.entries()) {
    await s.saveSnapshot({ location, snapshotId: id, isLatest: false, snapshot: snapshotOf({ i }, createdAt ? { createdAt: createdAt(i) } : {}) });
  }
  return ids;
}
