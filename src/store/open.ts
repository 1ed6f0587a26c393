import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CairnError } from '../core/errors.js';
import { FileStorage } from './backends/file/file-storage.js';
import { DEFAULT_STORE_DIR } from './defaults.js';
import type { ManagedSnapshotStorage } from './contract/types.js';

export { DEFAULT_STORE_DIR };

const ACCEPTED =
  'use file:DIR or a plain directory path (default .cairn/store), s3://bucket/prefix?endpoint=…&region=…, or postgres://host/db (credentials from the environment)';

/** Where a store spec points, once its syntax has been checked (nothing opened or contacted). */
export type StoreTarget = { kind: 'file'; dir: string } | { kind: 's3'; url: URL } | { kind: 'postgres'; url: URL };

/**
 * Checks the store named by `spec` (else `env.CAIRN_STORE`, else `.cairn/store` under `cwd`)
 * without opening it: callers check every option before they write or serve anything.
 * Throws ERR_USAGE (exit 2) for an empty spec, an unknown scheme or a malformed URL.
 */
export function resolveStoreSpec(spec: string | undefined, opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): StoreTarget {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const chosen = spec ?? (env.CAIRN_STORE || undefined) ?? DEFAULT_STORE_DIR;
  if (chosen.trim() === '' || chosen.includes('\0')) {
    throw new CairnError('ERR_USAGE', `store '${chosen}' is empty or invalid; ${ACCEPTED}`, { exitCode: 2 });
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(chosen)?.[1]?.toLowerCase();
  // A one-letter "scheme" is a Windows drive (C:\…), i.e. a path.
  if (scheme === undefined || scheme.length === 1) return { kind: 'file', dir: path.resolve(cwd, chosen) };
  if (scheme === 'file') {
    let dir: string;
    try {
      dir = chosen.startsWith('file://') ? fileURLToPath(chosen) : chosen.slice('file:'.length);
    } catch (e) {
      throw new CairnError('ERR_USAGE', `store '${chosen}' is not a local file URL; ${ACCEPTED}`, { exitCode: 2, cause: e });
    }
    if (dir === '') throw new CairnError('ERR_USAGE', `store '${chosen}' names no directory; ${ACCEPTED}`, { exitCode: 2 });
    return { kind: 'file', dir: path.resolve(cwd, dir) };
  }
  if (scheme !== 's3' && scheme !== 'postgres' && scheme !== 'postgresql') {
    throw new CairnError('ERR_USAGE', `store scheme '${scheme}:' is not supported; ${ACCEPTED}`, { exitCode: 2 });
  }
  let url: URL;
  try {
    url = new URL(chosen);
  } catch (e) {
    throw new CairnError('ERR_USAGE', `store '${chosen}' is not a valid URL; ${ACCEPTED}`, { exitCode: 2, cause: e });
  }
  return scheme === 's3' ? { kind: 's3', url } : { kind: 'postgres', url };
}

/**
 * Opens the store named by `spec`, else by `env.CAIRN_STORE`, else `.cairn/store` under `cwd`
 * (both default to the process's): `file:DIR` / `file:///abs` / a plain path → FileStorage
 * (relative to `cwd`); `s3://…` → S3 backend; `postgres://…` / `postgresql://…` → PostgreSQL
 * backend (both loaded only when asked for, so their client libraries stay optional).
 * A file store inside `within` (default: `cwd` for the default store) is reached from there
 * without following any link.
 */
export async function openStore(spec?: string, opts: { cwd?: string; env?: NodeJS.ProcessEnv; within?: string } = {}): Promise<ManagedSnapshotStorage> {
  const env = opts.env ?? process.env;
  const target = resolveStoreSpec(spec, opts);
  if (target.kind === 'file') {
    // A store inside the project (`within`, or `cwd` for the default `.cairn/store`) is reached
    // from there with no link followed: a planted `.cairn` or `.cairn/store` link cannot move it.
    const isDefault = spec === undefined && !env.CAIRN_STORE;
    const within = opts.within ?? (isDefault ? path.resolve(opts.cwd ?? process.cwd()) : undefined);
    return new FileStorage(target.dir, within === undefined ? {} : { within });
  }
  if (target.kind === 's3') {
    const { openS3StorageFromUrl } = await import('./backends/s3/s3-storage.js');
    return openS3StorageFromUrl(target.url, env);
  }
  const { openPostgresStorageFromUrl } = await import('./backends/postgres/postgres-storage.js');
  return openPostgresStorageFromUrl(target.url, env);
}
