// `cairn` turns on V8's compile cache where the Node line has it (22.1+), in the user's cache
// directory and never in the tree it runs in; on Node 20 its fast lanes keep a code cache of their
// own there (src/core/compile-cache.ts, requireLane). CI runs this file on every line, so both
// branches are taken.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, copyBuild } from '../support/cli.js';

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

function cairn(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_COMPILE_CACHE') && k !== 'NODE_DISABLE_COMPILE_CACHE'));
  return spawnSync(process.execPath, [CLI, ...args], { cwd: tree, encoding: 'utf8', env: { ...clean, CI: '1', XDG_CACHE_HOME: home, HOME: home, ...env } });
}

describe('the compile cache', () => {
  it(`is written under $XDG_CACHE_HOME/cairn/compile${lineHasIt ? '' : ' by the lanes themselves'}, never in the working tree (Node ${process.version})`, () => {
    const first = cairn(['snapshot', '--root', '.', '--no-cache'], {});
    expect(first.status).toBe(0);
    const compileDir = path.join(home, 'cairn', 'compile');
    expect(fs.readdirSync(compileDir).length).toBeGreaterThan(0);
    // Node's own cache where the line has it, else one entry of the lanes' cache, for the snapshot lane.
    expect(fs.readdirSync(compileDir).filter((n) => n.endsWith('.v8')).map((n) => n.split('-')[0])).toEqual(lineHasIt ? [] : ['snapshot']);
    expect(fs.readdirSync(tree)).toEqual(['a.txt']);
    // A second run reads the cache and prints the same snapshot.
    const second = cairn(['snapshot', '--root', '.', '--no-cache'], {});
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(first.stdout);
  });

  it('stays off with NODE_DISABLE_COMPILE_CACHE=1, and goes where NODE_COMPILE_CACHE says', () => {
    expect(cairn(['snapshot', '--root', '.', '--no-cache'], { NODE_DISABLE_COMPILE_CACHE: '1' }).status).toBe(0);
    expect(fs.existsSync(path.join(home, 'cairn', 'compile'))).toBe(false);
    const elsewhere = path.join(home, 'elsewhere');
    expect(cairn(['snapshot', '--root', '.', '--no-cache'], { NODE_COMPILE_CACHE: elsewhere }).status).toBe(0);
    expect(fs.readdirSync(elsewhere).length).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(home, 'cairn', 'compile'))).toBe(false);
  });
});

describe('the fast lanes', () => {
  // Their optional backends are loaded on use: through the lanes' code cache (Node 20) as through
  // Node's own loader. An unreachable server proves the driver loaded: the error is the server's,
  // never ERR_MISSING_DEPENDENCY. Twice each, so that the second run's lane comes from the cache.
  it('load the S3 SDK and the PostgreSQL driver when a record goes to such a store (no server needed)', () => {
    execFileSync('git', ['init', '-q'], { cwd: tree });
    const stores: { url: string; env: Record<string, string> }[] = [
      { url: 's3://bucket/p?endpoint=http%3A%2F%2F127.0.0.1%3A9&region=us-east-1&forcePathStyle=1', env: { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' } },
      { url: 'postgres://u@127.0.0.1:9/db', env: { PGPASSWORD: 'p' } },
    ];
    for (const round of [1, 2]) {
      for (const store of stores) {
        expect(cairn(['session', 'pre'], {}).status).toBe(0);
        fs.appendFileSync(path.join(tree, 'a.txt'), `${round}\n`);
        const post = cairn(['session', 'post', '--store', store.url], store.env);
        expect(post.status, post.stderr).toBe(1);
        expect(JSON.parse(post.stderr.trim().split('\n').at(-1)!)).toMatchObject({ code: 'ERR_BACKEND_UNAVAILABLE' });
        expect(post.stderr).toContain('127.0.0.1:9');
      }
    }
  });
});

// The lanes' own code cache, proven where it is used (Node 20; on a line with Node's cache it is never taken).
describe.runIf(!lineHasIt)('the lanes\' code cache (Node 20)', () => {
  const entries = (): string[] => fs.readdirSync(path.join(home, 'cairn', 'compile')).filter((n) => n.endsWith('.v8'));

  it('is read, not written again, by a run that finds it; a damaged entry is rejected, the run is right, and the entry made again', () => {
    const first = cairn(['session', 'pre', '--json'], {});
    expect(first.status, first.stdout).toBe(0);
    const [entry] = entries();
    expect(entry).toMatch(/^session-lane\.js-[0-9a-f]{16}-[0-9a-f]{16}\.v8$/);
    const file = path.join(home, 'cairn', 'compile', entry!);
    const made = fs.statSync(file).ino;
    expect(cairn(['session', 'post', '--json'], {}).status).toBe(0);
    expect(fs.statSync(file).ino).toBe(made); // accepted by V8: left as it was
    // Bytes V8 cannot take (another build's, a torn copy): the lane compiles from its text.
    fs.writeFileSync(file, Buffer.alloc(4096, 7));
    const again = cairn(['session', 'pre', '--json'], {});
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout)).toHaveProperty('iterationDir', path.join(fs.realpathSync(tree), '.cairn', 'iterations', '002'));
    expect(entries()).toEqual([entry]);
    expect(fs.readFileSync(file).equals(Buffer.alloc(4096, 7))).toBe(false);
  });

  it('costs nothing but its gain where it cannot be written: the run and its exit are as without it', () => {
    const without = cairn(['snapshot', '--root', '.', '--no-cache'], { NODE_DISABLE_COMPILE_CACHE: '1' });
    // A file where the cache directory should be: nothing can be made below it.
    const blocked = path.join(home, 'not-a-dir');
    fs.writeFileSync(blocked, 'x');
    const run = cairn(['snapshot', '--root', '.', '--no-cache'], { NODE_COMPILE_CACHE: blocked });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(without.stdout);
    expect(fs.readFileSync(blocked, 'utf8')).toBe('x');
    expect(fs.readdirSync(home).sort()).toEqual(['not-a-dir']);
  });

  it('keeps one entry a lane: a changed lane replaces its entry, it does not add one', () => {
    // A copy of the bundle whose snapshot lane differs by a comment (same path, new text).
    const { bin, remove } = copyBuild('cairn-cc-');
    try {
      const run = (): number | null => spawnSync(process.execPath, [path.join(bin, 'cairn.js'), 'snapshot', '--root', '.', '--no-cache'], { cwd: tree, encoding: 'utf8', env: { ...process.env, CI: '1', XDG_CACHE_HOME: home, HOME: home } }).status;
      expect(run()).toBe(0);
      const before = entries();
      expect(before).toHaveLength(1);
      fs.appendFileSync(path.join(bin, 'snapshot-lane.js'), '\n// another build\n');
      expect(run()).toBe(0);
      const after = entries();
      expect(after).toHaveLength(1);
      expect(after).not.toEqual(before);
      expect(after[0]!.split('-').slice(0, 2)).toEqual(before[0]!.split('-').slice(0, 2)); // same lane, same path
    } finally {
      remove();
    }
  });
});
