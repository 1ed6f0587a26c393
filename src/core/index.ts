export { CairnError, isCairnError, errnoCode } from './errors.js';
export type { CairnErrorCode, CairnErrorOptions } from './errors.js';
export { canonicalize, canonicalDigest, sha256Hex } from './jcs.js';
export { compareUtf8, hasLoneSurrogate } from './utf8.js';
export { writeFileAtomic, writeFileAtomicSync, tempSiblingName, isTempName, TEMP_MARKER } from './atomic-write.js';
export type { AtomicWriteOptions } from './atomic-write.js';
export { acquireDirLock, LOCK_OWNER_FILE } from './lock.js';
export type { AcquireLockOptions, DirLock, LockOwner, StaleLockInfo } from './lock.js';
