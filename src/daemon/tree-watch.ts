/**
 * The capture thread's side of the tree watcher (`watch-worker.ts` runs on its own thread, so
 * its queue is read while a capture keeps this thread busy). `mark()` and `unchangedSince()`
 * first write a cookie file into cairn's directory and wait until the watcher has seen it: every
 * change made before that instant has then been counted (watchman's cookie rule), so "no event
 * since the mark" means "no change since the mark". Anything else (the set not complete, a new
 * epoch, a cookie not seen in time, another file system than the root's own local one) answers
 * "don't know", and the caller does the work itself.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { ContainedDir, isPlainName } from '../core/contained-dir.js';
import { RACY_MARGIN_LOCAL_MS, racyMarginOf } from '../inventory/rules/racy.js';
import { COOKIE_PREFIX, NAMED, S, STATE_WORDS, type WatchWorkerData } from './watch-state.js';

/** Where a sequence of changes is measured from: the count and the epoch at a synchronised instant. */
export interface WatchMark {
  changes: number;
  epoch: number;
}

export interface TreeWatchOptions {
  /**
   * How long start() waits for the first complete watch set (default 0: it is built while the
   * caller works, and relied on from the first mark taken once it is complete).
   */
  readyTimeoutMs?: number;
  /** How long a cookie may take to come round (default 2 s; then the answer is "don't know"). */
  cookieTimeoutMs?: number;
  /** Test hook (see WatchWorkerData.drop). */
  drop?: 'overflow';
}

/**
 * The watcher thread's module: beside this one (tsc's dist/daemon/), or, in the CLI bundle that
 * `cairn daemon` runs, one level above the chunk this code landed in (dist/bin/watch-worker.mjs,
 * an entry of scripts/bundle-cli.mjs, whose ES modules are .mjs). Without it the watcher cannot
 * start, and every capture does the whole work.
 */
function workerFile(): URL {
  const file = import.meta.url.endsWith('.mjs') ? 'watch-worker.mjs' : 'watch-worker.js';
  const candidates = [new URL(`./${file}`, import.meta.url), new URL(`../${file}`, import.meta.url)];
  return candidates.find((u) => u.protocol === 'file:' && fs.existsSync(fileURLToPath(u))) ?? candidates[0]!;
}

/** A quarter of the kernel's queue length: a burst that long may hide an overflow. Null when unknown. */
function burstLimit(): number | null {
  try {
    const n = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    return Number.isSafeInteger(n) && n >= 64 ? Math.floor(n / 4) : null;
  } catch {
    return null;
  }
}

export class TreeWatch {
  private seq = 0;
  private closed = false;

  private constructor(
    readonly root: string,
    private readonly cairnParts: readonly string[],
    private readonly state: Int32Array,
    private readonly worker: Worker,
    private readonly cookieTimeoutMs: number,
    private readonly token: string,
    private readonly port: MessagePort,
  ) {}

  /** The consumers' views (see view()): each event name goes to every one. */
  private readonly views = new Set<WatchView>();

  /**
   * A view of this watch for one consumer: the marks are the watch's, the directories and names
   * taken are the consumer's own (another consumer taking them does not take them from it).
   * Closing the last view closes the watch.
   */
  view(): WatchView {
    const v = new WatchView(this, () => {
      this.views.delete(v);
      if (this.views.size === 0) this.close();
    });
    this.views.add(v);
    return v;
  }

  /**
   * Starts watching `root` (an absolute real path) with cairn's directory at `cairnDir` (inside
   * it, one plain name). Null where a watch cannot vouch for anything: not Linux (inotify), a
   * root on another file system than a local one, no readable queue length, no built watcher,
   * or (waiting for it) no complete watch set in time.
   */
  static start(root: string, cairnDir: string, options: TreeWatchOptions = {}): TreeWatch | null {
    const cairnRel = path.relative(root, cairnDir);
    const file = workerFile();
    if (process.platform !== 'linux' || !isPlainName(cairnRel) || file.protocol !== 'file:' || !fs.existsSync(fileURLToPath(file))) return null;
    if (racyMarginOf(root) !== RACY_MARGIN_LOCAL_MS) return null; // network, FUSE, overlay: changes made elsewhere raise no event here
    const limit = burstLimit();
    if (limit === null) return null;
    const shared = new SharedArrayBuffer(STATE_WORDS * 4);
    const state = new Int32Array(shared);
    const token = randomBytes(6).toString('hex');
    const { port1, port2 } = new MessageChannel();
    port1.unref();
    const data: WatchWorkerData = { root, cairnRel, state: shared, burstLimit: limit, token, port: port2 };
    if (options.drop !== undefined) data.drop = options.drop;
    const worker = new Worker(file, { workerData: data, transferList: [port2] });
    worker.unref();
    worker.on('error', () => {
      Atomics.store(state, S.READY, 0);
      Atomics.store(state, S.FAILED, 1);
    });
    const deadline = Date.now() + (options.readyTimeoutMs ?? 0);
    while (Atomics.load(state, S.READY) === 0 && Atomics.load(state, S.FAILED) === 0) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      Atomics.wait(state, S.READY, 0, Math.min(left, 50));
    }
    const watch = new TreeWatch(root, [cairnRel], state, worker, options.cookieTimeoutMs ?? 2000, token, port1);
    if (options.readyTimeoutMs !== undefined && options.readyTimeoutMs > 0 && Atomics.load(state, S.READY) !== 1) {
      watch.close();
      return null;
    }
    return watch;
  }

  /** The current count and epoch, once every change made before this call has been counted; null when unknown. */
  mark(): WatchMark | null {
    if (!this.sync()) return null;
    const epoch = Atomics.load(this.state, S.EPOCH);
    const changes = Atomics.load(this.state, S.CHANGES);
    if (Atomics.load(this.state, S.READY) !== 1 || Atomics.load(this.state, S.EPOCH) !== epoch) return null;
    return { changes, epoch };
  }

  /** True only when provably nothing in the tree (outside cairn's directory) changed since `mark`. */
  unchangedSince(mark: WatchMark): boolean {
    const now = this.mark();
    return now !== null && now.epoch === mark.epoch && now.changes === mark.changes;
  }

  /** Counters for tests and `status`: events counted, doubts, epoch, whether the set is complete. */
  stats(): { changes: number; doubts: number; epoch: number; ready: boolean; stalls: number } {
    // (stalls: test hook, how many stalls the watcher thread finished)
    return { changes: Atomics.load(this.state, S.CHANGES), doubts: Atomics.load(this.state, S.DOUBTS), epoch: Atomics.load(this.state, S.EPOCH), ready: Atomics.load(this.state, S.READY) === 1, stalls: Atomics.load(this.state, S.STALLS) };
  }

  /**
   * Test hook: the watcher thread stops reading its queue (events pile up in the kernel) until
   * the returned function is called, or `ms` passed; resolves once the thread is stalled.
   */
  async stall(ms: number): Promise<() => void> {
    Atomics.store(this.state, S.GATE, 1);
    this.worker.postMessage({ stallMs: ms });
    while (Atomics.load(this.state, S.STALLING) !== 1) await new Promise((r) => setTimeout(r, 5));
    return () => {
      Atomics.store(this.state, S.GATE, 0);
      Atomics.notify(this.state, S.GATE);
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const [key, w] of shared) if (w === this) shared.delete(key);
    Atomics.store(this.state, S.READY, 0);
    this.port.close();
    void this.worker.terminate();
  }

  private receive(message: string): void {
    for (const v of this.views) v.receive(message);
  }

  /** Writes the next cookie and waits until the watcher saw it (false: not within the timeout, or it could not be written). */
  private sync(): boolean {
    if (this.closed || Atomics.load(this.state, S.READY) !== 1) return false; // (still building, or gave up)
    const seq = ++this.seq;
    const name = `${COOKIE_PREFIX}${this.token}-${seq}`;
    let dir: ContainedDir | null = null;
    try {
      dir = ContainedDir.open(this.root, this.cairnParts);
      if (dir === null) return false;
      dir.writeFile(name, '', { exclusive: true, fsync: false });
      const deadline = Date.now() + this.cookieTimeoutMs;
      for (;;) {
        const seen = Atomics.load(this.state, S.ACK);
        if (seen >= seq) {
          // Every name the watcher sent before the ACK is in the port's queue by now.
          for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) this.receive(m.message as string);
          return true;
        }
        const left = deadline - Date.now();
        if (left <= 0 || Atomics.load(this.state, S.READY) !== 1) return false;
        Atomics.wait(this.state, S.ACK, seen, Math.min(left, 50));
      }
    } catch {
      return false; // a planted link, a full disk: no proof
    } finally {
      try {
        dir?.unlink(name);
      } catch {
        // a cookie left behind is harmless (the next name differs)
      }
      dir?.close();
    }
  }
}

/**
 * One consumer's side of a TreeWatch (TreeWatch.view): the directories and entries events named
 * since this consumer last took them. Every other call is the watch's.
 */
export class WatchView {
  private closed = false;
  /** Directories named by the watcher and not taken yet (see takeDirty). */
  private dirty = new Set<string>();
  /** Entries named by events and not taken yet (see takeNamed); null once an event named none. */
  private named: Set<string> | null = new Set();

  constructor(
    private readonly watch: TreeWatch,
    private readonly onClose: () => void,
  ) {}

  /** Called by the watch for each name it drains from the watcher thread. */
  receive(message: string): void {
    if (!message.startsWith(NAMED)) this.dirty.add(message);
    else if (message.length === NAMED.length) this.named = null;
    else this.named?.add(message.slice(NAMED.length));
  }

  /**
   * The directories (paths relative to the root, '' the root) with a change since the last call,
   * as far as counted by the last mark: one in no later take did not change before that mark.
   */
  takeDirty(): Set<string> {
    const out = this.dirty;
    this.dirty = new Set();
    return out;
  }

  /**
   * The entries (paths relative to the root) events were about since the last call, as far as
   * counted by the last mark; null when an event named no entry (then anything may have changed).
   * Counted events outside cairn's directory each name one, so with the epoch unchanged these
   * are every path that changed (a directory's name stands for everything below it).
   */
  takeNamed(): Set<string> | null {
    const out = this.named;
    this.named = new Set();
    return out;
  }

  mark(): WatchMark | null {
    return this.closed ? null : this.watch.mark();
  }

  unchangedSince(mark: WatchMark): boolean {
    return !this.closed && this.watch.unchangedSince(mark);
  }

  stats(): ReturnType<TreeWatch['stats']> {
    return this.watch.stats();
  }

  stall(ms: number): Promise<() => void> {
    return this.watch.stall(ms);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}

/** The watches this process keeps, one per root, cairn directory and options (see watchTree). */
const shared = new Map<string, TreeWatch>();

/**
 * A view of this process's watch of `root` (TreeWatch.start's arguments), started on first use
 * and shared by every consumer after: the daemon's captures and a truncated snapshot's count
 * each keep their own trust, but one inotify watch set and one watcher thread serve both. Null
 * where TreeWatch.start gives none (asked again on the next call).
 */
export function watchTree(root: string, cairnDir: string, options: TreeWatchOptions = {}): WatchView | null {
  const key = JSON.stringify([root, cairnDir, options]);
  let watch = shared.get(key);
  if (watch === undefined) {
    const started = TreeWatch.start(root, cairnDir, options);
    if (started === null) return null;
    shared.set(key, (watch = started));
  }
  return watch.view();
}
