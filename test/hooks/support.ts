import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli.js';

export const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'hooks');

/** A documented payload, with the fields a test must point at its own project replaced. */
export function payload(agent: string, event: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  const doc = JSON.parse(fs.readFileSync(path.join(FIXTURES, agent, `${event}.json`), 'utf8')) as Record<string, unknown>;
  return { ...doc, ...patch };
}

export interface HookRun {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs the hook command exactly as the agent would: the settings' command string through a shell, the payload on stdin. */
export function runHookCommand(command: string, input: string, cwd: string, env: NodeJS.ProcessEnv = {}): HookRun {
  const r = spawnSync('/bin/sh', ['-c', command], { cwd, input, encoding: 'utf8', env: { ...process.env, CI: '1', CAIRN_STORE: '', ...env }, timeout: 60_000 });
  if (r.error) throw r.error;
  return { status: r.status ?? 128, stdout: r.stdout, stderr: r.stderr };
}

export function runHookCommandAsync(command: string, input: string, cwd: string, env: NodeJS.ProcessEnv = {}): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env: { ...process.env, CI: '1', CAIRN_STORE: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? 128, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** The hook command cairn wrote into a Claude-layout settings file for `event`. */
export function installedCommand(settingsFile: string, event: string): string {
  const doc = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as { hooks: Record<string, { hooks?: { command: string }[]; command?: string }[]> };
  const group = doc.hooks[event]!.at(-1)!;
  return group.hooks ? group.hooks.at(-1)!.command : group.command!;
}

/** History records of a store session, oldest first (file store). */
export function storedRecords(root: string, sessionId: string): { data: { iterationDir: string; diff: { filesAdded: string[]; filesModified: string[]; filesDeleted: string[]; commitCount: number }; post: { tests: { found: boolean; summary?: { passed?: number; failed?: number } } }; agent?: { name: string; sessionId: string; transcriptPath?: string } } }[] {
  const dir = path.join(root, '.cairn', 'store', sessionId, 'scopes', 'agent', 'iterations', 'snapshots', 'immutable_history');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as ReturnType<typeof storedRecords>[number]);
}

export function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}
