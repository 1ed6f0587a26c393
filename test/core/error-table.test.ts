// CairnError and the store's SessionError (kept a class of its own for the seed's contract) share
// one table of codes and exit codes: a code means the same exit whichever class carries it.
import { describe, expect, it } from 'vitest';
import { CairnError, exitCodeFor } from '../../src/core/errors.js';
import { SessionError } from '../../src/store/contract/errors.js';

describe('one code and exit-code table for CairnError and SessionError', () => {
  it('gives a store validation code exit 2, a create-only clash 3, a failure 1, in either class', () => {
    for (const [code, exit] of [['ERR_INVALID_SCOPE', 2], ['ERR_INVALID_IDENTIFIER', 2], ['ERR_INVALID_OPTION', 2], ['ERR_UNSUPPORTED_BACKEND', 2], ['ERR_SNAPSHOT_EXISTS', 3], ['ERR_IO', 1], ['ERR_CORRUPT', 1], ['ERR_INVALID_JSON', 1], ['ERR_SESSION', 1]] as const) {
      expect([code, new SessionError('m', { code }).exitCode]).toEqual([code, exit]);
      expect([code, new CairnError(code, 'm').exitCode]).toEqual([code, exit]);
      expect(exitCodeFor(code)).toBe(exit);
    }
  });

  it('gives cairn usage codes 2 and a lock timeout 3, and any unknown code 1', () => {
    expect(new CairnError('ERR_USAGE', 'm').exitCode).toBe(2);
    expect(new CairnError('ERR_ROOT_NOT_FOUND', 'm').exitCode).toBe(2);
    expect(new CairnError('ERR_LOCK_TIMEOUT', 'm').exitCode).toBe(3);
    expect(new CairnError('ERR_SOMETHING_NEW', 'm').exitCode).toBe(1);
    expect(exitCodeFor('toString')).toBe(1); // not an inherited property
  });

  it("keeps the store's containment refusal a failure (1), a root's a usage error (2)", () => {
    expect(new SessionError('m', { code: 'ERR_CONTAINMENT' }).exitCode).toBe(1);
    expect(new CairnError('ERR_CONTAINMENT', 'm').exitCode).toBe(2);
  });

  it('prints the same error document shape from both', () => {
    expect(new SessionError('bad scope', { code: 'ERR_INVALID_SCOPE' }).toJSON()).toEqual({ code: 'ERR_INVALID_SCOPE', message: 'bad scope' });
    expect(new CairnError('ERR_INVALID_SCOPE', 'bad scope').toJSON()).toEqual({ code: 'ERR_INVALID_SCOPE', message: 'bad scope' });
  });
});
