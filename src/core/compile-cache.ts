/**
 * V8's compile cache for the CLI (Node 22.1+ has `module.enableCompileCache`): the bytecode of
 * every module a run compiles is kept on disk and reused by the next run, which saves most of the
 * ~10–30 ms a cold `cairn` spends compiling its own code and its dependencies. On Node 20 that call
 * does not exist. The cache lives in the user's cache directory
 * (`$XDG_CACHE_HOME/cairn/compile`, else `~/.cache/cairn/compile`), never in the tree being
 * recorded; `NODE_COMPILE_CACHE` (Node's own variable) picks another place and
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off, as for any Node program. On Node 20 the lanes of the
 * bundle, CommonJS files, are loaded through a code cache of cairn's own in the same place
 * (requireLane): the bulk of what a short run compiles is theirs.
 */
import * as module from 'node:module';
import * as path from 'node:path';

type EnableCompileCache = (directory?: string) => { status: number; message?: string; directory?: string };

/** Where cairn's compile cache goes, unless NODE_COMPILE_CACHE says otherwise. */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(process.getBuiltinModule('node:os').homedir(), '.cache');
  return path.join(base, 'cairn', 'compile');
}

/**
 * Turns the compile cache on where the Node line has it; returns whether it is on. Never throws:
 * a cache that cannot be written (read-only home) only costs the time it would have saved.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): boolean {
  const enable = (module as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (typeof enable !== 'function' || env.NODE_DISABLE_COMPILE_CACHE !== undefined) return false;
  try {
    const dir = env.NODE_COMPILE_CACHE !== undefined && env.NODE_COMPILE_CACHE !== '' ? env.NODE_COMPILE_CACHE : compileCacheDir(env);
    const { status } = enable(dir);
    const codes = (module as { constants?: { compileCacheStatus?: { ENABLED: number; ALREADY_ENABLED: number } } }).constants?.compileCacheStatus;
    nodeCacheOn = codes !== undefined && (status === codes.ENABLED || status === codes.ALREADY_ENABLED);
    return nodeCacheOn;
  } catch {
    return false;
  }
}

/** Whether Node's own compile cache is on in this process (set by enableCompileCache). */
let nodeCacheOn = false;

/**
 * Loads a CommonJS file of the bundle (a lane, src/cli/bin.ts) as `require` would. Where Node has
 * no compile cache of its own (Node 20), through V8's code cache kept by hand: the file is compiled
 * with the bytecode a former run left (`vm.Script`'s `cachedData`, a documented API), and a run
 * that found none, or one V8 rejected (another V8, other flags), leaves its own as it exits — made
 * then, so that it holds every function the run compiled, not only the top level. A 300-file
 * `cairn snapshot` on Node 20 spends ~10 ms less CPU. The cache file is named by the lane's path
 * and by a digest of its text and of the Node build: V8 checks only the text's length, and npm
 * gives every installed file the same mtime, so nothing weaker tells two versions apart. Writing a
 * lane's new entry removes that lane's older ones. Any failure only costs the time the cache saves.
 * Code compiled so has no ES module loader behind its `import()` (Node 20 offers one only as an
 * experimental option that warns on stderr): the build turns a lane's import()s into require()s
 * (scripts/bundle-cli.mjs).
 */
export function requireLane(file: string, env: NodeJS.ProcessEnv = process.env): unknown {
  const { createRequire } = module;
  if (nodeCacheOn || env.NODE_DISABLE_COMPILE_CACHE !== undefined) return createRequire(file)(file);
  const fs = process.getBuiltinModule('node:fs');
  const source = fs.readFileSync(file, 'utf8');
  const { createHash } = process.getBuiltinModule('node:crypto');
  // sha1 names a cache entry, no security rests on it: a digest V8 does not make itself.
  const digest = (text: string): string => createHash('sha1').update(text).digest('hex').slice(0, 16);
  const dir = env.NODE_COMPILE_CACHE !== undefined && env.NODE_COMPILE_CACHE !== '' ? env.NODE_COMPILE_CACHE : compileCacheDir(env);
  const prefix = `${path.basename(file)}-${digest(file)}-`;
  const entry = path.join(dir, `${prefix}${digest(`${process.version}\0${process.arch}\0${source}`)}.v8`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(entry);
  } catch {
    cachedData = undefined;
  }
  const { Script } = process.getBuiltinModule('node:vm');
  // The wrapper Node itself puts around a CommonJS module.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, { filename: file, cachedData });
  const lane = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void).call(lane.exports, lane.exports, createRequire(file), lane, file, path.dirname(file));
  if (cachedData === undefined || script.cachedDataRejected === true) process.once('exit', () => leaveCodeCache(dir, prefix, entry, () => script.createCachedData()));
  return lane.exports;
}

/** Writes a lane's code cache entry (temp file, then rename) and removes that lane's others. */
function leaveCodeCache(dir: string, prefix: string, entry: string, make: () => Buffer): void {
  const fs = process.getBuiltinModule('node:fs');
  const temp = `${entry}.tmp-${process.pid}`;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(temp, make(), { mode: 0o600 });
    fs.renameSync(temp, entry);
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(prefix) && name.endsWith('.v8') && name !== path.basename(entry)) fs.rmSync(path.join(dir, name), { force: true });
    }
  } catch {
    // A cache that cannot be written (read-only home, a full disk) only costs the next run its
    // gain; a part-written temp file is not left behind, and nothing here may change the exit.
    try {
      fs.rmSync(temp, { force: true });
    } catch {
      // The directory itself is not writable: there is no temp file either.
    }
  }
}
