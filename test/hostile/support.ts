/**
 * Tools of the hostile-tree suite: canary files outside every root (which must stay
 * byte-identical), links of every kind planted at a path, and a swapper process that exchanges
 * a directory with a link in a tight loop (renameat2 RENAME_EXCHANGE through python3's ctypes;
 * plain renames where that is missing). Everything is bounded by rounds, never by time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';

/** Figures the suite prints at its end (links planted, races run, canaries checked). */
export const figures = { linksPlanted: 0, racesRun: 0, swaps: 0, canariesChecked: 0 };

export interface Outside {
  dir: string;
  /** A file outside, the target of file links. */
  file: string;
  /** Content of every canary by path, as planted. */
  canaries: Map<string, Buffer>;
}

/** An outside directory full of canaries: JSON files, an old file, a nested directory. */
export function makeOutside(dir: string): Outside {
  fs.mkdirSync(path.join(dir, 'nested', 'deeper'), { recursive: true });
  const canaries = new Map<string, Buffer>();
  const put = (rel: string, content: string, old = false): void => {
    const p = path.join(dir, rel);
    fs.writeFileSync(p, content);
    if (old) fs.utimesSync(p, new Date(2001, 0, 1), new Date(2001, 0, 1));
    canaries.set(p, Buffer.from(content));
  };
  put('canary.json', '{"canary":true}\n', true);
  put('snapshot_latest.json', '{"not":"yours"}\n', true);
  put('manifest.json', '{"schemaVersion":"1.0","updatedAt":"2001-01-01T00:00:00Z"}\n', true);
  put('owner.json', '{"pid":1}\n', true);
  put('current-loop.json', '{"secret":"outside"}\n', true);
  put('ab', 'old object-like file\n', true);
  put(path.join('nested', 'x.json'), '{"x":1}\n', true);
  put(path.join('nested', 'deeper', 'y'), 'y\n', true);
  return { dir, file: path.join(dir, 'canary.json'), canaries };
}

/** Every path below `dir` (files and directories), sorted. */
function listAll(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      out.push(p);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** The outside directory holds exactly its canaries, byte for byte, and nothing else. */
export function expectOutsideIntact(outside: Outside): void {
  const expected = [...outside.canaries.keys(), path.join(outside.dir, 'nested'), path.join(outside.dir, 'nested', 'deeper')].sort();
  expect(listAll(outside.dir)).toEqual(expected);
  for (const [p, content] of outside.canaries) {
    expect(fs.readFileSync(p).equals(content), `canary ${p} changed`).toBe(true);
    figures.canariesChecked++;
  }
}

export type LinkKind = 'outside-dir' | 'outside-file' | 'dangling' | 'loop';
export const LINK_KINDS: readonly LinkKind[] = ['outside-dir', 'outside-file', 'dangling', 'loop'];

/** Replaces whatever is at `at` by a link of `kind` (parents made as needed). */
export function plantLink(at: string, kind: LinkKind, outside: Outside): void {
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.rmSync(at, { recursive: true, force: true });
  const target = kind === 'outside-dir' ? outside.dir : kind === 'outside-file' ? outside.file : kind === 'dangling' ? path.join(outside.dir, 'no-such-thing') : at;
  fs.symlinkSync(target, at);
  figures.linksPlanted++;
}

const SWAPPER = String.raw`
import ctypes, os, sys
a, b, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
exchange = getattr(libc, 'renameat2', None)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
n = 0
sys.stdout.write('ready\n'); sys.stdout.flush()
for _ in range(rounds):
    if os.path.exists(b + '.stop'):
        break
    if exchange is not None:
        if exchange(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
            exchange = None
            continue
    else:
        try:
            os.rename(a, a + '.swap'); os.rename(b, a); os.rename(a + '.swap', b)
        except OSError:
            pass
    n += 1
sys.stdout.write('%d\n' % n)
`;

export interface Swapper {
  /** Stops the loop; resolves with the number of swaps done. */
  stop(): Promise<number>;
}

/**
 * Starts exchanging the directory `dir` with a link `link` (made here, to `target`) at most
 * `rounds` times. Resolves once the loop runs.
 */
export async function startSwapper(dir: string, link: string, target: string, rounds = 2_000_000): Promise<Swapper> {
  fs.symlinkSync(target, link);
  figures.linksPlanted++;
  const child: ChildProcess = spawn('python3', ['-c', SWAPPER, dir, link, String(rounds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('ready\n')) resolve();
    });
  });
  const done = new Promise<number>((resolve) => child.once('exit', () => resolve(Number(out.split('\n')[1] ?? '0'))));
  return {
    async stop() {
      try {
        fs.writeFileSync(link + '.stop', '');
      } catch {
        child.kill(); // cairn deleted the swapped directory's parent (a prune): nothing left to swap
      }
      const swaps = await done;
      fs.rmSync(link + '.stop', { force: true });
      // Leave the real directory at `dir` and the link at `link` (unless a prune removed them).
      if (fs.lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink() === true && fs.existsSync(link)) {
        fs.renameSync(dir, dir + '.l');
        fs.renameSync(link, dir);
        fs.renameSync(dir + '.l', link);
      }
      figures.racesRun++;
      figures.swaps += swaps;
      return swaps;
    },
  };
}

/** Prints this file's figures (the closing note quotes them): links planted, races run, swaps, canaries checked. */
export function printFigures(file: string): void {
  process.stdout.write(`hostile-tree figures (${file}): links planted ${figures.linksPlanted}, races run ${figures.racesRun} (${figures.swaps} swaps), canaries checked intact ${figures.canariesChecked}\n`);
}
