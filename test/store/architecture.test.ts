// The store's rooms (src/store/README.md): the contract at the bottom, one room per backend that
// imports only the contract (never another backend, so one optional peer never loads another's),
// the conformance suite over the contract alone, and the surface (open, index) on top.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cycles, foreignImports, layerOf, readArea, roomsOf, SRC, upwardImports, type Layer } from '../support/layers.js';

const BACKENDS = ['file', 'memory', 's3', 'postgres'];
const BASE = 'backends/base.ts';
const LAYERS: Layer[] = [['contract/'], ['backends/'], ['conformance/'], ['defaults.ts', 'open.ts', 'index.ts']];

describe('src/store layout', () => {
  const graph = readArea('store');

  it('reads the real tree (so the checks below can fail)', () => {
    expect(graph.within.get('backends/s3/s3-storage.ts')).toContain('contract/rules.ts');
    expect(graph.within.get('backends/s3/s3-storage.ts')).toContain(BASE);
    expect(graph.within.get('index.ts')).toContain('backends/postgres/postgres-storage.ts');
    expect(upwardImports({ ...graph, within: new Map([['contract/rules.ts', ['backends/file/file-storage.ts']]]) }, LAYERS)).toHaveLength(1);
  });

  it('puts every module in a layer and opens every room with a README', () => {
    expect(graph.modules.filter((m) => layerOf(LAYERS, m) < 0)).toEqual([]);
    const rooms = roomsOf('store');
    expect(rooms).toEqual(expect.arrayContaining(['.', 'contract', 'backends', 'conformance', ...BACKENDS.map((b) => `backends/${b}`)]));
    for (const room of rooms) expect(fs.existsSync(path.join(SRC, 'store', room, 'README.md')), room).toBe(true);
    const backendRooms = fs.readdirSync(path.join(SRC, 'store', 'backends'), { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(backendRooms.map((e) => e.name).sort()).toEqual([...BACKENDS].sort());
  });

  it('imports only lower layers', () => {
    expect(upwardImports(graph, LAYERS)).toEqual([]);
  });

  it('keeps each backend to itself, the shared base and the contract', () => {
    const wrong: string[] = [];
    for (const [mod, deps] of graph.within) {
      if (!mod.startsWith('backends/')) continue;
      const own = mod === BASE ? 'contract/' : mod.split('/').slice(0, 2).join('/') + '/';
      for (const d of deps) if (!d.startsWith(own) && !d.startsWith('contract/') && !(d === BASE && mod !== BASE)) wrong.push(`${mod} -> ${d}`);
    }
    expect(wrong).toEqual([]);
  });

  it('has every backend extend the shared base, which alone calls the contract checks of the preamble', () => {
    for (const b of BACKENDS) {
      const text = fs.readFileSync(path.join(SRC, 'store', 'backends', b, `${b}-storage.ts`), 'utf8');
      expect(text, b).toMatch(/extends SnapshotStorageBase\b/);
      expect(text.match(/\b(checkSnapshotToSave|checkManifestToSave|checkSessionId|serialize|parseStoredSnapshot|parseStoredManifest|normalisePage|defaultManifest|planPrune)\(/g), b).toBeNull();
    }
  });

  it('keeps the conformance suite to the contract', () => {
    for (const [mod, deps] of graph.within) if (mod.startsWith('conformance/')) for (const d of deps) expect(d, mod).toMatch(/^(contract|conformance)\//);
  });

  it('depends on nothing of cairn but the primitives', () => {
    expect(foreignImports(graph, ['core'])).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });
});
