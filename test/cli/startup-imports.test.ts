// `cairn` starts fast because each command loads its library only when it runs: the modules a
// bare start-up imports (static, non-type imports from src/cli/main.ts) never reach the scanner,
// the session library or the store backends.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT } from '../support/cli.js';

const SRC = path.join(REPO_ROOT, 'src');

/** Every src module reachable from `entry` through static value imports, side-effect imports included (`import type` and `import(...)` do not count). */
function startupGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export)\s+(?!type\s)(?:[^'"]*?from\s+)?['"](\.[^'"]+)['"]/gms)) {
      const spec = m[1]!;
      visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
    }
  };
  visit(entry);
  return new Set([...seen].map((f) => path.relative(SRC, f)));
}

describe('CLI start-up', () => {
  it('imports no scanner, session library or store backend before a command runs', () => {
    const graph = startupGraph(path.join(SRC, 'cli', 'main.ts'));
    expect(graph.has(path.join('cli', 'commands', 'store.ts'))).toBe(true); // the walk does follow imports
    const HEAVY = [
      /^(inventory|mcp)\//, // the scanner and the MCP server
      /^session\/(?!records\/record\.ts$)/, // the session library (its record types are light)
      /^store\/backends\//, // the store backends
      /^store\/(index|open|conformance\/)/, // and what loads every one of them
    ];
    const heavy = [...graph].filter((f) => HEAVY.some((re) => re.test(f)));
    expect(heavy).toEqual([]);
  });

  it('has the executable, the daemon lane and the fast lanes CommonJS, every other module of the bundle an ES module (.mjs)', () => {
    const bin = path.dirname(CLI);
    expect(JSON.parse(fs.readFileSync(path.join(bin, 'package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
    const js = fs.readdirSync(bin, { recursive: true }).map(String).filter((f) => f.endsWith('.js'));
    expect(js.sort()).toEqual(['cairn.js', 'daemon-lane.js', 'hook-lane.js', 'session-lane.js', 'snapshot-lane.js']);
    // The two lanes load builtins only, and none by import(): that would start the ES module loader.
    for (const [name, fn] of [['daemon-lane.js', 'function sessionThroughDaemon('], ['snapshot-lane.js', 'function runSnapshotLane(']] as const) {
      const lane = fs.readFileSync(path.join(bin, name), 'utf8');
      // (The scanner's worker boot text for the TypeScript sources, a template string, is no import.)
      expect(lane, name).not.toMatch(/(?<!`)\bimport\(/);
      expect([...lane.matchAll(/\brequire\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]).filter((spec) => !spec!.startsWith('node:')), name).toEqual([]);
      expect(lane, name).toContain(fn); // the checks read the real lane
    }
  });

  it('keeps that laziness in the bundle `cairn` runs: its entry and the chunks it imports statically hold no scanner or backend', () => {
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^(?:import|export)\s+(?:[^'"]*?from\s+)?['"](\.[^'"]+)['"]/gm)) visit(path.resolve(path.dirname(file), m[1]!));
    };
    // The entry (CommonJS) turns on the compile cache, then imports main.mjs: start-up is both and their chunks.
    const entry = fs.readFileSync(CLI, 'utf8');
    expect(entry).toContain('esLane("main.mjs")');
    // The entry is one module of its own: a lane's run (the daemon's client first) loads no chunk (~0.5 ms a module on Node 20).
    expect([...entry.matchAll(/^(?:import|export)\s+(?:[^'"]*?from\s+)?['"](\.[^'"]+)['"]/gm)]).toEqual([]);
    expect([...entry.matchAll(/\brequire\(\s*['"](\.[^'"]+)['"]/g)]).toEqual([]);
    visit(CLI);
    visit(path.join(path.dirname(CLI), 'main.mjs'));
    expect(seen.size).toBeGreaterThan(2); // main.mjs does import shared chunks
    const read = (files: Iterable<string>): string => [...files].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    const startup = read(seen);
    const chunks = path.join(path.dirname(CLI), 'chunks');
    const everything = read(fs.readdirSync(chunks).map((n) => path.join(chunks, n)));
    expect(startup).toContain('function main('); // the walk read the real bundle
    // Each is in the bundle (so the check can fail), only never where start-up reaches.
    for (const heavy of ['function scanTree(', 'function snapshotRootDetailed(', 'PostgresStorage = class', 'S3Storage = class', 'FileStorage = class', 'SnapshotManager = class']) {
      expect(everything, heavy).toContain(heavy);
      expect(startup, heavy).not.toContain(heavy);
    }
    // Node's own heavy modules too: node:crypto loads ~17 internal modules, node:child_process
    // brings net, streams and dgram (~25); `cairn --help` needs neither. commander's require of
    // child_process (for executable subcommands) goes through a stand-in that loads it on use.
    for (const builtin of ['from "node:crypto"', 'from "node:child_process"']) {
      expect(everything, builtin).toContain(builtin);
      expect(startup, builtin).not.toContain(builtin);
    }
    expect(startup).toContain('"node_modules/commander/lib/command.js"'); // commander is in the start-up code
    expect(startup).not.toContain('childProcess = __require("node:child_process")');
    expect(startup).toContain('get spawn() {');
  });
});

