/**
 * The one error type of cairn. `code` is stable (tests and callers match on it);
 * `message` says what went wrong and what to do about it.
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
  | (string & {});

export interface CairnErrorOptions {
  path?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Process exit code the CLI uses for this error (default 2 for usage/validation, 1 otherwise). */
  exitCode?: number;
}

const USAGE_LIKE = new Set([
  'ERR_CONTAINMENT',
  'ERR_UNSUPPORTED_OP',
  'ERR_INVALID_OPTION',
  'ERR_ROOT_NOT_FOUND',
  'ERR_ROOT_NOT_DIR',
  'ERR_ROOT_REQUIRED',
  'ERR_ROOT_NOT_ALLOWED',
  'ERR_INVALID_SNAPSHOT',
  'ERR_DIGEST_MISMATCH',
  'ERR_USAGE',
  'ERR_VALIDATION',
]);

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
    this.exitCode = options.exitCode ?? (code === 'ERR_LOCK_TIMEOUT' ? 3 : USAGE_LIKE.has(code) ? 2 : 1);
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
