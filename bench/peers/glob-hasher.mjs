#!/usr/bin/env node
// Peer: glob-hasher (Rust napi, microsoft/lage): gitignore-aware walk + git SHA-1 of every file.
//   node bench/peers/glob-hasher.mjs <root>     (installed into bench/.work/peers by inventory.mjs)
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { WORK_DIR } from '../lib.mjs';

const require = createRequire(join(WORK_DIR, 'peers', 'package.json'));
const { hashGlobGit } = require('glob-hasher');
const root = process.argv[2];
// Its `gitignore: true` did not skip node_modules/ on our tree (measured), so exclude it by glob.
const hashes = hashGlobGit(['**', '!**/node_modules/**'], { cwd: root, gitignore: true });
process.stdout.write(`${Object.keys(hashes ?? {}).length}\n`);
