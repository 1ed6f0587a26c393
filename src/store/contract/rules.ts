/**
 * Backend-neutral rules every cairn backend applies the same way: input validation with
 * upstream's messages (as `SessionError`), the `Snapshot`/`SnapshotManifest` shape checks, and
 * the listing rules (anchored names, byte order, exclusive case-insensitive cursor, limit).
 */
import { SessionError } from './errors.js';
import { SNAPSHOT_SCHEMA_VERSION, type JSONValue, type Snapshot, type SnapshotLocation, type SnapshotManifest, type VerifyIssue } from './types.js';
import { isIdentifier, isScope, validateIdentifier, validateScope, validateUuidV7 } from './validation.js';
import { isRecord } from '../../core/jcs.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds, jsonTextDepth } from '../../core/bounded-json.js';

function rethrowAs(code: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    // Keep upstream's exact message, but as a SessionError with a stable code.
    throw new SessionError((e as Error).message, { code, cause: e });
  }
}

export function checkSessionId(sessionId: string): void {
  rethrowAs('ERR_INVALID_IDENTIFIER', () => validateIdentifier(sessionId));
}

/** Validates every part of a location (upstream validates sessionId and scopeId; cairn adds scope). */
export function checkLocation(location: SnapshotLocation): void {
  if (typeof location !== 'object' || location === null) {
    throw new SessionError('location must be an object {sessionId, scope, scopeId}', { code: 'ERR_INVALID_IDENTIFIER' });
  }
  checkSessionId(location.sessionId);
  rethrowAs('ERR_INVALID_SCOPE', () => validateScope(location.scope));
  rethrowAs('ERR_INVALID_IDENTIFIER', () => validateIdentifier(location.scopeId));
}

/** History ids follow the identifier rule, not UUID v7 (upstream's own tests save `'1'` and `'5'`). */
export function checkHistoryId(snapshotId: string): void {
  rethrowAs('ERR_INVALID_IDENTIFIER', () => validateIdentifier(snapshotId));
}

/** What is wrong with `value` as a Snapshot, or undefined when it is one. */
export function snapshotProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'it is not a JSON object';
  if (!isScope(value.scope)) return `"scope" must be 'agent' or 'multiAgent'`;
  if (typeof value.schemaVersion !== 'string') return '"schemaVersion" must be a string';
  if (typeof value.createdAt !== 'string') return '"createdAt" must be an ISO 8601 string';
  if (!isRecord(value.data)) return '"data" must be an object';
  if (!isRecord(value.appData)) return '"appData" must be an object';
  return undefined;
}

export function isSnapshot(value: unknown): value is Snapshot {
  return snapshotProblem(value) === undefined;
}

export function manifestProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'it is not a JSON object';
  if (typeof value.schemaVersion !== 'string') return '"schemaVersion" must be a string';
  if (typeof value.updatedAt !== 'string') return '"updatedAt" must be an ISO 8601 string';
  return undefined;
}

/** Rejects a document that is not a Snapshot before it is written. */
export function checkSnapshotToSave(snapshot: Snapshot): void {
  const problem = snapshotProblem(snapshot) ?? depthProblem(snapshot);
  if (problem !== undefined) {
    throw new SessionError(`Cannot save snapshot: ${problem}`, { code: 'ERR_INVALID_SNAPSHOT' });
  }
}

export function checkManifestToSave(manifest: SnapshotManifest): void {
  const problem = manifestProblem(manifest) ?? depthProblem(manifest);
  if (problem !== undefined) {
    throw new SessionError(`Cannot save manifest: ${problem}`, { code: 'ERR_INVALID_MANIFEST' });
  }
}

/** Nothing is saved that the readers' depth bound would refuse. */
function depthProblem(value: unknown): string | undefined {
  return jsonDepthExceeds(value, MAX_JSON_DEPTH) ? `it nests more than ${MAX_JSON_DEPTH} levels deep (cairn reads at most that)` : undefined;
}

const TOO_DEEP = `nests more than ${MAX_JSON_DEPTH} levels deep, more than cairn reads (nothing cairn writes nests so deep); restore it from a backup or delete it`;

/** Parses a stored document within the depth bound; `where` names the file or key in the error. */
export function parseStored(text: string, where: string): JSONValue {
  if (jsonTextDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) throw new SessionError(`File ${where} ${TOO_DEEP}`, { code: 'ERR_TOO_DEEP' });
  try {
    return JSON.parse(text) as JSONValue;
  } catch (e) {
    throw new SessionError(`Invalid JSON in file ${where}`, { code: 'ERR_INVALID_JSON', cause: e });
  }
}

export function parseStoredSnapshot(text: string, where: string): Snapshot {
  const value = parseStored(text, where);
  const problem = snapshotProblem(value);
  if (problem !== undefined) {
    throw new SessionError(`File ${where} is not a valid snapshot: ${problem}`, { code: 'ERR_CORRUPT' });
  }
  return value as unknown as Snapshot;
}

export function parseStoredManifest(text: string, where: string): SnapshotManifest {
  const value = parseStored(text, where);
  const problem = manifestProblem(value);
  if (problem !== undefined) {
    throw new SessionError(`File ${where} is not a valid manifest: ${problem}`, { code: 'ERR_CORRUPT' });
  }
  return value as unknown as SnapshotManifest;
}

/**
 * What `verify` reports about a stored document's text: not JSON, or not a valid snapshot /
 * manifest; undefined when it is fine. One wording for every backend.
 */
export function documentIssue(text: string, where: string, kind: 'snapshot' | 'manifest'): VerifyIssue | undefined {
  let value: unknown;
  if (jsonTextDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return { kind: 'invalid-json', where, message: TOO_DEEP };
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    return { kind: 'invalid-json', where, message: `is not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
  const problem = kind === 'snapshot' ? snapshotProblem(value) : manifestProblem(value);
  return problem === undefined ? undefined : { kind: kind === 'snapshot' ? 'invalid-snapshot' : 'invalid-manifest', where, message: problem };
}

/** The same document upstream writes: 2-space JSON, no trailing newline. */
export function serialize(value: Snapshot | SnapshotManifest): string {
  return JSON.stringify(value, null, 2);
}

export function defaultManifest(now: Date = new Date()): SnapshotManifest {
  return { schemaVersion: SNAPSHOT_SCHEMA_VERSION, updatedAt: now.toISOString() };
}

/** The error every backend raises when a history snapshot id is taken (history is create-only). */
export function snapshotExistsError(snapshotId: string, where: string, cause?: unknown): SessionError {
  return new SessionError(`Snapshot ${snapshotId} already exists at ${where}; history is immutable, save under a new id (uuidV7())`, {
    code: 'ERR_SNAPSHOT_EXISTS',
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** File name of a history snapshot. */
export function historyFileName(snapshotId: string): string {
  return `snapshot_${snapshotId}.json`;
}

const HISTORY_NAME = /^snapshot_([a-z0-9_-]+)\.json$/;

/**
 * The id of a history file name, or undefined. Anchored at both ends (upstream's unanchored
 * regex lists `xsnapshot_a.json`), and only ids passing the identifier rule.
 */
export function historyIdOf(name: string): string | undefined {
  const m = HISTORY_NAME.exec(name);
  return m?.[1];
}

export interface PageParams {
  limit?: number;
  startAfter?: string;
}

/**
 * Normalises listing parameters in upstream's order: `limit <= 0` returns `[]` before
 * `startAfter` is looked at; a non-empty `startAfter` must be a UUID v7 and is compared
 * case-insensitively (stored ids are lower case by the identifier rule).
 * Returns undefined when the page is empty by definition.
 */
export function normalisePage(params: PageParams): { limit: number | undefined; after: string | undefined } | undefined {
  const { limit, startAfter } = params;
  if (limit !== undefined && limit <= 0) return undefined;
  if (limit !== undefined && Number.isNaN(limit)) {
    throw new SessionError(`limit must be a number, got ${String(limit)}`, { code: 'ERR_INVALID_OPTION' });
  }
  let after: string | undefined;
  if (startAfter) {
    rethrowAs('ERR_INVALID_SNAPSHOT_ID', () => validateUuidV7(startAfter));
    after = startAfter.toLowerCase();
  }
  return { limit, after };
}

/**
 * One page of a normalised listing from an unsorted collection. Filters on the cursor first, and
 * with a limit keeps only the `limit` smallest in a bounded heap, so a page costs O(n log limit)
 * rather than a sort of everything. Ids are ASCII, where `<` equals byte order.
 */
export function collectPage(ids: Iterable<string>, page: { after: string | undefined; limit: number | undefined }): string[] {
  const picked = new PageCollector(page.after, page.limit);
  for (const id of ids) if (isIdentifier(id)) picked.offer(id);
  return picked.result();
}

/** Collects the smallest ids after a cursor, up to a limit (a max-heap of the current page). */
export class PageCollector {
  private readonly heap: string[] = [];
  private readonly limit: number;

  constructor(
    private readonly after: string | undefined,
    limit: number | undefined,
  ) {
    // A fractional limit behaves like upstream's slice(0, limit).
    this.limit = limit === undefined ? Infinity : Math.floor(limit);
  }

  offer(id: string): void {
    if (this.after !== undefined && !(id > this.after)) return;
    const heap = this.heap;
    if (heap.length < this.limit) {
      heap.push(id);
      if (this.limit !== Infinity) this.siftUp(heap.length - 1);
      return;
    }
    if (heap.length === 0 || !(id < heap[0]!)) return;
    heap[0] = id;
    this.siftDown(0);
  }

  result(): string[] {
    return [...this.heap].sort(byteOrder);
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!(heap[i]! > heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let largest = i;
      if (l < heap.length && heap[l]! > heap[largest]!) largest = l;
      if (r < heap.length && heap[r]! > heap[largest]!) largest = r;
      if (largest === i) return;
      [heap[i], heap[largest]] = [heap[largest]!, heap[i]!];
      i = largest;
    }
  }
}

/** A page from ids already sorted in byte order: binary search for the cursor, then slice. */
export function pageOfSorted(sortedIds: readonly string[], after: string | undefined, limit: number | undefined): string[] {
  let lo = 0;
  if (after !== undefined) {
    let hi = sortedIds.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sortedIds[mid]! > after) hi = mid;
      else lo = mid + 1;
    }
  }
  return sortedIds.slice(lo, limit === undefined ? undefined : lo + Math.max(0, Math.floor(limit)));
}

export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The order every backend lists locations in: session, then scope, then scope id. */
export function compareLocations(a: SnapshotLocation, b: SnapshotLocation): number {
  return byteOrder(a.sessionId, b.sessionId) || byteOrder(a.scope, b.scope) || byteOrder(a.scopeId, b.scopeId);
}
