import { SessionError } from './errors.js';
import type { ManagedSnapshotStorage } from './types.js';

/** Opens an S3 store from `s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=1`. Placeholder until the S3 backend lands. */
export function openS3StorageFromUrl(_url: URL, _env: NodeJS.ProcessEnv): Promise<ManagedSnapshotStorage> {
  return Promise.reject(new SessionError('the S3 backend is not available yet', { code: 'ERR_UNSUPPORTED_BACKEND' }));
}
