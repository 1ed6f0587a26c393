import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, runCli, type CliResult } from '../support/cli.js';

/** A fresh temp directory for one test; removed by `cleanup`. */
export function tempDir(prefix = 'cairn-stage-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function cleanup(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

export interface NoteArgs {
  root: string;
  task?: string;
  stage?: string;
  command?: string;
  capturedBy?: string;
  recommendedNext?: string;
  body?: string | Buffer;
  options?: string;
  capturedAt?: string;
  extra?: string[];
}

/** Full `stage write` flags for a note; the body (and options) are written to files under `root`'s parent. */
export function writeArgs(a: NoteArgs, scratch: string): string[] {
  const bodyFile = path.join(scratch, `body-${Math.random().toString(36).slice(2)}.md`);
  fs.writeFileSync(bodyFile, a.body ?? 'body text\n');
  const args = [
    'stage', 'write',
    '--root', a.root,
    '--task', a.task ?? 'TUNE-0254',
    '--stage', a.stage ?? 'plan',
    '--command', a.command ?? '/dr-plan',
    '--captured-by', a.capturedBy ?? 'agent',
    '--recommended-next', a.recommendedNext ?? '/dr-do',
    '--body-file', bodyFile,
  ];
  if (a.options !== undefined) {
    const optionsFile = path.join(scratch, `options-${Math.random().toString(36).slice(2)}.txt`);
    fs.writeFileSync(optionsFile, a.options);
    args.push('--options-file', optionsFile);
  }
  if (a.capturedAt !== undefined) args.push('--captured-at', a.capturedAt);
  return [...args, ...(a.extra ?? [])];
}

export function stageWrite(a: NoteArgs, scratch: string, env: NodeJS.ProcessEnv = {}): CliResult {
  return runCli(writeArgs(a, scratch), { env });
}

export function notePath(root: string, task = 'TUNE-0254'): string {
  return path.join(root, 'datarim', 'snapshots', `${task}.snapshot.md`);
}

/** The `key: value` lines of the frontmatter, as text. */
export function frontmatterLines(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const end = text.indexOf('\n---\n', 3);
  return text.slice(4, end).split('\n');
}

export interface AsyncRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `cairn …` without waiting; `done` resolves when it exits. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): { child: ReturnType<typeof spawn>; done: Promise<AsyncRun> } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, CI: '1', NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<AsyncRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Polls `check` every few milliseconds until it is true (or fails after `ms`). */
export async function waitFor(check: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
