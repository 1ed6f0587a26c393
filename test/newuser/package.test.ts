/**
 * Issue 23, item 11: what `npm pack` would publish is complete: a repository, the LICENSE the
 * `license` field names, and source maps whose sources travel with them (inlined).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { npmPackFiles, REPO_ROOT } from '../support/cli.js';

describe('the npm package', () => {
  const files = new Set(npmPackFiles());
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { license: string; repository?: { type: string; url: string } };

  it('names its repository and ships the MIT LICENSE its license field names', () => {
    expect(pkg.repository?.type).toBe('git');
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\//);
    expect(pkg.license).toBe('MIT');
    expect(files.has('LICENSE')).toBe(true);
    const license = fs.readFileSync(path.join(REPO_ROOT, 'LICENSE'), 'utf8');
    expect(license).toContain('MIT License');
    expect(license).toContain('Copyright (c) 2026 the cairn authors');
  });

  it('every published source map carries the sources it points to, or they are published too', () => {
    const maps = [...files].filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    const broken: string[] = [];
    for (const map of maps) {
      const doc = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, map), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      doc.sources.forEach((source, i) => {
        const published = files.has(path.posix.normalize(path.posix.join(path.posix.dirname(map), source)));
        const inlined = typeof doc.sourcesContent?.[i] === 'string';
        if (!published && !inlined) broken.push(`${map} → ${source}`);
      });
    }
    expect(broken).toEqual([]);
  });
});
