// `cairn daemon` and its clients (src/cli/daemon/server.ts, client.ts), with real processes and real
// sockets: a command served by the daemon prints and writes what the same command in-process
// does; a client that the daemon cannot serve (killed -9 mid-call, a stale socket, another
// environment, a planted link) runs the command itself and still succeeds; nothing outside the
// project is reached. Bounded by work (commands, rounds), never by time.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, copyBuild, errorJson } from '../support/cli.js';
import { git, TEST_GIT_ENV } from '../support/git.js';

const temp: string[] = [];
const daemons = new Set<number>();
afterAll(() => {
  for (const pid of daemons) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of temp) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  temp.push(dir);
  return dir;
}

let home: string;
let template: string;
beforeAll(() => {
  home = tempDir('cairn-daemon-home-');
  template = tempDir('cairn-daemon-template-');
  for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(template, `f${i}.txt`), `file ${i}\n`);
  fs.mkdirSync(path.join(template, 'src'));
  fs.writeFileSync(path.join(template, 'src', 'main.ts'), 'export const x = 1;\n');
  // git ignores cairn's own directory, as in a project set up for it: in-process, the `git status`
  // started ahead of the library may or may not see a file cairn is writing there at that moment
  // (a temporary file, a hook lock), so without this neither run's record of .cairn is repeatable.
  fs.writeFileSync(path.join(template, '.gitignore'), '.cairn/\n');
  git(template, 'init', '-q', '-b', 'main');
  git(template, 'add', '-A');
  git(template, 'commit', '-q', '-m', 'init');
});

/** A copy of the template project (same commits, same files and times). */
function project(): string {
  const root = tempDir('cairn-daemon-p-');
  fs.cpSync(template, root, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
  return root;
}

/** The environment of every cairn process here (the daemon's and its clients'). */
function envFor(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...TEST_GIT_ENV, HOME: home, CI: '1', NO_COLOR: '1', CAIRN_STORE: '', ...extra };
}

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}
function cairn(root: string, args: string[], extra: NodeJS.ProcessEnv = {}, input?: string): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: root, env: envFor(extra), encoding: 'utf8', input, timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status ?? 128, stdout: r.stdout, stderr: r.stderr };
}
function cairnAsync(root: string, args: string[], extra: NodeJS.ProcessEnv = {}, bin = CLI): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: envFor(extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ status: code ?? 128, stdout, stderr })));
  return { child, done };
}

interface Status {
  running: boolean;
  watching?: boolean | null;
  pid?: number;
  served?: number;
  declined?: number;
}
function status(root: string, extra: NodeJS.ProcessEnv = {}): Status {
  const r = cairn(root, ['daemon', 'status', '--json'], extra);
  const s = JSON.parse(r.stdout) as Status;
  expect(r.status).toBe(s.running ? 0 : 1);
  return s;
}
function start(root: string, extra: NodeJS.ProcessEnv = {}): number {
  const r = cairn(root, ['daemon', 'start', '--json'], extra);
  expect(r.status, r.stderr).toBe(0);
  const pid = (JSON.parse(r.stdout) as { pid: number }).pid;
  daemons.add(pid);
  return pid;
}

/** What differs between two copies of one project and two runs of one command: its path and the clock. */
function normal(text: string, root: string): string {
  return text
    .split(root)
    .join('<root>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, '<time>')
    .replace(/duration: \S+/g, 'duration: <d>')
    .replace(/("duration(?:Ms)?\\?"\s*:\s*)[^,}]+/g, '$1<d>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
}

/** Every file under .cairn/iterations and the store, normalised (the daemon's socket aside). */
function records(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && /\.json$/.test(e.name)) out[path.relative(root, p)] = normal(fs.readFileSync(p, 'utf8'), root);
    }
  };
  walk(path.join(root, '.cairn', 'iterations'));
  return out;
}

/** The same edits in each copy: one turn's worth of changes, `round` apart. */
function edit(root: string, round: number): void {
  fs.appendFileSync(path.join(root, `f${round}.txt`), `edit ${round}\n`);
  fs.writeFileSync(path.join(root, `new-${round}.txt`), `new ${round}\n`);
  if (round % 2 === 1) fs.rmSync(path.join(root, `f${round + 10}.txt`));
}

describe('cairn daemon: same results as in-process', () => {
  it('serves session pre/post with the records, output and exit codes the in-process run gives', () => {
    const viaDaemon = project();
    const inProcess = project();
    start(viaDaemon);
    const runs: [Run, Run][] = [];
    for (let round = 0; round < 3; round++) {
      runs.push([cairn(viaDaemon, ['session', 'pre']), cairn(inProcess, ['session', 'pre'], { CAIRN_DAEMON: '0' })]);
      edit(viaDaemon, round);
      edit(inProcess, round);
      runs.push([cairn(viaDaemon, ['session', 'post', '--json']), cairn(inProcess, ['session', 'post', '--json'], { CAIRN_DAEMON: '0' })]);
    }
    // A refused command too: the iteration is already finished (exit 3, the same coded error).
    runs.push([cairn(viaDaemon, ['session', 'post']), cairn(inProcess, ['session', 'post'], { CAIRN_DAEMON: '0' })]);
    for (const [d, p] of runs) {
      expect(d.status).toBe(p.status);
      expect(normal(d.stdout, viaDaemon)).toBe(normal(p.stdout, inProcess));
      expect(normal(d.stderr, viaDaemon)).toBe(normal(p.stderr, inProcess));
    }
    expect(runs.at(-1)![0].status).toBe(3);
    expect(records(viaDaemon)).toEqual(records(inProcess));
    expect(Object.keys(records(viaDaemon))).toContain(path.join('.cairn', 'iterations', '003', 'post-snapshot.json'));
    // Every one of them was the daemon's (none fell back to in-process), and its captures had a
    // tree watcher (the watcher's thread module ships in the CLI bundle the daemon runs).
    expect(status(viaDaemon)).toMatchObject({ running: true, served: runs.length, declined: 0, watching: process.platform === 'linux' });
    expect(cairn(viaDaemon, ['daemon', 'stop']).status).toBe(0);
  });

  it('serves an agent hook turn as the hook in-process records it', () => {
    const event = (root: string, name: string): string => JSON.stringify({ session_id: 'daemon-test', transcript_path: path.join(root, 'none.jsonl'), cwd: root, hook_event_name: name, prompt: 'go' });
    const turn = (root: string, extra: NodeJS.ProcessEnv): Run[] => {
      const out: Run[] = [];
      for (let round = 0; round < 2; round++) {
        out.push(cairn(root, ['hook', 'claude-code'], extra, event(root, 'UserPromptSubmit')));
        edit(root, round);
        out.push(cairn(root, ['hook', 'claude-code'], extra, event(root, 'Stop')));
      }
      return out;
    };
    const viaDaemon = project();
    const inProcess = project();
    start(viaDaemon);
    const d = turn(viaDaemon, {});
    const p = turn(inProcess, { CAIRN_DAEMON: '0' });
    expect(d.map((r) => [r.status, normal(r.stdout, viaDaemon), normal(r.stderr, viaDaemon)])).toEqual(p.map((r) => [r.status, normal(r.stdout, inProcess), normal(r.stderr, inProcess)]));
    expect(records(viaDaemon)).toEqual(records(inProcess));
    expect(Object.keys(records(viaDaemon))).toContain(path.join('.cairn', 'iterations', '002', 'post-snapshot.json'));
    const log = (root: string): unknown[] =>
      fs.readFileSync(path.join(root, '.cairn', 'hooks', 'hook.log'), 'utf8').trim().split('\n').map((l) => {
        const e = JSON.parse(l) as Record<string, unknown>;
        return [e.event, e.did ?? e.level, e.iteration];
      });
    expect(log(viaDaemon)).toEqual(log(inProcess));
    expect(status(viaDaemon)).toMatchObject({ served: 4, declined: 0 });
    cairn(viaDaemon, ['daemon', 'stop']);
  });

  it('serves cairn snapshot with the bytes, file, summary and exit codes the in-process run gives', () => {
    const viaDaemon = project();
    const inProcess = project();
    start(viaDaemon);
    const snapshots = (root: string, extra: NodeJS.ProcessEnv): Run[] => {
      const out: Run[] = [];
      for (let round = 0; round < 2; round++) {
        out.push(cairn(root, ['snapshot', '--root', '.', '-o', 'snap.json'], extra)); // relative: resolved in the client's cwd
        out.push(cairn(root, ['snapshot', '--root', root], extra)); // the whole document on stdout
        edit(root, round);
      }
      out.push(cairn(root, ['snapshot', '--root', root, '--max-files', '3', '-o', path.join(root, 'cut.json')], extra)); // truncated: a notice on stderr
      out.push(cairn(root, ['snapshot', '--root', root, '-o', path.join(root, 'no-such-dir', 'snap.json')], extra)); // ERR_IO, exit 1
      return out;
    };
    const d = snapshots(viaDaemon, {});
    const p = snapshots(inProcess, { CAIRN_DAEMON: '0' });
    expect(d.map((r) => r.status)).toEqual([0, 0, 0, 0, 0, 1]);
    // The write's temporary name carries the writing process's id and a random tail.
    const shown = (r: Run, root: string): [number, string, string] => [r.status, normal(r.stdout, root), normal(r.stderr, root).replace(/\.cairn-tmp-\d+-[0-9a-f]+/g, '.cairn-tmp-<n>')];
    expect(d.map((r) => shown(r, viaDaemon))).toEqual(p.map((r) => shown(r, inProcess)));
    expect(d[4]!.stderr).toMatch(/snapshot truncated at --max-files 3/);
    for (const file of ['snap.json', 'cut.json']) expect(fs.readFileSync(path.join(viaDaemon, file), 'utf8')).toBe(fs.readFileSync(path.join(inProcess, file), 'utf8'));
    // Every one of them was the daemon's (none fell back to in-process).
    expect(status(viaDaemon)).toMatchObject({ served: d.length, declined: 0 });
    cairn(viaDaemon, ['daemon', 'stop']);
  });

  it('leaves a snapshot written into a FIFO to the client: the pipe gets the document and stays a pipe', async () => {
    const root = project();
    start(root);
    const fifo = path.join(tempDir('cairn-daemon-fifo-'), 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // The executable (its daemon lane) and the full CLI (dist/bin/main.mjs run as the process).
    for (const bin of [CLI, path.join(path.dirname(CLI), 'main.mjs')]) {
      const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
      let read = '';
      reader.stdout.on('data', (c: Buffer) => (read += c.toString()));
      const readerDone = new Promise<void>((resolve) => reader.on('close', () => resolve()));
      const r = await cairnAsync(root, ['snapshot', '--root', root, '-o', fifo], {}, bin).done;
      await readerDone;
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(read)).toMatchObject({ snapshotDigest: (JSON.parse(r.stdout) as { snapshotDigest: string }).snapshotDigest });
      expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    }
    // The daemon served neither: it would have opened the pipe as its own process.
    expect(status(root)).toMatchObject({ served: 0 });
    cairn(root, ['daemon', 'stop']);
  });

  it('answers a snapshot before the scanner\'s bundle loads: a build without that bundle still prints the served snapshot', () => {
    // A copy of the build inside the package (its dependencies resolve as the build's do), minus the snapshot lane.
    const { bin, remove } = copyBuild('cairn-without-snapshot-lane-');
    fs.rmSync(path.join(bin, 'snapshot-lane.js'));
    try {
      const root = project();
      const run = (args: string[], extra: NodeJS.ProcessEnv = {}): Run => {
        const r = spawnSync(process.execPath, [path.join(bin, 'cairn.js'), ...args], { cwd: root, env: envFor(extra), encoding: 'utf8', timeout: 120_000 });
        return { status: r.status ?? 128, stdout: r.stdout, stderr: r.stderr };
      };
      const started = run(['daemon', 'start', '--json']);
      expect(started.status, started.stderr).toBe(0);
      daemons.add((JSON.parse(started.stdout) as { pid: number }).pid);
      const inProcess = cairn(root, ['snapshot', '--root', root], { CAIRN_DAEMON: '0' });
      for (let round = 0; round < 2; round++) expect(run(['snapshot', '--root', root]), `round ${round}`).toEqual(inProcess);
      // Non-vacuous: in-process, this build has no scanner to run.
      expect(run(['snapshot', '--root', root], { CAIRN_DAEMON: '0' }).status).not.toBe(0);
      run(['daemon', 'stop']);
    } finally {
      remove();
    }
  });

  it('a snapshot through the daemon sees every change made between calls, its watcher vouching for the rest', () => {
    const root = project();
    start(root);
    const digest = (r: Run): string => (JSON.parse(r.stdout) as { snapshotDigest: string }).snapshotDigest;
    const changes: ((round: number) => void)[] = [
      (n) => fs.writeFileSync(path.join(root, 'src', 'main.ts'), `export const x = ${n % 10};\n`), // same size, same directory listing
      (n) => fs.mkdirSync(path.join(root, `dir${n}`, 'deep'), { recursive: true }),
      (n) => fs.writeFileSync(path.join(root, `dir${n - 1}`, 'deep', 'added.txt'), `added ${n}\n`),
      (n) => fs.renameSync(path.join(root, `dir${n - 2}`), path.join(root, `moved${n}`)),
      (n) => fs.rmSync(path.join(root, `f${n % 40}.txt`)),
      () => {}, // nothing changed: the watcher's answer alone
    ];
    for (let round = 0; round < 12; round++) {
      const served = cairn(root, ['snapshot', '--root', root, '-o', path.join(root, '.cairn', 'snap.json')]);
      // The reference: in-process, no cache at all (a walk of everything).
      const walked = cairn(root, ['snapshot', '--root', root, '--no-cache'], { CAIRN_DAEMON: '0' });
      expect(served.status, served.stderr).toBe(0);
      expect(digest(served)).toBe((JSON.parse(walked.stdout) as { snapshotDigest: string }).snapshotDigest);
      // Truncated: the count of what was left out (a scan with a cache and a watcher of its own) too.
      const cut = cairn(root, ['snapshot', '--root', root, '--max-files', '20', '-o', path.join(root, '.cairn', 'cut.json')]);
      const cutWalked = cairn(root, ['snapshot', '--root', root, '--max-files', '20', '--no-cache'], { CAIRN_DAEMON: '0' });
      expect(digest(cut)).toBe((JSON.parse(cutWalked.stdout) as { snapshotDigest: string }).snapshotDigest);
      expect(cut.stderr).toMatch(/left out/);
      expect(cut.stderr).toBe(cutWalked.stderr);
      changes[round % changes.length]!(round);
    }
    expect(status(root)).toMatchObject({ served: 24, declined: 0 });
    cairn(root, ['daemon', 'stop']);
  });

  it('declines a client with another environment, which then runs in-process', () => {
    const root = project();
    start(root);
    const r = cairn(root, ['session', 'pre'], { XDG_CACHE_HOME: path.join(home, 'other-cache') });
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations', '001', 'pre-snapshot.json'))).toBe(true);
    expect(status(root)).toMatchObject({ served: 0, declined: 1 });
    cairn(root, ['daemon', 'stop']);
  });

  it('answers two clients at once, one after the other', async () => {
    const root = project();
    start(root);
    const [a, b] = await Promise.all([cairnAsync(root, ['session', 'pre']).done, cairnAsync(root, ['session', 'pre']).done]);
    expect([a.status, b.status]).toEqual([0, 0]);
    expect(new Set([a.stdout.trim(), b.stdout.trim()])).toEqual(new Set([path.join(root, '.cairn', 'iterations', '001'), path.join(root, '.cairn', 'iterations', '002')]));
    expect(status(root)).toMatchObject({ served: 2 });
    cairn(root, ['daemon', 'stop']);
  });
});

describe('cairn daemon: a daemon that dies, a stale socket', () => {
  it('a client whose daemon is killed -9 mid-call still succeeds, in-process; start then replaces the stale socket', async () => {
    const root = project();
    const pid = start(root);
    process.kill(pid, 'SIGSTOP'); // it accepts connections but answers nothing
    const client = cairnAsync(root, ['session', 'pre']);
    // Wait (bounded by tries) until the client holds a socket: it is then connected and waiting.
    for (let i = 0; i < 2000; i++) {
      const fds = fs.readdirSync(`/proc/${client.child.pid}/fd`).map((fd) => {
        try {
          return fs.readlinkSync(`/proc/${client.child.pid}/fd/${fd}`);
        } catch {
          return '';
        }
      });
      if (fds.some((l) => l.startsWith('socket:'))) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    process.kill(pid, 'SIGKILL');
    daemons.delete(pid);
    const r = await client.done;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(path.join(root, '.cairn', 'iterations', '001'));
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations', '001', 'pre-snapshot.json'))).toBe(true);

    // The dead daemon's socket stays: clients are refused at once and run in-process.
    expect(fs.lstatSync(path.join(root, '.cairn', 'daemon.sock')).isSocket()).toBe(true);
    expect(status(root)).toEqual({ running: false, root });
    const post = cairn(root, ['session', 'post', '--no-store']);
    expect(post.status, post.stderr).toBe(0);
    expect(post.stdout).toContain('Iteration .cairn/iterations/001');

    const again = cairn(root, ['daemon', 'start']);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^cairn daemon: started for /);
    const s = status(root);
    daemons.add(s.pid!);
    expect(s).toMatchObject({ running: true, served: 0 });
    expect(cairn(root, ['session', 'pre']).status).toBe(0);
    expect(status(root)).toMatchObject({ served: 1 });
    cairn(root, ['daemon', 'stop']);
  });
});

describe('the executable: CommonJS until a command runs in-process', () => {
  const event = (root: string, name: string): string => JSON.stringify({ session_id: 'daemon-cjs', transcript_path: path.join(root, 'none.jsonl'), cwd: root, hook_event_name: name, prompt: 'go' });

  it('serves pre, post, a hook turn and a snapshot with none of the bundle\'s ES module lanes, and on Node 20 without Node\'s ES module loader', () => {
    // A copy of the build inside the package (its dependencies resolve as the build's do); its
    // daemon starts whole, then the ES module entries a client could load are removed.
    const { bin, remove } = copyBuild('cairn-commonjs-client-');
    try {
      const root = project();
      const exe = path.join(bin, 'cairn.js');
      // Records at exit whether Node's ES module loader ran. Node 20 loads it only for an ES
      // module; later lines load it at start-up (for require of ES modules), so only 20 can tell.
      const probe = path.join(tempDir('cairn-probe-'), 'probe.cjs');
      const esmLog = `${probe}.log`;
      fs.writeFileSync(probe, `process.on('exit', () => require('node:fs').appendFileSync(${JSON.stringify(esmLog)}, String(process.moduleLoadList.includes('NativeModule internal/modules/esm/module_job')) + '\\n'));\n`);
      const run = (args: string[], extra: NodeJS.ProcessEnv = {}, input?: string): Run => {
        const r = spawnSync(process.execPath, ['-r', probe, exe, ...args], { cwd: root, env: envFor(extra), encoding: 'utf8', input, timeout: 120_000 });
        return { status: r.status ?? 128, stdout: r.stdout, stderr: r.stderr };
      };
      const started = spawnSync(process.execPath, [exe, 'daemon', 'start', '--json'], { cwd: root, env: envFor(), encoding: 'utf8', timeout: 120_000 });
      expect(started.status, started.stderr).toBe(0);
      daemons.add((JSON.parse(started.stdout) as { pid: number }).pid);
      for (const lane of ['main.mjs', 'session-lane.js', 'hook-lane.js', 'snapshot-lane.js']) fs.rmSync(path.join(bin, lane));

      const served = [
        run(['session', 'pre']),
        run(['session', 'post', '--json']),
        run(['hook', 'claude-code'], {}, event(root, 'UserPromptSubmit')),
        run(['hook', 'claude-code'], {}, event(root, 'Stop')),
        run(['snapshot', '--root', root]),
      ];
      for (const r of served) expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(served[1]!.stdout)).toHaveProperty('iterationDir', path.join(root, '.cairn', 'iterations', '001'));
      expect(JSON.parse(served[4]!.stdout)).toHaveProperty('snapshotDigest');
      expect(status(root)).toMatchObject({ served: 5, declined: 0 });
      const loaderRan = fs.readFileSync(esmLog, 'utf8').trim().split('\n');
      expect(loaderRan).toHaveLength(5);
      if (process.versions.node.startsWith('20.')) expect(loaderRan).toEqual(Array(5).fill('false'));
      // Non-vacuous: in-process, this build lacks the lanes the commands need.
      expect(run(['session', 'pre'], { CAIRN_DAEMON: '0' }).status).not.toBe(0);
      cairn(root, ['daemon', 'stop']);
    } finally {
      remove();
    }
  });

  it('runs every lane in-process, as with no daemon, at a stale socket and under CAIRN_DAEMON=0 beside a running daemon', () => {
    const turn = (root: string, extra: NodeJS.ProcessEnv = {}): [number, string, string][] =>
      [
        cairn(root, ['session', 'pre'], extra),
        cairn(root, ['session', 'post', '--json', '--no-store'], extra),
        cairn(root, ['hook', 'claude-code'], extra, event(root, 'UserPromptSubmit')),
        cairn(root, ['hook', 'claude-code'], extra, event(root, 'Stop')),
        cairn(root, ['snapshot', '--root', '.'], extra),
      ].map((r) => [r.status, normal(r.stdout, root), normal(r.stderr, root)]);
    const none = project();
    const stale = project();
    const off = project();
    fs.mkdirSync(path.join(stale, '.cairn'));
    // The socket a daemon killed -9 leaves: nothing listens on it.
    const left = spawnSync(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path.join(stale, '.cairn', 'daemon.sock'))}, () => process.exit(0))`]);
    expect(left.status).toBe(0);
    start(off);

    const expected = turn(none);
    expect(expected.map((r) => r[0])).toEqual([0, 0, 0, 0, 0]);
    expect(turn(stale)).toEqual(expected);
    expect(fs.lstatSync(path.join(stale, '.cairn', 'daemon.sock')).isSocket()).toBe(true);
    expect(turn(off, { CAIRN_DAEMON: '0' })).toEqual(expected);
    expect(status(off)).toMatchObject({ served: 0, declined: 0 });
    cairn(off, ['daemon', 'stop']);
  });
});

describe('cairn daemon: planted links', () => {
  /** A listening socket outside the project that counts the connections it gets. */
  async function outsideSocket(): Promise<{ path: string; connections: () => number; close: () => void }> {
    const dir = tempDir('cairn-daemon-outside-');
    const p = path.join(dir, 'trap.sock');
    let n = 0;
    const server = net.createServer((s) => {
      n++;
      s.destroy();
    });
    await new Promise<void>((resolve) => server.listen(p, resolve));
    return { path: p, connections: () => n, close: () => server.close() };
  }

  it('a link at the socket path is never connected to, and start refuses it and leaves it', async () => {
    const trap = await outsideSocket();
    const root = project();
    fs.mkdirSync(path.join(root, '.cairn'));
    fs.symlinkSync(trap.path, path.join(root, '.cairn', 'daemon.sock'));
    const pre = cairn(root, ['session', 'pre']);
    expect(pre.status, pre.stderr).toBe(0);
    expect(cairn(root, ['daemon', 'status']).status).toBe(1);
    const s = cairn(root, ['daemon', 'start']);
    expect(s.status).toBe(1);
    expect(errorJson(s.stderr).code).toBe('ERR_CONTAINMENT');
    expect(fs.readlinkSync(path.join(root, '.cairn', 'daemon.sock'))).toBe(trap.path);
    expect(fs.lstatSync(trap.path).isSocket()).toBe(true);
    expect(trap.connections()).toBe(0);
    trap.close();
  });

  it('a link at .cairn is refused by start, and no client connects through it', async () => {
    const trap = await outsideSocket();
    const root = project();
    fs.renameSync(trap.path, path.join(path.dirname(trap.path), 'daemon.sock'));
    fs.symlinkSync(path.dirname(trap.path), path.join(root, '.cairn'));
    const before = fs.readdirSync(path.dirname(trap.path)).sort();
    const s = cairn(root, ['daemon', 'start']);
    expect(s.status).toBe(1);
    expect(errorJson(s.stderr).code).toBe('ERR_CONTAINMENT');
    const pre = cairn(root, ['session', 'pre']);
    expect(pre.status).not.toBe(0); // in-process, which refuses the link itself (reading the config through it first)
    expect(['ERR_CONFIG', 'ERR_CONTAINMENT']).toContain(errorJson(pre.stderr).code);
    expect(fs.readdirSync(path.dirname(trap.path)).sort()).toEqual(before);
    expect(trap.connections()).toBe(0);
    trap.close();
  });
});

describe('cairn daemon start|stop|status', () => {
  it('say what runs, with the documented exit codes', () => {
    const root = project();
    const none = cairn(root, ['daemon', 'status']);
    expect(none).toMatchObject({ status: 1, stdout: `cairn daemon: not running for ${root}\n` });
    const first = cairn(root, ['daemon', 'start']);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^cairn daemon: started for ${root} \\(pid (\\d+), since .+, served 0, declined 0\\)\\n$`));
    const pid = Number(/pid (\d+)/.exec(first.stdout)![1]);
    daemons.add(pid);
    const second = cairn(root, ['daemon', 'start', '--json']);
    expect(second.status).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ running: true, started: false, pid, root });
    const st = cairn(root, ['daemon', 'status', '--json']);
    expect(st.status).toBe(0);
    expect(JSON.parse(st.stdout)).toMatchObject({ running: true, pid, root, served: 0, declined: 0 });
    expect(fs.statSync(path.join(root, '.cairn', 'daemon.sock')).mode & 0o777).toBe(0o600);
    const stop = cairn(root, ['daemon', 'stop']);
    expect(stop).toMatchObject({ status: 0, stdout: `cairn daemon: stopped (pid ${pid})\n` });
    expect(fs.existsSync(path.join(root, '.cairn', 'daemon.sock'))).toBe(false);
    expect(cairn(root, ['daemon', 'stop', '--json'])).toMatchObject({ status: 0, stdout: `${JSON.stringify({ stopped: false, pid: null }, null, 2)}\n` });
    expect(cairn(root, ['daemon', 'status']).status).toBe(1);
  });

  it('ends by itself when the project\'s .cairn is removed', async () => {
    const root = project();
    const pid = start(root);
    fs.rmSync(path.join(root, '.cairn'), { recursive: true, force: true });
    // Bounded by tries: the daemon checks .cairn every two seconds.
    let alive = true;
    for (let i = 0; i < 1000 && alive; i++) {
      await new Promise((r) => setTimeout(r, 20));
      // Gone, or a zombie nobody reaped yet (its parent, `daemon start`, has exited).
      const stat = fs.existsSync(`/proc/${pid}/stat`) ? fs.readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
      alive = stat !== '' && !/^\d+ \(.*\) [ZX]/.test(stat);
    }
    expect(alive).toBe(false);
    daemons.delete(pid);
  });
});
