/**
 * Content (`src/content/`): the bytes cairn keeps so an iteration can be looked at and put back.
 *
 * The model: an inventory (src/session/inventory-store/) already names every file by the
 * SHA-256 of its bytes. The content store keeps bytes under exactly those names, compressed, in
 * pack files under `<root>/.cairn/content/packs/` (never in the user's `.git`); `content/pack-table` caches
 * what their headers say, so a new process does not open every pack of the project's history, and a
 * process remembers the headers it read while each pack's name still holds the same file, so a
 * long-running one's next capture reads only the new packs' headers (store.ts). A capture adds
 * only what is neither stored yet nor safely held by git (capture.ts), so a clean repository's
 * `session pre` copies nothing and an iteration's cost is the files it changed. Reading
 * (read.ts) resolves (iteration, side, path) to an inventory entry, then to bytes: the store,
 * else the commit git holds them at, else the file on disk if it still has that digest; every
 * source is checked against the digest. Retention (gc.ts) is by reachability from the
 * inventories and restore records cairn still keeps; it also removes what a killed pack write
 * left (a temp file whose writer is dead, a minute old).
 *
 * | file | job |
 * |---|---|
 * | `store.ts` | packs: put/get/has by sha256, du, gc of unreachable objects |
 * | `pack-table.ts` | the cache of every pack's object list (`content/pack-table`) a fresh process looks objects up in |
 * | `record.ts` | the `content` record of a snapshot (imports nothing, so the session's types can name it) |
 * | `capture.ts` | what pre and post copy, and the record it returns |
 * | `git-source.ts` | bytes of a path at a commit, as checkout would write them |
 * | `git-index.ts` | blob ids git's index holds for paths (read without git): where post looks for a pre side first |
 * | `resolve.ts` | store → git → disk lookup of an entry's bytes |
 * | `read.ts` | `openIteration` / `readIterationContent`: (iteration, side, path) → bytes |
 * | `gc.ts` | the live set and the prune of content |
 */
export { ContentStore, isSha256Hex, sha256Of } from './store.js';
export type { ContentGcResult, ContentItem, ContentUsage, PutResult } from './store.js';
export { DEFAULT_CONTENT_CAP_BYTES, capturePostContent, capturePreContent, contentDir, openContentStore } from './capture.js';
export type { CaptureContext } from './capture.js';
export type { ContentRecord, NotRestorable, NotRestorableReason } from './record.js';
export { ContentResolver } from './resolve.js';
export { EMPTY_SHA256, openIteration, readIterationContent } from './read.js';
export type { IterationContent, OpenIterationOptions, PathContent, Side } from './read.js';
export { pruneContent, contentUsage } from './gc.js';
export type { ContentPruneResult } from './gc.js';
