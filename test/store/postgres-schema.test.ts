/** The schema and table-prefix names are spliced into SQL, so only plain lower-case names may pass. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SessionError } from '../../src/store/contract/errors.js';
import { tableNames } from '../../src/store/backends/postgres/postgres-schema.js';

describe('PostgreSQL table names', () => {
  it('accepts a name only if it is a plain lower-case SQL identifier, whatever it is', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 50 }), fc.string({ maxLength: 40 }), (schema, tablePrefix) => {
        let names: ReturnType<typeof tableNames> | undefined;
        try {
          names = tableNames(schema, tablePrefix);
        } catch (e) {
          expect(e).toBeInstanceOf(SessionError);
          expect((e as SessionError).code).toBe('ERR_INVALID_OPTION');
          return;
        }
        expect(schema).toMatch(/^[a-z_][a-z0-9_]*$/);
        expect(tablePrefix).toMatch(/^([a-z_][a-z0-9_]*)?$/);
        for (const quoted of [names.latest, names.history, names.manifest, names.version]) expect(quoted).toMatch(/^"[a-z0-9_]+"\."[a-z0-9_]+"$/);
      }),
    );
  });

  it('gives each schema and prefix its own advisory-lock key', () => {
    const keys = new Set(['public', 'cairn', 'other'].flatMap((s) => ['', 'cairn_', 'a_'].map((p) => tableNames(s, p).lockKey)));
    expect(keys.size).toBe(9);
    expect(tableNames('cairn', 'cairn_').lockKey).toBe(tableNames('cairn', 'cairn_').lockKey);
  });
});
