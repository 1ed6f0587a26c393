/** How S3 failures map onto cairn's outcomes (null, "exists", "unsupported", SessionError). */
import { NETWORK_ERROR_CODES, SessionError } from '../../contract/errors.js';

interface S3ErrorShape {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { statusCode?: number };
}

function shape(e: unknown): S3ErrorShape {
  return typeof e === 'object' && e !== null ? e : {};
}

export function httpStatusOf(e: unknown): number | undefined {
  const s = shape(e);
  return s.$metadata?.httpStatusCode ?? s.$response?.statusCode;
}

function nameOf(e: unknown): string {
  const s = shape(e);
  return s.name ?? s.Code ?? '';
}

/** A missing key (GET/HEAD) — upstream maps it to `null`. */
export function isNoSuchKey(e: unknown): boolean {
  const name = nameOf(e);
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatusOf(e) === 404 && name !== 'NoSuchBucket');
}

export function isNoSuchBucket(e: unknown): boolean {
  return nameOf(e) === 'NoSuchBucket';
}

/** `If-None-Match: *` refused because the key exists (412), or lost a concurrent create (409). */
export function isPreconditionFailed(e: unknown): boolean {
  const name = nameOf(e);
  return name === 'PreconditionFailed' || name === 'ConditionalRequestConflict' || httpStatusOf(e) === 412;
}

export function isNotImplemented(e: unknown): boolean {
  return nameOf(e) === 'NotImplemented' || httpStatusOf(e) === 501;
}

/** Servers that insist on Content-MD5 for DeleteObjects (Swift s3api and older gateways). */
export function isMissingContentMd5(e: unknown): boolean {
  const s = shape(e);
  return httpStatusOf(e) === 400 && /content-?md5/i.test(`${nameOf(e)} ${s.message ?? ''}`);
}

/** No HTTP answer at all: refused, reset, timed out. */
export function isUnreachable(e: unknown): boolean {
  const s = shape(e);
  if (httpStatusOf(e) !== undefined && httpStatusOf(e)! > 0) return false;
  return NETWORK_ERROR_CODES.has(s.code ?? '') || /TimeoutError|RequestTimeout|AbortError/.test(nameOf(e)) || /ECONNREFUSED|ECONNRESET|socket hang up|timed? ?out/i.test(s.message ?? '');
}

/** The SDK found no credentials anywhere (it says only "Could not load credentials from any providers"). */
export function isMissingCredentials(e: unknown): boolean {
  const s = shape(e);
  return nameOf(e) === 'CredentialsProviderError' || /could not load credentials/i.test(s.message ?? '');
}

/** The SessionError for a failed S3 call; `what` says what cairn was doing and on which key. */
export function s3Failure(what: string, e: unknown, endpoint: string): SessionError {
  const s = shape(e);
  const status = httpStatusOf(e);
  if (isMissingCredentials(e)) {
    return new SessionError(
      `${what}: no S3 credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys) or AWS_PROFILE in the environment. ` +
        'Keys never go in the store URL; its parameters are endpoint, region and forcePathStyle (s3://bucket/prefix?endpoint=http://host:port&region=…&forcePathStyle=1)',
      { code: 'ERR_S3_CREDENTIALS', cause: e },
    );
  }
  if (isUnreachable(e)) {
    return new SessionError(
      `${what}: the S3 endpoint ${endpoint} did not answer (${s.code ?? nameOf(e) ?? 'network error'}${s.message ? `: ${s.message}` : ''}); check that the server is running and reachable`,
      { code: 'ERR_BACKEND_UNAVAILABLE', cause: e },
    );
  }
  if (isNoSuchBucket(e)) {
    return new SessionError(`${what}: the bucket does not exist; create it first (S3Storage never creates buckets)`, { code: 'ERR_IO', cause: e });
  }
  const detail = [nameOf(e), status === undefined ? undefined : `HTTP ${status}`, s.message].filter(Boolean).join(', ');
  const hint = status === 403 ? '; check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and the bucket policy' : '';
  return new SessionError(`${what}: ${detail || String(e)}${hint}`, { code: 'ERR_IO', cause: e });
}
