// `cairn`'s fast lanes (src/cli/fast-lane.ts) answer the commonest short runs without loading
// the CLI framework: help and the version from text the build captured, `snapshot` through its
// own flag parser. Each must give what the full CLI (dist/bin/main.mjs run as the process) gives:
// the same stdout, stderr and exit code, for every command's help, and the same flags for every
// argument list the lane takes.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSessionFlags, parseSnapshotFlags, pickLane } from '../../src/cli/fast-lane.js';
import { buildProgram } from '../../src/cli/main.js';
import type { CliIO } from '../../src/cli/io.js';
import { CLI, copyBuild, npmPackFiles } from '../support/cli.js';

const FULL = path.join(path.dirname(CLI), 'main.mjs');
const HELP_TABLE = path.join(path.dirname(CLI), 'help.json');
const temp: string[] = [];
afterAll(() => {
  for (const dir of temp) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temp.push(dir);
  return dir;
}

const silent: CliIO = { stdout: { write: () => true } as unknown as CliIO['stdout'], stderr: { write: () => true } as unknown as CliIO['stderr'], env: {}, cwd: process.cwd() };

/** Every command path of the full CLI (`session pre`, `store list`, ...). */
function commandPaths(): string[][] {
  const paths: string[][] = [];
  const walk = (command: ReturnType<typeof buildProgram>, prefix: string[]): void => {
    for (const sub of command.commands) {
      paths.push([...prefix, sub.name()]);
      walk(sub, [...prefix, sub.name()]);
    }
  };
  walk(buildProgram(silent), []);
  return paths;
}

/** Runs `entry` (the executable or the full CLI) with stdout and stderr piped, as a script would. */
function run(entry: string, args: string[], cwd: string, env: Record<string, string> = {}, input = ''): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [entry, ...args], { cwd, encoding: 'utf8', input, env: { ...process.env, CI: '1', ...env } });
  // A temporary file's name carries the process id and a random part.
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.replace(/\.cairn-tmp-\d+-[0-9a-f]+/g, '.cairn-tmp-N') };
}

describe('the help and version lanes', () => {
  const table = JSON.parse(fs.readFileSync(HELP_TABLE, 'utf8')) as Record<string, string>;

  it('have captured help for the program and every command, and nothing else', () => {
    const expected = ['help:', 'version', ...commandPaths().map((p) => `help:${p.join(' ')}`)];
    expect(Object.keys(table).sort()).toEqual(expected.sort());
    expect(expected.length).toBeGreaterThan(20);
  });

  it('print what the full CLI prints for every command’s --help (and -h), --version and -V', () => {
    const cwd = tempDir('cairn-lane-help-');
    const cases = [['--help'], ['-h'], ['--version'], ['-V'], ...commandPaths().map((p) => [...p, '--help']), ['session', 'pre', '-h'], ['nosuch', '--help'], ['--bogus', '--help']];
    for (const args of cases) {
      const lane = run(CLI, args, cwd);
      expect(lane, args.join(' ')).toEqual(run(FULL, args, cwd));
    }
    // Non-vacuous: the lane's text is the captured one, and it is real help.
    expect(run(CLI, ['snapshot', '--help'], cwd).stdout).toBe(table['help:snapshot']);
    expect(table['help:snapshot']).toContain('Usage: cairn snapshot [options]');
  });

  it('are taken only when stdout is not a terminal, where help is wrapped to 80 columns', () => {
    expect(pickLane(['--help'], false)).toEqual({ kind: 'help', path: '' });
    expect(pickLane(['session', 'pre', '-h'], false)).toEqual({ kind: 'help', path: 'session pre' });
    expect(pickLane(['--version'], false)).toEqual({ kind: 'version' });
    expect(pickLane(['--help'], true)).toBeUndefined();
    expect(pickLane(['--version'], true)).toBeUndefined();
    expect(pickLane(['snapshot', '--root', '.', '--help'], false)).toBeUndefined();
  });

  it('fall back to the full CLI when the captured table is missing', () => {
    // A copy of the built bundle without help.json: same output, from the full CLI.
    const copy = path.join(tempDir('cairn-lane-copy-'), 'bin');
    fs.cpSync(path.dirname(CLI), copy, { recursive: true });
    fs.rmSync(path.join(copy, 'help.json'));
    const cwd = tempDir('cairn-lane-help-');
    for (const args of [['--help'], ['snapshot', '--help'], ['--version']]) expect(run(path.join(copy, 'cairn.js'), args, cwd)).toEqual(run(FULL, args, cwd));
  });

  it('ship in the package npm would publish', () => {
    const packed = npmPackFiles();
    expect(packed).toContain('dist/bin/help.json');
    expect(packed).toContain('dist/bin/package.json'); // which makes cairn.js CommonJS
  });
});

/** The flags the full CLI's parser hands the action of `command` (`snapshot`, `session pre`), or its error code. */
async function commanderFlags(args: string[], command = 'snapshot'): Promise<unknown> {
  const program = buildProgram(silent);
  let got: unknown;
  const names = command.split(' ');
  let target = program;
  for (const name of names) target = target.commands.find((c) => c.name() === name)!;
  target.action((flags: unknown) => {
    got = flags;
  });
  try {
    await program.parseAsync([...names, ...args], { from: 'user' });
  } catch (e) {
    return { error: (e as { code?: string }).code };
  }
  return got;
}

describe('the snapshot lane', () => {
  it('parses the plain spellings into the flags the full CLI gives the command', async () => {
    const cases = [
      ['--root', '.'],
      ['--root=.', '-o', 'out.json'],
      ['--root', 'a b', '--out', 'x', '--include', 'src/**', '--include=*.ts', '--exclude', 'vendor/**'],
      ['--max-files', '50000', '--root', '.', '--max-bytes', '0', '--jobs', '2', '--cache-dir', '/tmp/c'],
      ['--root', '.', '--no-gitignore', '--no-digest', '--no-cache', '--verbose', '--json'],
      ['--root='],
    ];
    for (const args of cases) {
      const lane = parseSnapshotFlags(args);
      expect(lane, args.join(' ')).toBeDefined();
      expect(lane, args.join(' ')).toEqual(await commanderFlags(args));
    }
  });

  it('leaves to the full CLI what it does not take whole: errors keep their one source', () => {
    for (const args of [[], ['--root'], ['-o', 'x'], ['--root', '.', '--root', '..'], ['--root', '.', '--max-files', '1e3'], ['--root', '.', '--jobs', '-1'], ['--root', '.', 'extra'], ['--root', '.', '--bogus'], ['--root', '.', '--verbose=1'], ['--root', '.', '-ox'], ['--root', '.', '--'], ['--root', '-x']]) {
      expect(parseSnapshotFlags(args), args.join(' ')).toBeUndefined();
    }
  });

  it('never parses an argument list differently from the full CLI (property)', async () => {
    const word = fc.constantFrom('--root', '-o', '--out', '--include', '--exclude', '--max-files', '--max-bytes', '--no-gitignore', '--no-digest', '--no-cache', '--cache-dir', '--jobs', '--verbose', '--json', '--root=x', '--jobs=3', '--max-files=07', '.', 'x', '12', '-1', '', '--', '-h', '--gitignore', '9007199254740993');
    await fc.assert(
      fc.asyncProperty(fc.array(word, { maxLength: 8 }), async (args) => {
        const lane = parseSnapshotFlags(args);
        if (lane !== undefined) expect(lane).toEqual(await commanderFlags(args));
      }),
      { numRuns: 400 },
    );
  });

  it('is one CommonJS module in the bundle, requiring no chunk and no builtin a warm snapshot does without', () => {
    const text = fs.readFileSync(path.join(path.dirname(CLI), 'snapshot-lane.js'), 'utf8');
    expect(text).toContain('function runSnapshotLane(');
    // No ES module syntax: loading it must not start Node's ES module loader.
    expect(text).not.toMatch(/^(?:import|export)\s/m);
    // What the module requires as it loads (top level; a lazily inlined module requires inside its init).
    const imports = new Set([...text.matchAll(/^var \w+ = (?:__toESM\()?require\("([^"]+)"\)/gm)].map((m) => m[1]!));
    expect(imports.size).toBeGreaterThan(0);
    expect([...imports].filter((spec) => !spec.startsWith('node:'))).toEqual([]);
    // Hash workers, the CRC check and git are loaded on use, never by the lane's start.
    for (const lazy of ['node:worker_threads', 'node:zlib', 'node:child_process']) expect(imports.has(lazy), lazy).toBe(false);
  });

  it('prints, writes and exits as the full CLI does, errors and truncation included', () => {
    const tree = tempDir('cairn-lane-tree-');
    for (let i = 0; i < 12; i++) fs.writeFileSync(path.join(tree, `f${i}.txt`), `file ${i}\n`);
    fs.mkdirSync(path.join(tree, 'sub'));
    fs.writeFileSync(path.join(tree, 'sub', 'g.txt'), 'g\n');
    const out = tempDir('cairn-lane-out-');
    const cases = [
      ['snapshot', '--root', '.'],
      ['snapshot', '--root', '.', '--no-cache', '--jobs', '0'],
      ['snapshot', '--root', '.', '--no-cache', '--jobs', '2'],
      ['snapshot', '--root', 'sub', '-o', path.join(out, 's.json')],
      ['snapshot', '--root', '.', '--max-files', '3'],
      ['snapshot', '--root', 'missing'],
      ['snapshot', '--root', 'f1.txt'],
      ['snapshot', '--root', '.', '-o', path.join(out, 'no', 'such', 'dir', 's.json')],
    ];
    for (const args of cases) {
      expect(pickLane(args, false)?.kind, args.join(' ')).toBe('snapshot');
      const cache = { XDG_CACHE_HOME: tempDir('cairn-lane-cache-') };
      const lane = run(CLI, args, tree, cache);
      const full = run(FULL, args, tree, { XDG_CACHE_HOME: tempDir('cairn-lane-cache-') });
      expect(lane, args.join(' ')).toEqual(full);
      // And warm, from the stat cache the first run left.
      expect(run(CLI, args, tree, cache), args.join(' ')).toEqual(full);
    }
    expect(run(CLI, ['snapshot', '--root', 'missing'], tree).status).toBe(2);
    expect(JSON.parse(run(CLI, ['snapshot', '--root', '.'], tree).stdout)).toHaveProperty('snapshotDigest');
  });
});

describe('the snapshot lane without a daemon', () => {
  it('loads no daemon client when no socket is at the root, and prints what the full CLI prints', () => {
    // A copy of the build inside the package (its dependencies resolve as the build's do), minus the daemon lane.
    const { bin, remove } = copyBuild('cairn-without-daemon-lane-');
    fs.rmSync(path.join(bin, 'daemon-lane.js'));
    try {
      const tree = tempDir('cairn-lane-tree-');
      for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(tree, `f${i}.txt`), `file ${i}\n`);
      for (const args of [['snapshot', '--root', '.'], ['snapshot', '--root', tree, '--max-files', '2']]) {
        const cache = { XDG_CACHE_HOME: tempDir('cairn-lane-cache-') };
        expect(run(path.join(bin, 'cairn.js'), args, tree, cache), args.join(' ')).toEqual(run(FULL, args, tree, { XDG_CACHE_HOME: tempDir('cairn-lane-cache-') }));
      }
      // Non-vacuous: with something that may be a daemon's socket there, this build needs the lane it lacks.
      fs.mkdirSync(path.join(tree, '.cairn'));
      const server = spawnSync(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path.join(tree, '.cairn', 'daemon.sock'))}, () => process.exit(0))`]); // exits, the socket left behind (as a daemon killed -9 leaves it)
      expect(server.status).toBe(0);
      expect(fs.lstatSync(path.join(tree, '.cairn', 'daemon.sock')).isSocket()).toBe(true);
      expect(run(path.join(bin, 'cairn.js'), ['snapshot', '--root', '.'], tree).status).not.toBe(0);
    } finally {
      remove();
    }
  });
});

describe('the hook lane', () => {
  it('is taken for `hook <agent>` only, and is one module of its own', () => {
    expect(pickLane(['hook', 'claude-code'], false)).toEqual({ kind: 'hook', agent: 'claude-code' });
    expect(pickLane(['hook', 'claude-code'], true)).toEqual({ kind: 'hook', agent: 'claude-code' });
    for (const argv of [['hook'], ['hook', 'claude-code', 'x'], ['hook', '--help-me'], ['hook', 'Claude']]) expect(pickLane(argv, false), argv.join(' ')).toBeUndefined();
    const text = fs.readFileSync(path.join(path.dirname(CLI), 'hook-lane.js'), 'utf8');
    expect(text).toContain('function runHookLane(');
    expect([...text.matchAll(/\brequire\(\s*['"](\.[^'"]+)['"]/g)]).toEqual([]);
  });

  it('records a turn as the full CLI does, and answers an unknown agent or a bad payload the same', () => {
    const git = (root: string, ...args: string[]): void => {
      execFileSync('git', args, { cwd: root, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    };
    const project = (): string => {
      const root = fs.realpathSync(tempDir('cairn-lane-hook-'));
      fs.writeFileSync(path.join(root, 'a.txt'), 'a\n');
      git(root, 'init', '-q', '-b', 'main');
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '-m', 'init');
      return root;
    };
    const event = (root: string, name: string): string => JSON.stringify({ session_id: 'lane-test', transcript_path: path.join(root, 'none.jsonl'), cwd: root, hook_event_name: name, prompt: 'go' });
    const turn = (entry: string): { runs: unknown[]; did: unknown[] } => {
      const root = project();
      const env = { HOME: tempDir('cairn-lane-home-'), XDG_CACHE_HOME: tempDir('cairn-lane-cache-'), CAIRN_STORE: '' };
      const runs = [run(entry, ['hook', 'claude-code'], root, env, event(root, 'UserPromptSubmit'))];
      fs.writeFileSync(path.join(root, 'b.txt'), 'b\n');
      runs.push(run(entry, ['hook', 'claude-code'], root, env, event(root, 'Stop')));
      runs.push(run(entry, ['hook', 'claude-code'], root, env, '{not json'));
      runs.push(run(entry, ['hook', 'no-such-agent'], root, env, event(root, 'Stop')));
      const log = fs.readFileSync(path.join(root, '.cairn', 'hooks', 'hook.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      return { runs, did: log.map((e) => [e.event, e.did ?? e.level, e.iteration]) };
    };
    const lane = turn(CLI);
    expect(lane).toEqual(turn(FULL));
    expect(lane.did.slice(0, 2)).toEqual([['UserPromptSubmit', 'pre', '001'], ['Stop', 'post', '001']]);
    expect((lane.runs[3] as { status: number }).status).toBe(2);
  });
});

describe('the session pre/post lane', () => {
  it('parses the plain spellings into the flags the full CLI gives the command', async () => {
    const cases: ['pre' | 'post', string[]][] = [
      ['pre', []],
      ['pre', ['--root', '.', '--iteration-dir', 'it/1', '--state-dir=.aiwg', '--no-inventory', '--amend', '--json']],
      ['post', []],
      ['post', ['--root', '.', '--store', 'file:/tmp/s', '--session', 'a_b-1', '--json']],
      ['post', ['--no-store', '--no-inventory', '--iteration-dir=x']],
    ];
    for (const [phase, args] of cases) {
      const lane = parseSessionFlags(phase, args);
      expect(lane, `${phase} ${args.join(' ')}`).toBeDefined();
      expect(lane, `${phase} ${args.join(' ')}`).toEqual(await commanderFlags(args, `session ${phase}`));
    }
    for (const args of [['--session', 'Bad!'], ['--store', 'x', '--no-store'], ['--amend'], ['--root']]) expect(parseSessionFlags('post', args), args.join(' ')).toBeUndefined();
  });

  it('never parses an argument list differently from the full CLI (property)', async () => {
    const word = fc.constantFrom('--root', '--iteration-dir', '--state-dir', '--no-inventory', '--inventory', '--amend', '--json', '--store', '--no-store', '--session', '--session=ok', '--store=file:x', '.', 'x', 'Bad!', 'a-b', '', '-x', '--');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<'pre' | 'post'>('pre', 'post'), fc.array(word, { maxLength: 7 }), async (phase, args) => {
        const lane = parseSessionFlags(phase, args);
        if (lane !== undefined) expect(lane).toEqual(await commanderFlags(args, `session ${phase}`));
      }),
      { numRuns: 400 },
    );
  });

  it('is one module of its own in the bundle', () => {
    const text = fs.readFileSync(path.join(path.dirname(CLI), 'session-lane.js'), 'utf8');
    expect(text).toContain('function runSessionLane(');
    expect([...text.matchAll(/\brequire\(\s*['"](\.[^'"]+)['"]/g)]).toEqual([]);
  });

  it('takes and finishes an iteration as the full CLI does, errors included', () => {
    const run2 = (entry: string): unknown[] => {
      const root = fs.realpathSync(tempDir('cairn-lane-session-'));
      fs.writeFileSync(path.join(root, 'a.txt'), 'a\n');
      const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
      for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-q', '-m', 'init']]) execFileSync('git', args, { cwd: root, stdio: 'ignore', env: gitEnv });
      const env = { XDG_CACHE_HOME: tempDir('cairn-lane-cache-'), CAIRN_STORE: '' };
      const out: unknown[] = [];
      const step = (args: string[]): void => {
        expect(pickLane(args, false)?.kind, args.join(' ')).toMatch(/^session /);
        const r = run(entry, args, root, env);
        // Times, ids and durations differ between any two runs.
        const norm = (t: string): string => t.split(root).join('<root>').replace(/\b[0-9a-f]{40}\b/g, 'SHA').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID').replace(/"durationMs": \d+/g, '"durationMs": N').replace(/"duration": "[^"]*"/g, '"duration": "D"').replace(/duration: \d+s /g, 'duration: Ds ').replace(/\b[0-9a-f]{12}\b/g, 'H12');
        out.push({ args, status: r.status, stdout: norm(r.stdout), stderr: norm(r.stderr) });
      };
      step(['session', 'pre']);
      fs.writeFileSync(path.join(root, 'b.txt'), 'b\n');
      step(['session', 'post', '--json', '--no-store']);
      step(['session', 'post', '--no-store']); // already finished: ERR_ITERATION_FINISHED
      step(['session', 'pre', '--json', '--iteration-dir', 'it']);
      step(['session', 'post', '--iteration-dir', 'it', '--store', 'file:.cairn/store', '--session', 'lane']);
      step(['session', 'pre', '--root', 'missing']);
      return out;
    };
    const lane = run2(CLI);
    expect(lane).toEqual(run2(FULL));
    expect(lane.map((r) => (r as { status: number }).status)).toEqual([0, 0, 3, 0, 0, 2]);
  });
});
