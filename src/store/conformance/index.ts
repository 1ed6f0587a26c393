/**
 * The backend conformance suite for `SnapshotStorage`, shipped as `cairn/conformance` so anyone
 * can check their own backend. It registers behaviour tests on whatever runner it is given
 * (vitest, jest, node:test) and asserts with node:assert only; it never imports a test runner.
 *
 *     import { describe, it } from 'vitest';
 *     import { runSnapshotStorageConformance } from 'cairn/conformance';
 *     runSnapshotStorageConformance({ name: 'my store', create: async () => ({ storage: new MyStorage() }), test: { describe, it } });
 *
 * The model (one group per method, `only`/`skip` filters, features, how a backend uses it) is
 * taught in README.md beside this file.
 */
import type { SnapshotStorage } from '../contract/types.js';
import { concurrencyCases } from './concurrency.js';
import { deleteSessionCases } from './delete-session.js';
import { duCases } from './du.js';
import { listSessionsCases } from './list-sessions.js';
import { listSnapshotIdsCases } from './list-snapshot-ids.js';
import { manifestCases } from './manifest.js';
import { pruneCases } from './prune.js';
import { snapshotCases } from './snapshots.js';
import { uniqueId, type CaseRegistrar } from './support.js';
import { validationCases } from './validation.js';
import { verifyCases } from './verify.js';

export { HOSTILE_IDENTIFIERS } from './support.js';

/** The groups of cases, in the order they run. */
export const CONFORMANCE_GROUPS = ['snapshots', 'listSnapshotIds', 'deleteSession', 'manifest', 'validation', 'concurrency', 'prune', 'listSessions', 'verify', 'du'] as const;

export type ConformanceGroup = (typeof CONFORMANCE_GROUPS)[number];

interface GroupSpec {
  title: string;
  cases: (test: CaseRegistrar) => void;
  needs?: 'upkeep' | 'concurrency';
}

const GROUPS: Record<ConformanceGroup, GroupSpec> = {
  snapshots: { title: 'saveSnapshot and loadSnapshot', cases: snapshotCases },
  listSnapshotIds: { title: 'listSnapshotIds', cases: listSnapshotIdsCases },
  deleteSession: { title: 'deleteSession', cases: deleteSessionCases },
  manifest: { title: 'manifest', cases: manifestCases },
  validation: { title: 'validation of ids and scopes', cases: validationCases },
  concurrency: { title: 'concurrency', cases: concurrencyCases, needs: 'concurrency' },
  prune: { title: 'prune', cases: pruneCases, needs: 'upkeep' },
  listSessions: { title: 'listSessions and listLocations', cases: listSessionsCases, needs: 'upkeep' },
  verify: { title: 'verify', cases: verifyCases, needs: 'upkeep' },
  du: { title: 'du', cases: duCases, needs: 'upkeep' },
};

export interface ConformanceTestApi {
  describe: (name: string, fn: () => void) => unknown;
  it: (name: string, fn: () => Promise<void>) => unknown;
  beforeEach?: (fn: () => unknown) => unknown;
  afterEach?: (fn: () => unknown) => unknown;
}

export interface ConformanceBackend {
  storage: SnapshotStorage;
  /** Called after each test, even a failed one. */
  cleanup?: () => Promise<void>;
}

export interface ConformanceOptions {
  /** Shown in the suite name. */
  name: string;
  /** A fresh, empty store for one test. */
  create: () => Promise<ConformanceBackend>;
  test: ConformanceTestApi;
  /** Run only these groups of cases (default: every group the features allow). */
  only?: readonly ConformanceGroup[];
  /** Leave these groups out. */
  skip?: readonly ConformanceGroup[];
  features?: {
    /** The storage is a `ManagedSnapshotStorage` (prune, verify, du, listSessions, listLocations). */
    upkeep?: boolean;
    /** Run the parallel-writer tests (default true). */
    concurrency?: boolean;
  };
}

/** The groups `options` selects, in run order; throws on an unknown name or a group its features turn off. */
function selectConformanceGroups(options: Pick<ConformanceOptions, 'only' | 'skip' | 'features'>): ConformanceGroup[] {
  const features = { upkeep: false, concurrency: true, ...options.features };
  for (const name of [...(options.only ?? []), ...(options.skip ?? [])]) {
    if (!(CONFORMANCE_GROUPS as readonly string[]).includes(name)) {
      throw new TypeError(`Unknown conformance group '${String(name)}'; the groups are ${CONFORMANCE_GROUPS.join(', ')}`);
    }
  }
  for (const name of options.only ?? []) {
    const needs = GROUPS[name].needs;
    if (needs !== undefined && !features[needs]) {
      throw new TypeError(`Conformance group '${name}' needs features.${needs}: true`);
    }
  }
  return CONFORMANCE_GROUPS.filter((name) => {
    if (options.only !== undefined && !options.only.includes(name)) return false;
    if (options.skip?.includes(name)) return false;
    const needs = GROUPS[name].needs;
    return needs === undefined || features[needs];
  });
}

/** Registers the conformance tests for one backend: every selected group, one `describe` each. */
export function runSnapshotStorageConformance(options: ConformanceOptions): void {
  const { describe, it } = options.test;
  const groups = selectConformanceGroups(options);

  const test: CaseRegistrar = (name, body) => {
    it(name, async () => {
      const backend = await options.create();
      try {
        await body(backend.storage, { sessionId: uniqueId('conf'), scope: 'agent', scopeId: 'test-agent' });
      } finally {
        await backend.cleanup?.();
      }
    });
  };

  describe(`SnapshotStorage conformance: ${options.name}`, () => {
    for (const name of groups) describe(GROUPS[name].title, () => GROUPS[name].cases(test));
  });
}
