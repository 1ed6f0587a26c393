/**
 * Retention of content by reachability: an object lives while an inventory that a kept snapshot
 * file references names it, or a kept restore record needs it (what a restore replaced, so that
 * `--undo` can bring it back). Everything else goes with `session prune`, after the grace period.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InventoryStore } from '../session/inventory-store/inventory-store.js';
import { contentDir, openContentStore } from './capture.js';
import type { ContentGcResult, ContentUsage } from './store.js';

export interface ContentPruneResult extends ContentGcResult {
  /** Distinct sha256 still referenced. */
  liveObjects: number;
  /** The store after the prune (before it, with dryRun). */
  usage: ContentUsage;
}

/** Directory of restore records (journals); each may list `keeps`: sha256 values it needs. */
export const RESTORES_DIR = 'restores';

function restoreKeeps(cairnDir: string, into: Set<string>): void {
  const dir = path.join(cairnDir, RESTORES_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const keeps = (JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as { keeps?: unknown }).keeps;
      if (Array.isArray(keeps)) for (const sha of keeps) if (typeof sha === 'string') into.add(sha);
    } catch {
      // a torn record keeps nothing; the restore that wrote it rewrites it
    }
  }
}

/** Every sha256 that a live inventory or a restore record references. */
export function liveContent(cairnDir: string): { live: Set<string>; roots: string[] } {
  const inventories = new InventoryStore(path.join(cairnDir, 'inventories'), { within: path.dirname(path.resolve(cairnDir)) });
  const live = new Set<string>();
  const seenTrees = new Set<string>();
  const roots = inventories.liveRoots();
  for (const digest of roots) {
    try {
      inventories.forEachFile(digest, '', (e) => {
        if (e.sha256 !== undefined) live.add(e.sha256);
      }, seenTrees);
    } catch {
      // a damaged inventory keeps what was read of it
    }
  }
  restoreKeeps(cairnDir, live);
  return { live, roots };
}

/** Deletes content nothing references any more (objects in packs older than `graceMs`, default 15 min). */
export function pruneContent(cairnDir: string, options: { graceMs?: number; dryRun?: boolean } = {}): ContentPruneResult {
  const store = openContentStore(cairnDir);
  const { live, roots } = liveContent(cairnDir);
  const result = store.gc(live, options);
  if (!options.dryRun) {
    // Outside git, the next capture copies what changed since the baseline: a baseline whose
    // inventory is no longer kept may have lost its content, so the next capture starts afresh.
    const baseline = path.join(contentDir(cairnDir), 'baseline.json');
    try {
      const digest = (JSON.parse(fs.readFileSync(baseline, 'utf8')) as { digest?: unknown }).digest;
      if (typeof digest !== 'string' || !roots.includes(digest)) fs.rmSync(baseline, { force: true });
    } catch {
      // none
    }
  }
  return { ...result, liveObjects: live.size, usage: store.du() };
}

/** What the content store holds (packs, objects, raw/stored/on-disk bytes). */
export function contentUsage(cairnDir: string): ContentUsage {
  return openContentStore(cairnDir).du();
}
