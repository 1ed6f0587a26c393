/**
 * Finds the bytes of an inventory entry: the content store first, then git (the commits the
 * captures recorded as holding the files they left to git), then the file on disk when it still
 * has that digest. Every source is checked against the entry's sha256.
 */
import { readAtCommit } from './git-source.js';
import { readTreeFile } from './capture.js';
import { sha256Of, type ContentStore } from './store.js';
import type { InventoryEntry } from '../session/inventory-store/inventory-store.js';

export class ContentResolver {
  private readonly fromGit = new Map<string, Buffer>();
  private readonly tried = new Set<string>();

  constructor(
    readonly root: string,
    readonly store: ContentStore,
    /** Commits to look in, most likely first. */
    readonly commits: readonly string[],
  ) {}

  /** Reads from git, in one batch per commit, the entries the store lacks. */
  prefetch(entries: Iterable<InventoryEntry>): void {
    let wanted: InventoryEntry[] = [];
    for (const e of entries) {
      if (e.kind !== 'file' || e.sha256 === undefined || this.store.has(e.sha256) || this.fromGit.has(e.sha256) || this.tried.has(e.path)) continue;
      wanted.push(e);
    }
    for (const commit of new Set(this.commits)) {
      if (wanted.length === 0) break;
      const expected = new Map(wanted.map((e) => [e.path, e.sha256]));
      const got = readAtCommit(this.root, commit, wanted.map((e) => e.path), (p, bytes) => sha256Of(bytes) === expected.get(p));
      const left: InventoryEntry[] = [];
      for (const e of wanted) {
        const bytes = got.get(e.path);
        if (bytes !== undefined && sha256Of(bytes) === e.sha256) this.fromGit.set(e.sha256, bytes);
        else left.push(e);
      }
      wanted = left;
    }
    for (const e of wanted) this.tried.add(e.path);
  }

  /** The entry's bytes, or null when no source has them. */
  bytes(entry: InventoryEntry): Buffer | null {
    const sha = entry.sha256;
    if (sha === undefined) return null;
    if (this.store.has(sha)) return this.store.get(sha);
    if (!this.tried.has(entry.path)) this.prefetch([entry]);
    const viaGit = this.fromGit.get(sha);
    if (viaGit !== undefined) return viaGit;
    const onDisk = readTreeFile(this.root, entry.path);
    return onDisk !== null && sha256Of(onDisk) === sha ? onDisk : null;
  }
}
