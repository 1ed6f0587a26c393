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
