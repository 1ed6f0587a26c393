/** Storage failure, as upstream: name `SessionError`, the underlying error kept as `cause`. */
export class SessionError extends Error {
  override readonly name = 'SessionError';
  /** Stable machine-readable code (cairn addition; upstream has none). */
  readonly code: string;

  constructor(message: string, options?: ErrorOptions & { code?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code ?? 'ERR_SESSION';
  }
}
