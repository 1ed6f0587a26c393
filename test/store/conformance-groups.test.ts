// The conformance suite in groups, one per method of the contract: `only` and `skip` choose which
// run, and a group that is named but cannot run is refused rather than skipped in silence.
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/store/index.js';
import { CONFORMANCE_GROUPS, runSnapshotStorageConformance, type ConformanceGroup, type ConformanceOptions } from '../../src/store/conformance/index.js';

/** What a run registers, as `group > case` names, on a recording test API. */
function registered(options: Omit<ConformanceOptions, 'name' | 'create' | 'test'>): string[] {
  const names: string[] = [];
  const trail: string[] = [];
  runSnapshotStorageConformance({
    name: 'recorder',
    create: () => Promise.resolve({ storage: new MemoryStorage() }),
    test: {
      describe: (name, fn) => {
        trail.push(name);
        fn();
        trail.pop();
      },
      it: (name) => {
        names.push([...trail.slice(1), name].join(' > '));
      },
    },
    ...options,
  });
  return names;
}

const groupsOf = (names: string[]): string[] => [...new Set(names.map((n) => n.split(' > ')[0]!))];

describe('conformance groups', () => {
  it('registers every group in order when nothing is filtered, 44 cases in all with upkeep', () => {
    const all = registered({ features: { upkeep: true } });
    expect(all).toHaveLength(44);
    expect(groupsOf(all)).toEqual([
      'saveSnapshot and loadSnapshot',
      'listSnapshotIds',
      'deleteSession',
      'manifest',
      'validation of ids and scopes',
      'concurrency',
      'prune',
      'listSessions and listLocations',
      'verify',
      'du',
    ]);
    expect(CONFORMANCE_GROUPS).toHaveLength(10);
  });

  it('keeps the defaults of the entry point: no upkeep unless asked, concurrency unless turned off', () => {
    expect(groupsOf(registered({}))).not.toContain('prune');
    expect(groupsOf(registered({}))).toContain('concurrency');
    expect(groupsOf(registered({ features: { concurrency: false } }))).not.toContain('concurrency');
  });

  it('runs only the chosen groups', () => {
    const names = registered({ only: ['listSnapshotIds', 'du'], features: { upkeep: true } });
    expect(groupsOf(names)).toEqual(['listSnapshotIds', 'du']);
    expect(names).toContain('listSnapshotIds > startAfter is an exclusive cursor');
  });

  it('leaves out skipped groups and nothing else', () => {
    const all = registered({ features: { upkeep: true } });
    const names = registered({ skip: ['validation', 'prune'], features: { upkeep: true } });
    expect(groupsOf(names)).not.toContain('validation of ids and scopes');
    expect(groupsOf(names)).not.toContain('prune');
    expect(names).toEqual(all.filter((n) => !n.startsWith('validation of ids and scopes > ') && !n.startsWith('prune > ')));
  });

  it('refuses an unknown group, naming the real ones', () => {
    expect(() => registered({ only: ['listSnapshots' as ConformanceGroup] })).toThrow(/Unknown conformance group 'listSnapshots'; the groups are snapshots, listSnapshotIds/);
    expect(() => registered({ skip: ['' as ConformanceGroup] })).toThrow(TypeError);
  });

  it('refuses to run an upkeep group only by name on a store declared without upkeep', () => {
    expect(() => registered({ only: ['prune'] })).toThrow("Conformance group 'prune' needs features.upkeep: true");
    expect(() => registered({ only: ['concurrency'], features: { concurrency: false } })).toThrow(/needs features.concurrency/);
  });
});

// A filtered run against a real backend, under this runner.
runSnapshotStorageConformance({
  name: 'MemoryStorage, manifest and du only',
  create: () => Promise.resolve({ storage: new MemoryStorage() }),
  test: { describe, it },
  only: ['manifest', 'du'],
  features: { upkeep: true },
});
