// The package's surface changes only on purpose: every entry point's exports, as the compiler
// sees them, must equal the checked-in report (api/cairn.api.md). After an intended change, run
// `node scripts/api-report.mjs --write` and commit the report with it.
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ESM script without type declarations
import { apiReport, REPORT_FILE } from '../scripts/api-report.mjs';

describe('public API report', () => {
  it('matches api/cairn.api.md (regenerate with `node scripts/api-report.mjs --write` when the change is intended)', () => {
    const now = (apiReport as () => string)();
    expect(now).toContain('## `cairn` ('); // the report read the real entry points
    expect(now, 'the public surface changed: if on purpose, run `node scripts/api-report.mjs --write`').toBe(fs.readFileSync(REPORT_FILE as string, 'utf8'));
  });

  it('keeps internals off every entry point', () => {
    const report = fs.readFileSync(REPORT_FILE as string, 'utf8');
    for (const internal of ['tempSiblingName', 'TEMP_MARKER', 'isTempName', 'LOCK_OWNER_FILE', 'selfTestStageSnapshot', 'errnoCode']) {
      expect(report, internal).not.toContain(`\`${internal}\``);
    }
  });
});
