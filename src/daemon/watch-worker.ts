/**
 * The tree watcher's own thread (see README.md): one `fs.watch` per directory of the tree, added
 * before the directory is listed, so a subdirectory created at any moment is either listed or
 * announced. It only counts: every event outside cairn's own directory adds one to CHANGES in
 * shared memory and names its directory on `data.port`, and a cookie
 * file named by the capture thread is acknowledged in ACK once its event arrives, which proves
 * every earlier event was counted and named (one inotify queue per thread, read in order).
 * Whatever it cannot vouch for ends the watch set's epoch: READY drops to 0 and CHANGES
 * moves, then the set is built again from scratch and READY rises with a new EPOCH.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { COOKIE_PREFIX, NAMED, S, type WatchWorkerData } from './watch-state.js';

const data = workerData as WatchWorkerData;
const state = new Int32Array(data.state);
const root = data.root;
const cairnRel = data.cairnRel;
const watched = new Map<string, { watcher: fs.FSWatcher; ino: number }>();
let burst = 0;
let rebuilding = false;
/**
 * Names a directory with a change. Every time: the capture thread may take the names at any
 * moment, even between two events of one directory, so a name sent once must not stand for a
 * later event (one posted after the take would be lost to the scan that began after it).
 */
function dirty(rel: string): void {
  data.port.postMessage(rel);
}

/**
 * Names the very entry an event was about (`rel`), or, with null, says an event named none: what
 * `git status` must look at again (a status limited to these paths; null means the whole tree).
 */
function named(rel: string | null): void {
  data.port.postMessage(rel === null ? NAMED : `${NAMED}${rel}`);
}

function changed(): void {
  Atomics.add(state, S.CHANGES, 1);
}

/** Ends the epoch: nothing seen so far can be vouched for; the set is built again once this callback returns. */
function doubt(reason: string): void {
  Atomics.store(state, S.READY, 0);
  Atomics.add(state, S.DOUBTS, 1);
  changed();
  parentPort?.postMessage({ doubt: reason });
  if (rebuilding) return;
  rebuilding = true;
  setImmediate(rebuild);
}

function rebuild(): void {
  for (const { watcher } of watched.values()) watcher.close();
  watched.clear();
  rebuilding = false;
  try {
    if (!watchTree('')) throw new Error('the root is not a directory');
  } catch (e) {
    // No complete watch set (no permission, the inotify watch limit, the root gone): stay not ready.
    for (const { watcher } of watched.values()) watcher.close();
    watched.clear();
    Atomics.store(state, S.READY, 0);
    Atomics.store(state, S.FAILED, 1);
    Atomics.notify(state, S.READY);
    parentPort?.postMessage({ failed: (e as Error).message });
    return;
  }
  Atomics.add(state, S.EPOCH, 1);
  Atomics.store(state, S.READY, 1);
  Atomics.notify(state, S.READY);
}

/** cairn's own directory is watched for cookies only; git's object store changes nothing a status shows. */
function descend(parentRel: string, name: string): boolean {
  const rel = parentRel === '' ? name : `${parentRel}/${name}`;
  if (rel === cairnRel || rel.startsWith(`${cairnRel}/`)) return rel === cairnRel;
  return !(name === 'objects' && parentRel.split('/').includes('.git'));
}

/** Watches `rel`, then lists it and watches every subdirectory (watch before list: nothing created in between is missed). */
function watchTree(rel: string): boolean {
  const abs = rel === '' ? root : path.join(root, rel);
  const before = fs.lstatSync(abs, { throwIfNoEntry: false });
  if (before === undefined || !before.isDirectory()) return false;
  const watcher = fs.watch(abs, { persistent: true }, (_type, name) => onEvent(rel, name === null ? null : String(name)));
  watcher.on('error', (e) => doubt(`watch error on ${rel || '.'}: ${e.message}`));
  const after = fs.lstatSync(abs, { throwIfNoEntry: false });
  if (after === undefined || after.ino !== before.ino || !after.isDirectory()) {
    watcher.close();
    throw new Error(`${rel || '.'} was replaced while it was being watched`);
  }
  watched.set(rel, { watcher, ino: after.ino });
  if (rel === cairnRel) return true;
  dirty(rel); // newly watched: whatever it holds is looked at
  for (const d of fs.readdirSync(abs, { withFileTypes: true })) {
    if (d.isDirectory() && descend(rel, d.name)) watchTree(rel === '' ? d.name : `${rel}/${d.name}`);
  }
  return true;
}

function unwatchTree(rel: string): void {
  for (const [key, { watcher }] of watched) {
    if (key === rel || key.startsWith(`${rel}/`)) {
      dirty(key);
      watcher.close();
      watched.delete(key);
    }
  }
}

/** After an event naming `rel`: a directory there is watched (again, if it is another one); anything else is not. */
function revalidate(rel: string): void {
  const st = fs.lstatSync(path.join(root, rel), { throwIfNoEntry: false });
  const known = watched.get(rel);
  if (st !== undefined && st.isDirectory()) {
    if (known !== undefined && known.ino === st.ino) return;
    unwatchTree(rel);
    const slash = rel.lastIndexOf('/');
    if (descend(slash < 0 ? '' : rel.slice(0, slash), rel.slice(slash + 1))) watchTree(rel);
  } else if (known !== undefined) {
    unwatchTree(rel); // (a directory is watched before anything below it: nothing below an unwatched name is)
  }
}

function onEvent(dirRel: string, name: string | null): void {
  // Events of one read of the inotify queue arrive in one go, before any immediate runs; a queue
  // that overflowed (whose overflow notice libuv drops) arrives as such a burst of at least its length.
  if (burst === 0) setImmediate(() => (burst = 0));
  burst++;
  if (burst === data.burstLimit) doubt('a burst of events as long as a full inotify queue (events may have been lost)');
  if (dirRel === cairnRel) {
    const mine = `${COOKIE_PREFIX}${data.token}-`;
    if (name !== null && name.startsWith(mine)) {
      const seq = Number(name.slice(mine.length));
      if (Number.isSafeInteger(seq) && seq > Atomics.load(state, S.ACK)) {
        Atomics.store(state, S.ACK, seq);
        Atomics.notify(state, S.ACK);
      }
    }
    return; // cairn's own data (inventories, content, cookies): git ignores it (checked by the caller)
  }
  // Test hook: the event is lost, as in a queue that overflowed, and the watcher doubts as it then would.
  if (data.drop === 'overflow') return doubt('test hook: events dropped as an overflowing queue drops them');
  changed();
  dirty(dirRel);
  if (rebuilding) return;
  try {
    if (name === null) {
      // No name: the directory's whole listing is looked at again.
      named(null);
      for (const d of fs.readdirSync(path.join(root, dirRel), { withFileTypes: true })) revalidate(dirRel === '' ? d.name : `${dirRel}/${d.name}`);
    } else {
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      named(rel);
      dirty(rel);
      revalidate(rel);
    }
  } catch (e) {
    doubt(`cannot follow a change under ${dirRel || '.'}: ${(e as Error).message}`);
  }
}

parentPort?.on('message', (m: { stallMs?: number }) => {
  if (m.stallMs === undefined) return;
  // Test hook: keep this thread from reading its queue (as a busy machine might) until the gate
  // opens, so events pile up in the kernel.
  Atomics.store(state, S.STALLING, 1);
  const until = Date.now() + m.stallMs;
  while (Atomics.load(state, S.GATE) === 1 && Date.now() < until) Atomics.wait(state, S.GATE, 1, until - Date.now());
  Atomics.store(state, S.STALLING, 0);
  Atomics.add(state, S.STALLS, 1);
});

rebuild();
