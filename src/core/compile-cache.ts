/**
 * V8's compile cache for the CLI (Node 22.1+ has `module.enableCompileCache`): the bytecode of
 * every module a run compiles is kept on disk and reused by the next run, which saves most of the
 * ~10–30 ms a cold `cairn` spends compiling its own code and its dependencies. On Node 20 the call
 * does not exist and nothing happens. The cache lives in the user's cache directory
 * (`$XDG_CACHE_HOME/cairn/compile`, else `~/.cache/cairn/compile`), never in the tree being
 * recorded; `NODE_COMPILE_CACHE` (Node's own variable) picks another place and
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off, as for any Node program.
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
    return codes !== undefined && (status === codes.ENABLED || status === codes.ALREADY_ENABLED);
  } catch {
    return false;
  }
}
