// `cairn` turns on V8's compile cache where the Node line has it (22.1+), in the user's cache
// directory and never in the tree it runs in; on Node 20 it runs the same without one. CI runs
// this file on every line, so both branches are taken.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI } from '../support/cli.js';

const lineHasIt = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
let home: string;
let tree: string;

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cc-home-'));
  tree = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cc-tree-'));
  fs.writeFileSync(path.join(tree, 'a.txt'), 'a\n');
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(tree, { recursive: true, force: true });
});

function cairn(args: string[], env: Record<string, string>): { status: number | null; stdout: string } {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_COMPILE_CACHE') && k !== 'NODE_DISABLE_COMPILE_CACHE'));
  return spawnSync(process.execPath, [CLI, ...args], { cwd: tree, encoding: 'utf8', env: { ...clean, CI: '1', XDG_CACHE_HOME: home, HOME: home, ...env } });
}

describe('the compile cache', () => {
  it(`is ${lineHasIt ? 'written under $XDG_CACHE_HOME/cairn/compile' : 'absent on this line, and cairn runs the same'}, never in the working tree (Node ${process.version})`, () => {
    const first = cairn(['snapshot', '--root', '.', '--no-cache'], {});
    expect(first.status).toBe(0);
    const compileDir = path.join(home, 'cairn', 'compile');
    expect(fs.existsSync(compileDir)).toBe(lineHasIt);
    if (lineHasIt) expect(fs.readdirSync(compileDir).length).toBeGreaterThan(0);
    expect(fs.readdirSync(tree)).toEqual(['a.txt']);
    // A second run reads the cache and prints the same snapshot.
    const second = cairn(['snapshot', '--root', '.', '--no-cache'], {});
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(first.stdout);
  });

  it('stays off with NODE_DISABLE_COMPILE_CACHE=1, and goes where NODE_COMPILE_CACHE says', () => {
    expect(cairn(['--version'], { NODE_DISABLE_COMPILE_CACHE: '1' }).status).toBe(0);
    expect(fs.existsSync(path.join(home, 'cairn', 'compile'))).toBe(false);
    const elsewhere = path.join(home, 'elsewhere');
    expect(cairn(['--version'], { NODE_COMPILE_CACHE: elsewhere }).status).toBe(0);
    expect(fs.existsSync(elsewhere)).toBe(lineHasIt);
    expect(fs.existsSync(path.join(home, 'cairn', 'compile'))).toBe(false);
  });
});
