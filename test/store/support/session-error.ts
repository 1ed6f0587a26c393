import { expect } from 'vitest';
import { SessionError } from '../../../src/store/index.js';

/** Awaits `promise`, which must reject with a SessionError (with `code` and a message matching `message`, when given). */
export async function expectSessionError(promise: Promise<unknown>, code?: string, message?: RegExp): Promise<SessionError> {
  const e = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SessionError);
  const error = e as SessionError;
  if (code !== undefined) expect(error.code).toBe(code);
  if (message) expect(error.message).toMatch(message);
  return error;
}
