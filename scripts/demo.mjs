#!/usr/bin/env node
// The README's first command: cairn's main job on the embedded default (local store, no servers).
// For now: snapshot this very repository and print the summary.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(repo, 'dist', 'cli', 'main.js');
const out = join(mkdtempSync(join(tmpdir(), 'cairn-demo-')), 'snapshot.json');
const r = spawnSync(process.execPath, [cli, 'snapshot', '--root', repo, '-o', out], { stdio: 'inherit' });
process.exitCode = r.status ?? 1;
