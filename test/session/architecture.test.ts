// The session's rooms (src/session/README.md): test-result parsing at the bottom, then the
// vocabulary (the seed's types, key files, durations), the inventory store, the capture, the
// records the CLI keeps; `index.ts` on top. A room imports only the layers before it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cycles, foreignImports, layerOf, readArea, roomsOf, SRC, upwardImports, type Layer } from '../support/layers.js';

const ROOMS = ['test-results', 'inventory-store', 'capture', 'records'];
const LAYERS: Layer[] = [['test-results/'], ['types.ts', 'files.ts', 'duration.ts'], ['inventory-store/'], ['capture/'], ['records/'], ['index.ts']];

describe('src/session layout', () => {
  const graph = readArea('session');

  it('reads the real tree (so the checks below can fail)', () => {
    expect(graph.within.get('capture/snapshot-manager.ts')).toContain('inventory-store/inventory-store.ts');
    expect(graph.outside.get('records/record.ts')).toContain('store/contract/types.ts');
    expect(upwardImports({ ...graph, within: new Map([['types.ts', ['capture/git.ts']]]) }, LAYERS)).toHaveLength(1);
  });

  it('puts every module in a layer and opens every room with a README', () => {
    expect(graph.modules.filter((m) => layerOf(LAYERS, m) < 0)).toEqual([]);
    const rooms = roomsOf('session');
    expect(rooms).toEqual(['.', ...ROOMS].sort());
    for (const room of rooms) expect(fs.existsSync(path.join(SRC, 'session', room, 'README.md')), room).toBe(true);
  });

  it('imports only lower layers', () => {
    expect(upwardImports(graph, LAYERS)).toEqual([]);
  });

  it('leaves parsing test output free of snapshots and of cairn beyond the primitives', () => {
    for (const [mod, deps] of graph.within) if (mod.startsWith('test-results/')) for (const d of deps) expect(d, mod).toMatch(/^test-results\//);
    const foreign = foreignImports({ ...graph, outside: new Map([...graph.outside].filter(([m]) => m.startsWith('test-results/'))) }, ['core']);
    expect(foreign).toEqual([]);
  });

  it('depends only on the primitives, the engine, content and the store', () => {
    expect(foreignImports(graph, ['core', 'inventory', 'content', 'store'])).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });
});
