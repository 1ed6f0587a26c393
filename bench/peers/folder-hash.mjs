#!/usr/bin/env node
// Peer: folder-hash (the most downloaded npm directory hasher), sha256, skipping .git and node_modules.
//   node bench/peers/folder-hash.mjs <root>
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { WORK_DIR } from '../lib.mjs';

const require = createRequire(join(WORK_DIR, 'peers', 'package.json'));
const { hashElement } = require('folder-hash');
const root = process.argv[2];
const tree = await hashElement(root, {
  algo: 'sha256',
  folders: { exclude: ['.git', 'node_modules'] },
  // Without this it crashes with ENOENT on a dangling symlink (perf.md §4).
  symbolicLinks: { ignoreTargetContentAfterError: true },
});
process.stdout.write(`${tree.hash}\n`);
