/**
 * Issue 23, item 9: every `ts example` block of the README runs, as written, against the built
 * package (`from 'cairn'` resolved to dist/index.js), and there is one per part.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { cleanupTempDirs, tempDir } from '../inventory/helpers.js';

afterAll(cleanupTempDirs);

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const examples = [...readme.matchAll(/^```ts example\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
const entry = pathToFileURL(path.join(REPO_ROOT, 'dist', 'index.js')).href;

describe('the README', () => {
  it('has a glossary and a runnable example for repo snapshots, SnapshotManager, the store and stage notes', () => {
    expect(readme).toMatch(/^## Glossary$/m);
    const all = examples.join('\n');
    for (const name of ['snapshotRoot', 'SnapshotManager', 'FileStorage', 'openStore', 'writeStageSnapshot']) expect(all).toContain(name);
  });

  it.each(examples.map((code, i) => [i + 1, code] as const))('example %i runs against the built package', (_n, code) => {
    const dir = tempDir('cairn-readme-');
    const file = path.join(dir, 'example.mjs');
    fs.writeFileSync(file, code.replaceAll("from 'cairn'", `from ${JSON.stringify(entry)}`));
    const env = { ...process.env, XDG_CACHE_HOME: path.join(dir, 'xdg'), GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
    const out = execFileSync(process.execPath, [file], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
    expect(out.length).toBeGreaterThan(0);
  });
});
