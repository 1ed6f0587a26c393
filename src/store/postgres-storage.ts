import { SessionError } from './errors.js';
import type { ManagedSnapshotStorage } from './types.js';

/** Opens a PostgreSQL store from `postgres://…`. Placeholder until the PostgreSQL backend lands. */
export function openPostgresStorageFromUrl(_url: URL, _env: NodeJS.ProcessEnv): Promise<ManagedSnapshotStorage> {
  return Promise.reject(new SessionError('the PostgreSQL backend is not available yet', { code: 'ERR_UNSUPPORTED_BACKEND' }));
}
