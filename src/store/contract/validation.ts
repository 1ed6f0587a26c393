import { SCOPES, type Scope } from './types.js';

const IDENTIFIER = /^[a-z0-9_-]+$/;
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Upstream's identifier rule and message; returns the id. Throws a plain `Error` as upstream does. */
export function validateIdentifier(id: string): string {
  if (typeof id !== 'string' || !IDENTIFIER.test(id)) {
    throw new Error(`Identifier '${String(id)}' can only contain lowercase letters, numbers, hyphens, and underscores`);
  }
  return id;
}

/** Upstream's UUID v7 rule (case-insensitive) and message; returns the id. */
export function validateUuidV7(id: string): string {
  if (typeof id !== 'string' || !UUID_V7.test(id)) {
    throw new Error(`'${String(id)}' is not a valid UUID v7 snapshot ID`);
  }
  return id;
}

export function isUuidV7(id: string): boolean {
  return UUID_V7.test(id);
}

export function isIdentifier(id: unknown): id is string {
  return typeof id === 'string' && IDENTIFIER.test(id);
}

export function isScope(scope: unknown): scope is Scope {
  return typeof scope === 'string' && (SCOPES as readonly string[]).includes(scope);
}

/**
 * Scope allow-list (upstream types it only; harness-sdk #2993 adds the same check, since
 * `multiAgent` cannot pass the identifier rule). Throws a plain `Error` like the validators above.
 */
export function validateScope(scope: string): Scope {
  if (!isScope(scope)) {
    throw new Error(`Scope '${String(scope)}' is not valid; use one of: ${SCOPES.join(', ')}`);
  }
  return scope;
}
