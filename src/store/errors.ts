import type { ErrorDocument } from '../core/errors.js';

/**
 * Stable codes of store failures. Validation codes map to CLI exit 2, a create-only clash to 3,
 * everything else (I/O, corrupt files) to 1.
 */
export type SessionErrorCode =
  | 'ERR_SESSION'
  | 'ERR_INVALID_IDENTIFIER'
  | 'ERR_INVALID_SCOPE'
  | 'ERR_INVALID_SNAPSHOT_ID'
  | 'ERR_INVALID_SNAPSHOT'
  | 'ERR_INVALID_MANIFEST'
  | 'ERR_INVALID_OPTION'
  | 'ERR_SNAPSHOT_EXISTS'
  | 'ERR_INVALID_JSON'
  | 'ERR_CORRUPT'
  | 'ERR_CONTAINMENT'
  | 'ERR_IO'
  | 'ERR_UNSUPPORTED_BACKEND'
  | (string & {});

const VALIDATION_CODES = new Set<string>([
  'ERR_INVALID_IDENTIFIER',
  'ERR_INVALID_SCOPE',
  'ERR_INVALID_SNAPSHOT_ID',
  'ERR_INVALID_SNAPSHOT',
  'ERR_INVALID_MANIFEST',
  'ERR_INVALID_OPTION',
  'ERR_UNSUPPORTED_BACKEND',
]);

/** Storage failure, as upstream: name `SessionError`, the underlying error kept as `cause`. */
export class SessionError extends Error {
  override readonly name = 'SessionError';
  /** Stable machine-readable code (cairn addition; upstream has none). */
  readonly code: SessionErrorCode;

  constructor(message: string, options?: ErrorOptions & { code?: SessionErrorCode }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code ?? 'ERR_SESSION';
  }

  /** Process exit code the CLI uses for this error (0/1/2/3 convention of cairn). */
  get exitCode(): number {
    if (VALIDATION_CODES.has(this.code)) return 2;
    if (this.code === 'ERR_SNAPSHOT_EXISTS') return 3;
    return 1;
  }

  /** The error document the CLI and the MCP server print; the cause's message when the message does not already say it. */
  toJSON(): ErrorDocument {
    const cause = this.cause instanceof Error && !this.message.includes(this.cause.message) ? this.cause.message : undefined;
    return cause === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, details: { cause } };
  }
}

export function isSessionError(e: unknown): e is SessionError {
  return e instanceof SessionError;
}

/** Errno codes that mean the server never answered (refused, reset, unreachable, DNS): the backend is unavailable. */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
