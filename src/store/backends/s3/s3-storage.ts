/**
 * `SnapshotStorage` on S3-compatible object storage (AWS S3, Ceph RGW, …), with upstream's
 * config and key layout. `@aws-sdk/client-s3` is an optional peer dependency, imported only when
 * a store first talks to S3.
 */
import { createHash, randomUUID } from 'node:crypto';
import { SessionError } from '../../contract/errors.js';
import { inParallel } from '../../contract/parallel.js';
import { selectPrunable, type PrunePlan } from '../../contract/retention.js';
import { byteOrder, compareLocations, documentIssue, historyIdOf, snapshotExistsError } from '../../contract/rules.js';
import { isNoSuchBucket, isNoSuchKey, isMissingContentMd5, isNotImplemented, isPreconditionFailed, s3Failure } from './s3-errors.js';
import { normalisePrefix, S3KeyLayout } from './s3-keys.js';
import type { PruneResult, SnapshotLocation, StoreUsage, VerifyIssue, VerifyReport } from '../../contract/types.js';
import { isIdentifier, isScope } from '../../contract/validation.js';
import { SnapshotStorageBase, type HistoryPage, type StoredText } from '../base.js';

type S3Sdk = typeof import('@aws-sdk/client-s3');

/** The part of an `S3Client` the store uses; any AWS SDK v3 `S3Client` fits. */
export interface S3ClientLike {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- commands of every operation go through one `send`
  send(command: any, options?: { abortSignal?: AbortSignal }): Promise<any>;
  destroy?(): void;
}

/**
 * What the server does with `If-None-Match: *` on PUT: `enforced` (412 on an existing key),
 * `ignored` (overwrites silently), `unsupported` (501).
 */
export type ConditionalWrites = 'enforced' | 'ignored' | 'unsupported';

export interface S3StorageConfig {
  bucket: string;
  /** Key prefix; slashes at either end are ignored. */
  prefix?: string;
  /** AWS region (default `us-east-1`); not allowed together with `s3Client`. */
  region?: string;
  /** A client you configured yourself; the store never destroys it. */
  s3Client?: S3ClientLike;
  /** S3-compatible server, e.g. `http://127.0.0.1:18081`. */
  endpoint?: string;
  /** Path-style addressing (`endpoint/bucket/key`), which most self-hosted servers need. */
  forcePathStyle?: boolean;
  /** Explicit credentials; by default the SDK's chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles, …). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Attempts per request, including the first (default 3). Transient failures (5xx, throttling, resets) are retried with jittered exponential backoff. */
  maxAttempts?: number;
  /** Per-request timeout in ms (default 10 000) and TCP connect timeout (default 3 000). */
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Send Content-MD5 with DeleteObjects from the start (`md5`) or only after the server asks for it (`auto`, default). */
  deleteChecksum?: 'auto' | 'md5';
  /** Receives the one warning about weak create-only history (default `process.emitWarning`). */
  onWarning?: (message: string) => void;
}

const DEFAULT_REGION = 'us-east-1';
const MAX_KEYS = 1000;
const DELETE_BATCH = 1000;
/** Objects fetched at once by verify (the SDK's default agent allows 50 sockets). */
const VERIFY_PARALLEL = 16;

export class S3Storage extends SnapshotStorageBase {
  readonly bucket: string;
  readonly prefix: string;
  private readonly keys: S3KeyLayout;
  private readonly config: S3StorageConfig;
  private readonly ownsClient: boolean;
  private client: S3ClientLike | undefined;
  private sdk: Promise<S3Sdk> | undefined;
  private probing: Promise<ConditionalWrites> | undefined;
  private mode: ConditionalWrites | undefined;
  private deleteNeedsMd5: boolean;
  private warned = false;

  constructor(config: S3StorageConfig) {
    super();
    if (typeof config !== 'object' || config === null || typeof config.bucket !== 'string' || config.bucket === '') {
      throw new SessionError('S3Storage needs a bucket name: new S3Storage({ bucket: "my-bucket" })', { code: 'ERR_INVALID_OPTION' });
    }
    if (config.s3Client !== undefined && config.region !== undefined) {
      // Upstream rule: a given client already has its region.
      throw new SessionError('Cannot specify both s3Client and region; configure the region on your S3Client', { code: 'ERR_INVALID_OPTION' });
    }
    this.config = config;
    this.bucket = config.bucket;
    this.prefix = normalisePrefix(config.prefix);
    this.keys = new S3KeyLayout(this.prefix);
    this.client = config.s3Client;
    this.ownsClient = config.s3Client === undefined;
    this.deleteNeedsMd5 = config.deleteChecksum === 'md5';
  }

  /** What the server does with `If-None-Match: *`; undefined until `probe()` or the first write. */
  get conditionalWrites(): ConditionalWrites | undefined {
    return this.mode;
  }

  /**
   * Finds out once whether the server enforces `If-None-Match: *`: a fresh sentinel key is
   * written twice with the condition; exactly one 412 means enforced.
   */
  probe(): Promise<ConditionalWrites> {
    this.probing ??= this.runProbe().catch((e: unknown) => {
      this.probing = undefined; // an unreachable server must not pin a failed probe
      throw e;
    });
    return this.probing;
  }

  // ---- SnapshotStorage ----

  protected async writeLatest(location: SnapshotLocation, text: string): Promise<void> {
    await this.probe();
    await this.put(this.keys.latest(location), text, 'Failed to write');
  }

  protected async createHistory(location: SnapshotLocation, snapshotId: string, text: string): Promise<void> {
    const mode = await this.probe();
    await this.createOnly(this.keys.history(location, snapshotId), text, mode, snapshotId);
  }

  protected async readSnapshot(location: SnapshotLocation, snapshotId: string | undefined): Promise<StoredText | null> {
    return this.readKey(snapshotId === undefined ? this.keys.latest(location) : this.keys.history(location, snapshotId));
  }

  protected async historyPage(location: SnapshotLocation, page: HistoryPage): Promise<string[]> {
    const dir = this.keys.historyDir(location);
    const ids: string[] = [];
    // Keys come back in key order, which is id order for cairn's fixed-length UUID v7 ids (and any
    // ids of which none is another followed by '-': 'a-b.json' sorts before 'a.json'). The page is
    // sorted before it is cut, so only such prefix pairs could page out of order under a limit.
    // The cursor key without `.json`: every id greater than the cursor has a key after it.
    const startAfter = page.after === undefined ? undefined : `${dir}snapshot_${page.after}`;
    const done = (): boolean => page.limit !== undefined && ids.length >= page.limit;
    try {
      await this.eachKey(
        dir,
        (key) => {
          const id = historyIdOf(key.slice(dir.length));
          if (id !== undefined && (page.after === undefined || id > page.after)) ids.push(id);
          return !done();
        },
        { startAfter, pageSize: () => (page.limit === undefined ? MAX_KEYS : Math.min(MAX_KEYS, page.limit - ids.length)) },
      );
    } catch (e) {
      if (isNoSuchBucket(e)) return [];
      throw this.failure(`Failed to list snapshots for session ${location.sessionId}`, dir, e);
    }
    ids.sort(byteOrder);
    return page.limit === undefined ? ids : ids.slice(0, page.limit);
  }

  protected async removeSession(sessionId: string): Promise<void> {
    const prefix = this.keys.session(sessionId);
    try {
      const batch: string[] = [];
      const collect = (key: string): boolean => {
        batch.push(key);
        return true;
      };
      // Delete as we go, 1000 at a time, so a huge session never sits in memory.
      const flushFull = async (): Promise<void> => {
        while (batch.length >= DELETE_BATCH) await this.deleteKeys(batch.splice(0, DELETE_BATCH));
      };
      await this.eachKey(prefix, collect, { onPage: flushFull });
      while (batch.length > 0) await this.deleteKeys(batch.splice(0, DELETE_BATCH));
    } catch (e) {
      if (isNoSuchBucket(e)) return;
      if (e instanceof SessionError) throw e;
      throw this.failure(`Failed to delete session ${sessionId}`, prefix, e);
    }
  }

  protected async readManifest(location: SnapshotLocation): Promise<StoredText | null> {
    return this.readKey(this.keys.manifest(location));
  }

  protected async writeManifest(location: SnapshotLocation, text: string): Promise<void> {
    await this.probe();
    await this.put(this.keys.manifest(location), text, 'Failed to write');
  }

  // ---- upkeep ----

  async listSessions(): Promise<string[]> {
    const names = await this.commonPrefixes(this.prefix);
    return names.filter(isIdentifier).sort(byteOrder);
  }

  protected async locationsOf(sessionId: string): Promise<SnapshotLocation[]> {
    const scopesDir = this.keys.scopes(sessionId);
    const out: SnapshotLocation[] = [];
    for (const scope of (await this.commonPrefixes(scopesDir)).filter(isScope).sort(byteOrder)) {
      for (const scopeId of (await this.commonPrefixes(`${scopesDir}${scope}/`)).filter(isIdentifier).sort(byteOrder)) {
        out.push({ sessionId, scope, scopeId });
      }
    }
    return out;
  }

  protected async pruneHistory(location: SnapshotLocation, plan: PrunePlan, dryRun: boolean): Promise<PruneResult> {
    const ids = await this.listSnapshotIds({ location });
    const doomed = await selectPrunable(ids, plan, (id) => this.createdAtOf(location, id));
    if (!dryRun) {
      for (let i = 0; i < doomed.length; i += DELETE_BATCH) {
        await this.deleteKeys(doomed.slice(i, i + DELETE_BATCH).map((id) => this.keys.history(location, id)));
      }
    }
    return { location, deleted: doomed, kept: ids.length - doomed.length, dryRun };
  }

  protected async verifyDocuments(sessionId: string | undefined): Promise<VerifyReport> {
    const keys = await this.allKeys(this.scanPrefix(sessionId));
    // One slot per key keeps the report in key order while objects are fetched in parallel.
    const found: (VerifyIssue | undefined)[] = new Array<VerifyIssue | undefined>(keys.length);
    await inParallel(keys.length, VERIFY_PARALLEL, async (i) => {
      found[i] = await this.verifyKey(keys[i]!.key);
    });
    const issues = found.filter((x): x is VerifyIssue => x !== undefined);
    return { ok: issues.length === 0, checked: keys.length, issues };
  }

  private async verifyKey(key: string): Promise<VerifyIssue | undefined> {
    const kind = this.keys.classify(key);
    const where = this.url(key);
    if (kind.kind === 'probe') return { kind: 'temp-file', where, message: 'leftover capability-probe sentinel; safe to delete' };
    if (kind.kind === 'stray') return { kind: 'stray', where, message: 'not part of the snapshot layout' };
    let text: string | null;
    try {
      text = await this.getText(key);
    } catch (e) {
      // A server that went away is a failed verify, not a finding about this object.
      if (e instanceof SessionError && e.code === 'ERR_BACKEND_UNAVAILABLE') throw e;
      return { kind: 'unreadable', where, message: e instanceof Error ? e.message : String(e) };
    }
    if (text === null) return undefined; // deleted while we looked
    return documentIssue(text, where, kind.kind === 'manifest' ? 'manifest' : 'snapshot');
  }

  protected async usage(sessionId: string | undefined): Promise<StoreUsage[]> {
    const byLocation = new Map<string, StoreUsage>();
    for (const { key, size } of await this.allKeys(this.scanPrefix(sessionId))) {
      const kind = this.keys.classify(key);
      const location = 'location' in kind ? kind.location : undefined;
      if (location === undefined) continue;
      const id = `${location.sessionId}\u0000${location.scope}\u0000${location.scopeId}`;
      let usage = byLocation.get(id);
      if (usage === undefined) {
        usage = { ...location, history: 0, hasLatest: false, hasManifest: false, bytes: 0 };
        byLocation.set(id, usage);
      }
      usage.bytes += size;
      if (kind.kind === 'history') usage.history++;
      else if (kind.kind === 'latest') usage.hasLatest = true;
      else if (kind.kind === 'manifest') usage.hasManifest = true;
    }
    return [...byLocation.values()].sort(compareLocations);
  }

  // async so that every method of the contract returns a promise, even one with nothing to wait for
  // eslint-disable-next-line @typescript-eslint/require-await
  override async close(): Promise<void> {
    if (this.ownsClient) this.client?.destroy?.();
    this.client = undefined;
  }

  // ---- internals ----

  private url(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  private endpointName(): string {
    return this.config.endpoint ?? `AWS S3 (${this.config.region ?? DEFAULT_REGION})`;
  }

  private failure(what: string, key: string, e: unknown): SessionError {
    return s3Failure(`${what} ${this.url(key)}`, e, this.endpointName());
  }

  private scanPrefix(sessionId: string | undefined): string {
    return sessionId === undefined ? this.prefix : this.keys.session(sessionId);
  }

  private async readKey(key: string): Promise<StoredText | null> {
    const text = await this.getText(key);
    return text === null ? null : { text, where: this.url(key) };
  }

  private loadSdk(): Promise<S3Sdk> {
    this.sdk ??= import('@aws-sdk/client-s3').catch((e: unknown) => {
      this.sdk = undefined;
      throw new SessionError('S3Storage needs the AWS SDK, which is an optional peer dependency: run `npm install @aws-sdk/client-s3`', {
        code: 'ERR_MISSING_DEPENDENCY',
        cause: e,
      });
    });
    return this.sdk;
  }

  private async s3(): Promise<{ sdk: S3Sdk; client: S3ClientLike }> {
    const sdk = await this.loadSdk();
    if (this.client === undefined) {
      const c = this.config;
      this.client = new sdk.S3Client({
        region: c.region ?? DEFAULT_REGION,
        ...(c.endpoint === undefined ? {} : { endpoint: c.endpoint }),
        ...(c.forcePathStyle === undefined ? {} : { forcePathStyle: c.forcePathStyle }),
        ...(c.credentials === undefined ? {} : { credentials: c.credentials }),
        // The SDK's standard retry strategy: 5xx, throttling and connection resets, jittered
        // exponential backoff, bounded by maxAttempts; everything else fails at once.
        retryMode: 'standard',
        maxAttempts: c.maxAttempts ?? 3,
        requestHandler: { requestTimeout: c.requestTimeoutMs ?? 10_000, connectionTimeout: c.connectTimeoutMs ?? 3_000 },
      });
    }
    return { sdk, client: this.client };
  }

  private async runProbe(): Promise<ConditionalWrites> {
    const { sdk, client } = await this.s3();
    const key = this.keys.probe(`${Date.now()}-${randomUUID()}`);
    const put = (): Promise<unknown> =>
      client.send(new sdk.PutObjectCommand({ Bucket: this.bucket, Key: key, Body: 'probe', IfNoneMatch: '*', ContentType: 'text/plain' }));
    let mode: ConditionalWrites;
    try {
      await put();
      try {
        await put();
        mode = 'ignored';
      } catch (e) {
        if (isPreconditionFailed(e)) mode = 'enforced';
        else if (isNotImplemented(e)) mode = 'unsupported';
        else throw e;
      }
    } catch (e) {
      if (!isNotImplemented(e)) throw this.failure('Failed to probe conditional writes with', key, e);
      mode = 'unsupported';
    }
    try {
      await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch {
      // A leftover sentinel is harmless; `verify` reports it.
    }
    this.mode = mode;
    if (mode !== 'enforced') this.warnOnce(mode);
    return mode;
  }

  private warnOnce(mode: ConditionalWrites): void {
    if (this.warned) return;
    this.warned = true;
    const why = mode === 'ignored' ? 'silently ignores' : 'does not support';
    const message =
      `cairn S3Storage: ${this.endpointName()} ${why} If-None-Match: * on PUT, so history snapshots are ` +
      'created with HEAD-then-PUT, which two concurrent writers of the same id can race. Use a server that ' +
      'enforces conditional writes (AWS S3, Ceph RGW) for strict create-only history.';
    if (this.config.onWarning) this.config.onWarning(message);
    else process.emitWarning(message, { code: 'CAIRN_S3_CONDITIONAL_WRITES' });
  }

  private async put(key: string, body: string, what: string, ifNoneMatch = false): Promise<void> {
    const { sdk, client } = await this.s3();
    try {
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentType: 'application/json',
          ...(ifNoneMatch ? { IfNoneMatch: '*' } : {}),
        }),
      );
    } catch (e) {
      if (ifNoneMatch && isPreconditionFailed(e)) throw e;
      throw this.failure(what, key, e);
    }
  }

  private async createOnly(key: string, body: string, mode: ConditionalWrites, snapshotId: string): Promise<void> {
    const exists = (): SessionError => snapshotExistsError(snapshotId, this.url(key));
    if (mode === 'enforced') {
      try {
        await this.put(key, body, 'Failed to write', true);
      } catch (e) {
        if (!isPreconditionFailed(e)) throw e;
        // A retried PUT can meet its own first attempt, which landed before the connection broke;
        // that is success, told apart by the object holding exactly our bytes.
        if (attemptsOf(e) > 1 && (await this.getText(key)) === body) return;
        throw exists();
      }
      return;
    }
    // Weaker fallback, announced once by warnOnce: a concurrent writer can slip in between.
    if (await this.exists(key)) throw exists();
    await this.put(key, body, 'Failed to write');
  }

  private async exists(key: string): Promise<boolean> {
    const { sdk, client } = await this.s3();
    try {
      const res = (await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: key }))) as
        | { ETag?: string; $metadata?: { httpStatusCode?: number } }
        | undefined;
      // A real HEAD hit always carries an ETag and an HTTP status; an empty answer (a stub client,
      // as in upstream's mocked tests) proves nothing exists and must not block the create.
      return res?.ETag !== undefined || res?.$metadata?.httpStatusCode !== undefined;
    } catch (e) {
      if (isNoSuchKey(e)) return false;
      throw this.failure('Failed to check', key, e);
    }
  }

  /** The object's text; null when the key or bucket is missing or the body is empty (as upstream). */
  private async getText(key: string): Promise<string | null> {
    const { sdk, client } = await this.s3();
    try {
      const res = (await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }))) as {
        Body?: { transformToString(): Promise<string> };
      };
      if (res.Body === undefined || res.Body === null) return null;
      const text = await res.Body.transformToString();
      return text === '' ? null : text;
    } catch (e) {
      if (isNoSuchKey(e) || isNoSuchBucket(e)) return null;
      throw this.failure('Failed to read', key, e);
    }
  }

  /**
   * Walks keys under `prefix` in key order with ListObjectsV2 (StartAfter on the first request,
   * continuation tokens after). `visit` returns false to stop.
   */
  private async eachKey(
    prefix: string,
    visit: (key: string, size: number) => boolean,
    options: { startAfter?: string | undefined; pageSize?: () => number; onPage?: () => Promise<void> } = {},
  ): Promise<void> {
    const { sdk, client } = await this.s3();
    let token: string | undefined;
    for (;;) {
      const res = (await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          MaxKeys: Math.max(1, options.pageSize?.() ?? MAX_KEYS),
          ...(token === undefined ? (options.startAfter === undefined ? {} : { StartAfter: options.startAfter }) : { ContinuationToken: token }),
        }),
      )) as { Contents?: { Key?: string; Size?: number }[]; IsTruncated?: boolean; NextContinuationToken?: string };
      for (const object of res.Contents ?? []) {
        if (object.Key === undefined) continue;
        if (!visit(object.Key, object.Size ?? 0)) return;
      }
      await options.onPage?.();
      if (!res.IsTruncated) return;
      if (!res.NextContinuationToken) {
        throw new SessionError(`Listing ${this.url(prefix)} was truncated but the server sent no continuation token`, { code: 'ERR_IO' });
      }
      token = res.NextContinuationToken;
    }
  }

  private async allKeys(prefix: string): Promise<{ key: string; size: number }[]> {
    const out: { key: string; size: number }[] = [];
    try {
      await this.eachKey(prefix, (key, size) => {
        out.push({ key, size });
        return true;
      });
    } catch (e) {
      if (isNoSuchBucket(e)) return [];
      if (e instanceof SessionError) throw e;
      throw this.failure('Failed to list', prefix, e);
    }
    return out;
  }

  /** The next path segments under `prefix` (ListObjectsV2 with Delimiter `/`). */
  private async commonPrefixes(prefix: string): Promise<string[]> {
    const { sdk, client } = await this.s3();
    const out: string[] = [];
    let token: string | undefined;
    try {
      for (;;) {
        const res = (await client.send(
          new sdk.ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix,
            Delimiter: '/',
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        )) as { CommonPrefixes?: { Prefix?: string }[]; IsTruncated?: boolean; NextContinuationToken?: string };
        for (const p of res.CommonPrefixes ?? []) {
          if (p.Prefix?.startsWith(prefix)) out.push(p.Prefix.slice(prefix.length).replace(/\/$/, ''));
        }
        if (!res.IsTruncated || !res.NextContinuationToken) return out;
        token = res.NextContinuationToken;
      }
    } catch (e) {
      if (isNoSuchBucket(e)) return [];
      throw this.failure('Failed to list', prefix, e);
    }
  }

  /** DeleteObjects for up to 1000 keys; adds Content-MD5 when the server requires it. */
  private async deleteKeys(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const { sdk, client } = await this.s3();
    const send = async (withMd5: boolean): Promise<void> => {
      const command = new sdk.DeleteObjectsCommand({
        Bucket: this.bucket,
        Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
      });
      if (withMd5) addContentMd5(command);
      const res = (await client.send(command)) as { Errors?: { Key?: string; Code?: string; Message?: string }[] };
      const failed = res.Errors ?? [];
      if (failed.length > 0) {
        const first = failed[0]!;
        throw new SessionError(
          `Failed to delete ${failed.length} of ${keys.length} objects, first ${this.url(first.Key ?? '?')}: ${first.Code ?? ''} ${first.Message ?? ''}`.trim(),
          { code: 'ERR_IO' },
        );
      }
    };
    try {
      try {
        await send(this.deleteNeedsMd5);
      } catch (e) {
        if (this.deleteNeedsMd5 || !isMissingContentMd5(e)) throw e;
        this.deleteNeedsMd5 = true;
        await send(true);
      }
    } catch (e) {
      if (e instanceof SessionError) throw e;
      throw this.failure('Failed to delete objects under', keys[0]!, e);
    }
  }
}

function attemptsOf(e: unknown): number {
  const attempts = (e as { $metadata?: { attempts?: number } } | null)?.$metadata?.attempts;
  return typeof attempts === 'number' ? attempts : 1;
}

interface MiddlewareCommand {
  middlewareStack: {
    add(
      middleware: (next: (args: { request: unknown }) => Promise<unknown>) => (args: { request: unknown }) => Promise<unknown>,
      options: { step: 'build'; name: string },
    ): void;
  };
}

/** Content-MD5 of the serialized DeleteObjects body (the SDK now sends CRC32, which some servers reject). */
function addContentMd5(command: unknown): void {
  (command as MiddlewareCommand).middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { body?: unknown; headers?: Record<string, string> };
      if (request.headers && (typeof request.body === 'string' || request.body instanceof Uint8Array)) {
        request.headers['content-md5'] = createHash('md5').update(request.body).digest('base64');
      }
      return next(args);
    },
    { step: 'build', name: 'cairnContentMd5' },
  );
}

/**
 * Opens an S3 store from `s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=1`.
 * Credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, or the SDK's profile chain), never from the URL.
 */
// async so that a bad URL becomes a rejected promise, like every other store failure
// eslint-disable-next-line @typescript-eslint/require-await
export async function openS3StorageFromUrl(url: URL, env: NodeJS.ProcessEnv): Promise<S3Storage> {
  if (url.username !== '' || url.password !== '') {
    throw new SessionError(
      'Do not put credentials in the store URL (they end up in shell history); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment',
      { code: 'ERR_INVALID_OPTION' },
    );
  }
  const bucket = decodeURIComponent(url.hostname);
  if (bucket === '') {
    throw new SessionError(`No bucket in '${url.href}'; use s3://bucket/prefix?endpoint=…`, { code: 'ERR_INVALID_OPTION' });
  }
  const known = new Set(['endpoint', 'region', 'forcePathStyle']);
  for (const name of url.searchParams.keys()) {
    if (!known.has(name)) {
      throw new SessionError(`Unknown S3 store option '${name}'; accepted: endpoint, region, forcePathStyle`, { code: 'ERR_INVALID_OPTION' });
    }
  }
  const flag = url.searchParams.get('forcePathStyle');
  if (flag !== null && !['1', '0', 'true', 'false'].includes(flag)) {
    throw new SessionError(`forcePathStyle must be 1, 0, true or false, got '${flag}'`, { code: 'ERR_INVALID_OPTION' });
  }
  const endpoint = url.searchParams.get('endpoint') ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  const config: S3StorageConfig = {
    bucket,
    prefix: decodeURIComponent(url.pathname),
    region: url.searchParams.get('region') ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? DEFAULT_REGION,
  };
  if (endpoint) config.endpoint = endpoint;
  if (flag !== null) config.forcePathStyle = flag === '1' || flag === 'true';
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    config.credentials = {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    };
  }
  return new S3Storage(config);
}
