/**
 * The stable codes of cairn's errors, CairnError's and the store's SessionError's alike (one
 * table, below, gives each its exit code). `code` is what tests and callers match on; `message`
 * says what went wrong and what to do about it.
 */
export type CairnErrorCode =
  | 'ERR_CONTAINMENT'
  | 'ERR_UNSUPPORTED_OP'
  | 'ERR_INVALID_OPTION'
  | 'ERR_ROOT_NOT_FOUND'
  | 'ERR_ROOT_NOT_DIR'
  | 'ERR_ROOT_REQUIRED'
  | 'ERR_ROOT_NOT_ALLOWED'
  | 'ERR_INVALID_SNAPSHOT'
  | 'ERR_DIGEST_MISMATCH'
  | 'ERR_CANONICALIZE'
  | 'ERR_ABORTED'
  | 'ERR_IO'
  | 'ERR_USAGE'
  | 'ERR_LOCK_TIMEOUT'
  | 'ERR_NOT_FOUND'
  | 'ERR_CORRUPT'
  | 'ERR_VALIDATION'
  | 'ERR_TOO_LARGE'
  | 'ERR_TOO_DEEP'
  // the store's (SessionError)
  | 'ERR_SESSION'
  | 'ERR_INVALID_IDENTIFIER'
  | 'ERR_INVALID_SCOPE'
  | 'ERR_INVALID_SNAPSHOT_ID'
  | 'ERR_INVALID_MANIFEST'
  | 'ERR_SNAPSHOT_EXISTS'
  | 'ERR_INVALID_JSON'
  | 'ERR_UNSUPPORTED_BACKEND'
  | (string & {});

export interface CairnErrorOptions {
  path?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Process exit code the CLI uses for this error (default 2 for usage/validation, 1 otherwise). */
  exitCode?: number;
}

/**
 * The exit code of every code that does not end in 1 (a failure): 2, the caller's input or
 * usage is wrong (fix it and run again); 3, something else holds what was asked for (a lock, an
 * id already taken: wait, or pick another). One table for CairnError and SessionError.
 */
const EXIT_CODES: Readonly<Record<string, 2 | 3>> = {
  ERR_CONTAINMENT: 2,
  ERR_UNSUPPORTED_OP: 2,
  ERR_INVALID_OPTION: 2,
  ERR_ROOT_NOT_FOUND: 2,
  ERR_ROOT_NOT_DIR: 2,
  ERR_ROOT_REQUIRED: 2,
  ERR_ROOT_NOT_ALLOWED: 2,
  ERR_INVALID_SNAPSHOT: 2,
  ERR_DIGEST_MISMATCH: 2,
  ERR_USAGE: 2,
  ERR_VALIDATION: 2,
  ERR_INVALID_IDENTIFIER: 2,
  ERR_INVALID_SCOPE: 2,
  ERR_INVALID_SNAPSHOT_ID: 2,
  ERR_INVALID_MANIFEST: 2,
  ERR_UNSUPPORTED_BACKEND: 2,
  ERR_LOCK_TIMEOUT: 3,
  ERR_SNAPSHOT_EXISTS: 3,
};

/** The exit code the CLI ends with for an error of this code (table above; 1 for any other). */
export function exitCodeFor(code: string): number {
  return Object.hasOwn(EXIT_CODES, code) ? EXIT_CODES[code]! : 1;
}

export class CairnError extends Error {
  override readonly name = 'CairnError';
  readonly code: CairnErrorCode;
  readonly path?: string;
  readonly details?: Record<string, unknown>;
  readonly exitCode: number;

  constructor(code: CairnErrorCode, message: string, options: CairnErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.path !== undefined) this.path = options.path;
    if (options.details !== undefined) this.details = options.details;
    this.exitCode = options.exitCode ?? exitCodeFor(code);
  }

  /** The `{code, message, path?, details?}` shape the CLI prints on stderr. */
  toJSON(): ErrorDocument {
    const out: ErrorDocument = {
      code: this.code,
      message: this.message,
    };
    if (this.path !== undefined) out.path = this.path;
    if (this.details !== undefined) out.details = this.details;
    return out;
  }
}

export function isCairnError(e: unknown): e is CairnError {
  return e instanceof CairnError;
}

/** The error document every surface prints: CLI stderr, MCP tool results. */
export interface ErrorDocument {
  code: string;
  message: string;
  path?: string;
  details?: Record<string, unknown>;
}

/**
 * An error that knows its stable code, its exit code and its error document: CairnError, and the
 * store's SessionError (kept a separate class for upstream's contract, same shape).
 */
export interface CodedError extends Error {
  code: string;
  exitCode: number;
  toJSON(): ErrorDocument;
}

export function isCodedError(e: unknown): e is CodedError {
  if (!(e instanceof Error)) return false;
  const c = e as Partial<CodedError>;
  return typeof c.code === 'string' && typeof c.exitCode === 'number' && typeof c.toJSON === 'function';
}

/** Node's errno code of an unknown thrown value, if any. */
export function errnoCode(e: unknown): string | undefined {
  if (typeof e === 'object' && e !== null && 'code' in e) {
    const code = (e).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
