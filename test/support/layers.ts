// The import graph of one area of src/ (or of all of it), read from the source text, for the
// layout tests (test/architecture.test.ts, test/store/architecture.test.ts,
// test/session/architecture.test.ts): each module of the area belongs to a layer, a layer imports
// only itself and the layers before it, no module reaches itself again through its imports, and
// no top-level area of src/ reaches itself again through the others.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const SRC = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'src');

/** A layer: room folders (`'backends/s3/'`) and top-level files (`'types.ts'`) of the area. */
export type Layer = readonly string[];

export interface AreaGraph {
  /** The area's modules, relative to the area, POSIX separators. */
  modules: string[];
  /** Module → the modules of the area it imports (type imports and re-exports included). */
  within: Map<string, string[]>;
  /** Module → the modules outside the area it imports, relative to src/. */
  outside: Map<string, string[]>;
}

const posix = (p: string): string => p.split(path.sep).join('/');

function listModules(dir: string, base: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...listModules(p, base));
    else if (e.name.endsWith('.ts')) out.push(posix(path.relative(base, p)));
  }
  return out.sort();
}

/** Reads the area's modules and what each imports (static, dynamic and `import type`). */
export function readArea(area: string): AreaGraph {
  const root = path.join(SRC, area);
  const modules = listModules(root, root);
  const within = new Map<string, string[]>();
  const outside = new Map<string, string[]>();
  for (const mod of modules) {
    const text = fs.readFileSync(path.join(root, mod), 'utf8');
    const inside = new Set<string>();
    const beyond = new Set<string>();
    for (const m of text.matchAll(/^(?:import|export)\s[^'";]*?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm)) {
      const spec = (m[1] ?? m[2])!;
      const target = path.resolve(path.dirname(path.join(root, mod)), spec.replace(/\.js$/, '.ts'));
      const rel = posix(path.relative(root, target));
      if (rel.startsWith('..')) beyond.add(posix(path.relative(SRC, target)));
      else inside.add(rel);
    }
    within.set(mod, [...inside]);
    outside.set(mod, [...beyond]);
  }
  return { modules, within, outside };
}

/** The index of the layer a module belongs to, or -1. */
export function layerOf(layers: readonly Layer[], mod: string): number {
  return layers.findIndex((layer) => layer.some((part) => (part.endsWith('/') ? mod.startsWith(part) : mod === part)));
}

/** `a -> b` for every import that goes to a later layer or leaves the layers. */
export function upwardImports(graph: AreaGraph, layers: readonly Layer[]): string[] {
  const wrong: string[] = [];
  for (const [mod, deps] of graph.within) {
    const own = layerOf(layers, mod);
    for (const dep of deps) if (layerOf(layers, dep) > own || layerOf(layers, dep) < 0) wrong.push(`${mod} -> ${dep}`);
  }
  return wrong;
}

/** Every import cycle among the area's modules, as `a -> b -> a`. */
export function cycles(graph: AreaGraph): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const found: string[] = [];
  const visit = (mod: string, trail: string[]): void => {
    if (state.get(mod) === 'done') return;
    if (state.get(mod) === 'open') {
      found.push([...trail.slice(trail.indexOf(mod)), mod].join(' -> '));
      return;
    }
    state.set(mod, 'open');
    for (const dep of graph.within.get(mod) ?? []) visit(dep, [...trail, mod]);
    state.set(mod, 'done');
  };
  for (const mod of graph.modules) visit(mod, []);
  return found;
}

/** `a -> b` for every import of a module outside the area whose top folder is not allowed. */
export function foreignImports(graph: AreaGraph, allowed: readonly string[]): string[] {
  const wrong: string[] = [];
  for (const [mod, deps] of graph.outside) for (const dep of deps) if (!allowed.includes(dep.split('/')[0]!)) wrong.push(`${mod} -> ${dep}`);
  return wrong;
}

/** The area's rooms: `'.'` and every folder under it (`'backends/s3'`), sorted. */
export function roomsOf(area: string): string[] {
  const root = path.join(SRC, area);
  const out = ['.'];
  const visit = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      out.push(posix(path.relative(root, path.join(dir, e.name))));
      visit(path.join(dir, e.name));
    }
  };
  visit(root);
  return out.sort();
}

/**
 * The graph of src/'s top-level areas (`core`, `session`, ...; a file at the top, such as
 * `index.ts`, is an area of its own), read from a graph of all of src/ (`readArea('.')`): an
 * area imports another when one of its modules imports one of the other's. The same shape as an
 * area's graph, so `cycles` works on it.
 */
export function areasOf(all: AreaGraph): AreaGraph {
  const top = (mod: string): string => mod.split('/')[0]!;
  const within = new Map<string, string[]>();
  for (const [mod, deps] of all.within) {
    const from = top(mod);
    const to = new Set(within.get(from) ?? []);
    for (const dep of deps) if (top(dep) !== from) to.add(top(dep));
    within.set(from, [...to].sort());
  }
  return { modules: [...within.keys()].sort(), within, outside: new Map() };
}
