import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { CLI, runCli } from '../support/cli.js';
import { UPSTREAM_TRUNCATION_MARKER, readStageSnapshot, validateStageSnapshot, writeStageSnapshot } from '../../src/stage/index.js';
import { cleanup, notePath, tempDir } from './support.js';

let root: string;
const task = 'TUNE-0254';

beforeEach(async () => {
  root = tempDir();
  await writeStageSnapshot({ root, task, stage: 'plan', command: '/dr-plan', capturedBy: 'agent', recommendedNext: '/dr-do', body: 'Summary\n**рекомендуется** /dr-do\n', options: ['/dr-do TUNE-0254 | execute'] });
});
afterEach(() => cleanup(root));

function check(args: string[]): { status: number; stdout: string; stderr: string } {
  return runCli(['stage', 'check', '--task', task, '--root', root, ...args]);
}

/** Rewrites the note with `edit` applied to its text, keeping size_bytes true unless told not to. */
function editNote(edit: (text: string) => string): void {
  fs.writeFileSync(notePath(root), edit(fs.readFileSync(notePath(root), 'utf8')));
}

/** A note as the upstream shell writer lays it out: unquoted options, its own marker. */
function upstreamNote(body: string, truncated: boolean): string {
  const render = (n: number): string =>
    `---\ntask_id: ${task}\nartifact: stage-snapshot\nschema_version: 1\nstage: do\ncommand: /dr-do\ncaptured_at: 2026-05-21T13:45:00Z\n` +
    `captured_by: agent\nrecommended_next: /dr-qa\noptions:\n  - /dr-qa ${task} | verify\nsize_bytes: ${n}\ntruncated: ${truncated}\n---\n\n${body}`;
  let n = 0;
  while (Buffer.byteLength(render(n)) !== n) n = Buffer.byteLength(render(n));
  return render(n);
}

describe('cairn stage check (upstream frontmatter-schema and symlink-rejection suites)', () => {
  it('a well-formed note is valid in both modes (exit 0)', () => {
    expect(check([]).status).toBe(0);
    const r = check(['--validate-frontmatter']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('valid');
  });

  for (const field of ['task_id', 'stage', 'recommended_next']) {
    it(`removing the ${field} line makes it invalid (exit 2)`, () => {
      editNote((t) => t.replace(new RegExp(`^${field}: .*\\n`, 'm'), ''));
      const r = check(['--validate-frontmatter']);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`field ${field} is missing`);
    });
  }

  it('a missing note exits 1', () => {
    fs.unlinkSync(notePath(root));
    expect(check([]).status).toBe(1);
    expect(check(['--validate-frontmatter']).status).toBe(1);
  });

  it('a symlinked note (even to a valid file) exits 2 in both modes; a regular file exits 0', () => {
    const real = path.join(root, 'elsewhere.md');
    fs.renameSync(notePath(root), real);
    fs.symlinkSync(real, notePath(root));
    expect(check([]).status).toBe(2);
    const r = check(['--validate-frontmatter']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('symlink');
    fs.unlinkSync(notePath(root));
    fs.renameSync(real, notePath(root));
    expect(check([]).status).toBe(0);
  });

  it('a dangling symlink is refused as a symlink (exit 2), not reported missing', () => {
    fs.unlinkSync(notePath(root));
    fs.symlinkSync(path.join(root, 'nowhere'), notePath(root));
    expect(check([]).status).toBe(2);
  });

  it('a malformed task id is invalid (exit 2) and nothing outside the root is looked at', () => {
    const r = runCli(['stage', 'check', '--task', '../../etc', '--root', root]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('invalid TASK-ID');
  });

  it('size_bytes that disagrees with the real size is invalid', () => {
    editNote((t) => `${t}extra`);
    expect(check([]).status).toBe(0); // presence mode does not look at the fields
    const r = check(['--validate-frontmatter']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('size_bytes says');
  });

  it('a note the writer made passes its check, also when its body quotes the truncation marker at its end', async () => {
    for (const marker of ['<!-- snapshot-truncated, full response in session jsonl -->', UPSTREAM_TRUNCATION_MARKER]) {
      const body = `quoting the writer:\n${marker}\n`;
      const written = await writeStageSnapshot({ root, task, stage: 'plan', command: '/dr-plan', capturedBy: 'agent', recommendedNext: '/dr-do', body });
      expect(written.truncated).toBe(false);
      expect(readStageSnapshot(root, task).body).toBe(body); // copied byte for byte: it fits
      const r = check(['--validate-frontmatter']);
      expect(r.status, r.stderr).toBe(0);
    }
  });

  it('truncated: true over a body without the marker is invalid', () => {
    editNote((t) => t.replace('truncated: false', 'truncated: true'));
    const r = check(['--validate-frontmatter']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('truncated is true but the body does not end with the truncation marker');
  });

  it('a note with duplicated keys (an injection attempt) is invalid', () => {
    editNote((t) => t.replace('stage: plan\n', 'stage: plan\nstage: do\n'));
    expect(check(['--validate-frontmatter']).status).toBe(2);
  });

  it('a file without frontmatter is invalid even in presence mode', () => {
    fs.writeFileSync(notePath(root), 'just text\n');
    expect(check([]).status).toBe(2);
  });

  it('notes written by the upstream shell writer (its marker, unquoted options) validate', () => {
    fs.writeFileSync(notePath(root), upstreamNote(`cut body\n${UPSTREAM_TRUNCATION_MARKER}\n`, true));
    expect(check(['--validate-frontmatter']).status).toBe(0);
    fs.writeFileSync(notePath(root), upstreamNote('whole body\n', false));
    expect(check(['--validate-frontmatter']).status).toBe(0);
  });

  it('--json prints the check result as one document', () => {
    const r = check(['--validate-frontmatter', '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ task_id: task, path: fs.realpathSync(notePath(root)), status: 'valid', exitCode: 0, problems: [] });
  });

  it('--root defaults to the working directory', () => {
    const r = runCli(['stage', 'check', '--task', task, '--validate-frontmatter'], { cwd: root });
    expect(r.status).toBe(0);
  });

  it('the library gives the same verdicts', () => {
    expect(validateStageSnapshot(root, task, { validateFrontmatter: true }).exitCode).toBe(0);
    expect(validateStageSnapshot(root, 'TUNE-0001').status).toBe('missing');
    expect(validateStageSnapshot(root, 'nope').status).toBe('invalid');
  });
});

describe('cairn stage show', () => {
  it('prints the body', () => {
    const r = runCli(['stage', 'show', task, '--root', root]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('Summary\n**рекомендуется** /dr-do\n');
  });

  it('--json prints {task_id, path, frontmatter, body}', () => {
    const r = runCli(['stage', 'show', task, '--root', root, '--json']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['task_id', 'path', 'frontmatter', 'body']);
    expect(out).toMatchObject({ task_id: task, path: fs.realpathSync(notePath(root)), body: 'Summary\n**рекомендуется** /dr-do\n' });
    expect(out.frontmatter).toMatchObject({ stage: 'plan', options: ['/dr-do TUNE-0254 | execute'], truncated: false });
  });

  it('a missing note exits 1, a bad id 2, a symlink 2', () => {
    expect(runCli(['stage', 'show', 'TUNE-0001', '--root', root]).status).toBe(1);
    expect(runCli(['stage', 'show', 'tune-1', '--root', root]).status).toBe(2);
    const real = path.join(root, 'x.md');
    fs.renameSync(notePath(root), real);
    fs.symlinkSync(real, notePath(root));
    const r = runCli(['stage', 'show', task, '--root', root]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('ERR_SYMLINK');
  });

  it('readStageSnapshot returns the same envelope', () => {
    const note = readStageSnapshot(root, task);
    expect(note.task_id).toBe(task);
    expect(note.frontmatter.size_bytes).toBe(fs.statSync(notePath(root)).size);
    expect(() => readStageSnapshot(root, 'TUNE-0002')).toThrow(expect.objectContaining({ code: 'ERR_NOT_FOUND', exitCode: 1 }) as Error);
  });
});

describe('cairn stage show with a body that is not UTF-8', () => {
  it('prints the body bytes verbatim', async () => {
    // The writer refuses such a body, so it is planted by hand over a valid note's body of equal length.
    const body = Buffer.from([0x61, 0xff, 0x0a, 0xc3, 0x28]);
    await writeStageSnapshot({ root, task: 'TUNE-0003', stage: 'qa', command: '/dr-qa', capturedBy: 'agent', recommendedNext: '/dr-do', body: 'xxxxx' });
    const file = notePath(root, 'TUNE-0003');
    const note = fs.readFileSync(file);
    fs.writeFileSync(file, Buffer.concat([note.subarray(0, note.length - body.length), body]));
    const r = spawnSync(process.execPath, [CLI, 'stage', 'show', 'TUNE-0003', '--root', root]);
    expect(r.status).toBe(0);
    expect(Buffer.from(r.stdout).equals(body)).toBe(true);
  });
});

describe('cairn stage check --self-test (the upstream validator\'s self-test mode)', () => {
  it('--self-test exits 0 and says ok, without --task and without touching the working directory', () => {
    const before = fs.readdirSync(root).sort();
    const r = runCli(['stage', 'check', '--self-test'], { cwd: root });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('self-test: ok');
    expect(fs.readdirSync(root).sort()).toEqual(before);
  });

  it('--self-test --json prints {ok: true, problems: []}', () => {
    const r = runCli(['stage', 'check', '--self-test', '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, problems: [] });
  });

  it('without --task and without --self-test it is a usage error (exit 2) naming --task', () => {
    const r = runCli(['stage', 'check']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--task');
  });
});
