import { exitCodeFor, type CairnErrorCode, type ErrorDocument } from '../../core/errors.js';

/**
 * Stable codes of store failures: CairnError's codes (core/errors.ts), whose one table gives
 * each its exit code: validation 2, a create-only clash 3, everything else (I/O, corrupt files) 1.
 */
export type SessionErrorCode = CairnErrorCode;

/** Storage failure, as upstream: name `SessionError`, the underlying error kept as `cause`. */
export class SessionError extends Error {
  override readonly name = 'SessionError';
  /** Stable machine-readable code (cairn addition; upstream has none). */
  readonly code: SessionErrorCode;

  constructor(message: string, options?: ErrorOptions & { code?: SessionErrorCode }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code ?? 'ERR_SESSION';
  }

  /**
   * Process exit code the CLI uses for this error: CairnError's table (exitCodeFor), except that
   * a store refusing a path inside itself (ERR_CONTAINMENT: a link planted in the store) is the
   * store's failure (1), not the caller's input (2) as it is for a root or a snapshot directory.
   */
  get exitCode(): number {
    return this.code === 'ERR_CONTAINMENT' ? 1 : exitCodeFor(this.code);
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
