// The inventory engine's rooms (src/inventory/README.md): each imports only the rooms before it
// in the pipeline's order and the document vocabulary at the top, never the surface above it,
// and no module reaches itself again through its imports.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const INVENTORY = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'src', 'inventory');

/** The rooms in the order they may import one another (a room imports only rooms before it). */
const ROOMS = ['rules', 'io', 'cache', 'walk', 'memo', 'fastpath'];
/** Top-level modules every room may import: the words the engine speaks. */
const VOCABULARY = new Set(['types.ts', 'digest.ts', 'entry-mode.ts']);

function modules(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...modules(p));
    else if (e.name.endsWith('.ts')) out.push(path.relative(INVENTORY, p));
  }
  return out.sort();
}

/** Every inventory module a module imports (type imports and re-exports included: they are dependencies for a reader too). */
function importsOf(mod: string): string[] {
  const text = fs.readFileSync(path.join(INVENTORY, mod), 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/^(?:import|export)\s[^'";]*?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm)) {
    const spec = (m[1] ?? m[2])!;
    const target = path.relative(INVENTORY, path.resolve(path.dirname(path.join(INVENTORY, mod)), spec.replace(/\.js$/, '.ts')));
    if (!target.startsWith('..')) out.add(target);
  }
  return [...out];
}

const roomOf = (mod: string): string | null => (mod.includes(path.sep) ? mod.split(path.sep)[0]! : null);

describe('src/inventory layout', () => {
  const all = modules(INVENTORY);
  const graph = new Map(all.map((m) => [m, importsOf(m)]));

  it('reads the real tree (so the checks below can fail)', () => {
    expect(all).toContain(path.join('fastpath', 'stored-result.ts'));
    expect(graph.get(path.join('fastpath', 'stored-result.ts'))).toContain(path.join('io', 'verifier.ts'));
  });

  it('puts every module in a known room or at the top, and opens every room with a README', () => {
    for (const m of all) {
      const room = roomOf(m);
      if (room !== null) expect(ROOMS, m).toContain(room);
    }
    for (const room of ROOMS) expect(fs.existsSync(path.join(INVENTORY, room, 'README.md')), room).toBe(true);
  });

  it('imports only earlier rooms and the vocabulary from a room', () => {
    const wrong: string[] = [];
    for (const [m, deps] of graph) {
      const room = roomOf(m);
      if (room === null) continue;
      for (const d of deps) {
        const target = roomOf(d);
        const ok = target === null ? VOCABULARY.has(d) : ROOMS.indexOf(target) <= ROOMS.indexOf(room);
        if (!ok) wrong.push(`${m} -> ${d}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('keeps the vocabulary free of the engine', () => {
    for (const v of VOCABULARY) for (const d of graph.get(v) ?? []) expect(VOCABULARY.has(d), `${v} -> ${d}`).toBe(true);
  });

  it('has no import cycle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (m: string, trail: string[]): void => {
      if (state.get(m) === 'done') return;
      if (state.get(m) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(m)), m].join(' -> '));
        return;
      }
      state.set(m, 'open');
      for (const d of graph.get(m) ?? []) visit(d, [...trail, m]);
      state.set(m, 'done');
    };
    for (const m of all) visit(m, []);
    expect(cycles).toEqual([]);
  });
});

describe('the on-disk artefacts', () => {
  it('are named and versioned in cache/artefacts.ts alone', () => {
    const owner = path.join('cache', 'artefacts.ts');
    const text = fs.readFileSync(path.join(INVENTORY, owner), 'utf8');
    expect(text).toContain("'cairn-render "); // the check below looks for what is really there
    const naming = /'cairn-(?:render|canonical) \d+'|\\\.(?:cache|render|canonical|out|patch)\$\/|`\$\{[a-zA-Z]+\}\.(?:patch|cache)`|(?:CACHE_FORMAT|SCAN_ENGINE_VERSION) = \d/;
    for (const m of modules(INVENTORY)) {
      if (m === owner) continue;
      expect(naming.exec(fs.readFileSync(path.join(INVENTORY, m), 'utf8'))?.[0], m).toBeUndefined();
    }
    expect(naming.test(text)).toBe(true);
  });
});
