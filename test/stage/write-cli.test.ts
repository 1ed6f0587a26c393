import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCli } from '../support/cli.js';
import { TRUNCATION_MARKER } from '../../src/stage/index.js';
import { cleanup, frontmatterLines, notePath, stageWrite, tempDir, writeArgs } from './support.js';

// The upstream bats suites (overwrite, size cap, UTF-8 truncation, id regex, e2e, auto stage,
// CTA integration), reproduced against the real `cairn stage write` process.

let scratch: string;
let root: string;

beforeEach(() => {
  scratch = tempDir();
  root = path.join(scratch, 'fake-repo');
  fs.mkdirSync(path.join(root, 'datarim'), { recursive: true });
});
afterEach(() => cleanup(scratch));

function isValidUtf8(b: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
}

/** size_bytes as declared in the file, and the real size. */
function sizes(file: string): { declared: number; actual: number } {
  const line = frontmatterLines(file).find((l) => l.startsWith('size_bytes: ')) ?? '';
  return { declared: Number(line.slice('size_bytes: '.length)), actual: fs.statSync(file).size };
}

describe('overwrite semantics (upstream stage-snapshot-writer-overwrite)', () => {
  it('a first write exits 0 and writes every frontmatter field and the body', () => {
    const r = stageWrite({ root, body: 'Plan summary: ship it\n' }, scratch);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const file = notePath(root);
    expect(r.stdout.trim()).toBe(fs.realpathSync(file));
    const lines = frontmatterLines(file);
    for (const l of ['task_id: TUNE-0254', 'artifact: stage-snapshot', 'schema_version: 1', 'stage: plan', 'command: /dr-plan', 'captured_by: agent', 'recommended_next: /dr-do', 'truncated: false']) {
      expect(lines).toContain(l);
    }
    expect(fs.readFileSync(file, 'utf8')).toContain('Plan summary: ship it');
  });

  it('a second write replaces the whole file: new body, stage and command, old body gone', () => {
    expect(stageWrite({ root, body: 'OLD BODY\n' }, scratch).status).toBe(0);
    expect(stageWrite({ root, stage: 'do', command: '/dr-do', body: 'NEW BODY\n' }, scratch).status).toBe(0);
    const text = fs.readFileSync(notePath(root), 'utf8');
    expect(text).toContain('NEW BODY');
    expect(text).not.toContain('OLD BODY');
    expect(frontmatterLines(notePath(root))).toEqual(expect.arrayContaining(['stage: do', 'command: /dr-do']));
  });

  it('a 20 KB body gives a file of at most 8192 bytes with the marker and truncated: true', () => {
    expect(stageWrite({ root, body: 'x'.repeat(20_000) }, scratch).status).toBe(0);
    const text = fs.readFileSync(notePath(root), 'utf8');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8192);
    expect(text).toContain('snapshot-truncated');
    expect(text.endsWith(`\n${TRUNCATION_MARKER}\n`)).toBe(true);
    expect(frontmatterLines(notePath(root))).toContain('truncated: true');
  });

  it('TASK-ID ../etc/passwd exits 1 and creates nothing', () => {
    const r = stageWrite({ root, task: '../etc/passwd' }, scratch);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('invalid TASK-ID');
    expect(fs.existsSync(path.join(root, 'datarim', 'snapshots'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'etc'))).toBe(false);
  });

  it('only --root, --task and --stage given: exit 2', () => {
    const r = runCli(['stage', 'write', '--root', root, '--task', 'TUNE-0254', '--stage', 'plan']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('missing required flag(s): --command --captured-by --recommended-next --body-file');
  });

  it('DATARIM_DISABLE_SNAPSHOT=1 exits 0 and writes nothing, even with garbage arguments', () => {
    expect(stageWrite({ root }, scratch, { DATARIM_DISABLE_SNAPSHOT: '1' }).status).toBe(0);
    expect(fs.existsSync(notePath(root))).toBe(false);
    const garbage = runCli(['stage', 'write', '--nonsense', '--task'], { env: { DATARIM_DISABLE_SNAPSHOT: '1' } });
    expect(garbage.status).toBe(0);
    expect(garbage.stdout + garbage.stderr).toBe('');
  });

  it('DATARIM_DISABLE_SNAPSHOT=1 with --json still prints one JSON document saying nothing was written', () => {
    const r = runCli([...writeArgs({ root }, scratch), '--json'], { env: { DATARIM_DISABLE_SNAPSHOT: '1' } });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, disabled: true, path: '', sizeBytes: 0, truncated: false });
    expect(fs.existsSync(notePath(root))).toBe(false);
  });

  it('only the exact value "1" disables the writer', () => {
    for (const value of ['true', 'yes', '0', '']) {
      expect(stageWrite({ root, body: value }, scratch, { DATARIM_DISABLE_SNAPSHOT: value }).status).toBe(0);
      expect(fs.readFileSync(notePath(root), 'utf8').endsWith(`\n\n${value}`)).toBe(true);
    }
  });

  it('missing --body-file: exit 2 naming the flag, followed by the usage', () => {
    const args = writeArgs({ root }, scratch);
    const i = args.indexOf('--body-file');
    args.splice(i, 2);
    const r = runCli(args);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('cairn stage write: missing required flag(s): --body-file');
    expect(r.stderr).toContain('Usage: cairn stage write');
    // Upstream's own test (bats overwrite #7) looks for the writer's name in the usage.
    expect(r.stderr).toContain('Usage: write_stage_snapshot');
    expect(fs.existsSync(notePath(root))).toBe(false);
  });

  it('only --root and --task given: all five missing flags are named in the seed order', () => {
    const r = runCli(['stage', 'write', '--root', root, '--task', 'TUNE-0254']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('missing required flag(s): --stage --command --captured-by --recommended-next --body-file');
  });

  it('no flags at all: all seven required flags are named', () => {
    const r = runCli(['stage', 'write']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('missing required flag(s): --root --task --stage --command --captured-by --recommended-next --body-file');
  });

  it('full flags: exit 0 and no missing-flag message', () => {
    const r = stageWrite({ root }, scratch);
    expect(r.status).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('missing required flag(s)');
  });

  it('the note is mode 600 and the snapshots dir mode 700', () => {
    expect(stageWrite({ root }, scratch).status).toBe(0);
    expect(fs.statSync(notePath(root)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(notePath(root))).mode & 0o777).toBe(0o700);
  });
});

describe('argument grammar', () => {
  it('an unknown flag exits 2 with "unknown arg"', () => {
    const r = runCli([...writeArgs({ root }, scratch), '--bogus', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown arg: --bogus');
  });

  it('a flag given last without a value exits 2 (usage), not a crash', () => {
    const r = runCli([...writeArgs({ root }, scratch), '--captured-at']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('missing value for --captured-at');
  });

  it('a stray positional argument exits 2', () => {
    expect(runCli([...writeArgs({ root }, scratch), 'extra']).status).toBe(2);
  });

  it('--help prints the usage on stdout and exits 0', () => {
    for (const flag of ['--help', '-h']) {
      const r = runCli(['stage', 'write', flag]);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('Usage: cairn stage write --root <dir> --task <TASK-ID>');
      expect(r.stdout).toContain('DR_SNAPSHOT_LOCK_TIMEOUT');
    }
  });

  it('a value that looks like a flag is taken as the value, and --flag=value works', () => {
    const args = writeArgs({ root, recommendedNext: '--weird' }, scratch);
    expect(runCli(args).status).toBe(0);
    expect(frontmatterLines(notePath(root))).toContain('recommended_next: "--weird"');
    // cairn's own -V/--help must not swallow a value either
    const r = runCli(writeArgs({ root, command: '-V', recommendedNext: '--help' }, scratch));
    expect(r.status).toBe(0);
    expect(frontmatterLines(notePath(root))).toEqual(expect.arrayContaining(['command: "-V"', 'recommended_next: "--help"']));
    const args2 = writeArgs({ root }, scratch);
    args2.splice(args2.indexOf('--stage'), 2, '--stage=qa');
    expect(runCli(args2).status).toBe(0);
    expect(frontmatterLines(notePath(root))).toContain('stage: qa');
  });

  it('--json prints one JSON document with path, size and truncation', () => {
    const r = runCli(writeArgs({ root, extra: ['--json'] }, scratch));
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { ok: boolean; path: string; sizeBytes: number; truncated: boolean };
    expect(out).toMatchObject({ ok: true, truncated: false, sizeBytes: fs.statSync(notePath(root)).size });
  });

  it('a relative --root and --body-file resolve against the working directory', () => {
    fs.writeFileSync(path.join(scratch, 'b.md'), 'relative\n');
    const r = runCli(['stage', 'write', '--root', 'fake-repo', '--task', 'TUNE-0254', '--stage', 'plan', '--command', '/dr-plan', '--captured-by', 'agent', '--recommended-next', '/dr-do', '--body-file', 'b.md'], { cwd: scratch });
    expect(r.status).toBe(0);
    expect(fs.readFileSync(notePath(root), 'utf8').endsWith('\n\nrelative\n')).toBe(true);
  });
});

describe('validation order and rules', () => {
  it('an unknown stage token outside the rule exits 1 with the rule', () => {
    for (const stage of ['Plan', '1do', 'do it', 'a'.repeat(33), '']) {
      const r = stageWrite({ root, stage }, scratch);
      if (stage === '') {
        expect(r.status).toBe(2); // empty = missing, as upstream
        continue;
      }
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('^[a-z][a-z0-9-]{0,31}$');
    }
    expect(fs.existsSync(notePath(root))).toBe(false);
  });

  it('any lowercase stage token is accepted, as is every upstream stage', () => {
    for (const stage of ['init', 'compliance', 'optimize', 'custom-review', 'a'.repeat(32)]) {
      expect(stageWrite({ root, stage }, scratch).status).toBe(0);
      expect(frontmatterLines(notePath(root))).toContain(`stage: ${stage}`);
    }
  });

  it('a missing body file exits 1', () => {
    const args = writeArgs({ root }, scratch);
    args[args.indexOf('--body-file') + 1] = path.join(scratch, 'nope.md');
    const r = runCli(args);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('body file not found');
  });

  it('a root that is not a directory exits 1', () => {
    fs.writeFileSync(path.join(scratch, 'file'), '');
    expect(stageWrite({ root: path.join(scratch, 'file') }, scratch).status).toBe(1);
    expect(stageWrite({ root: path.join(scratch, 'missing') }, scratch).status).toBe(1);
  });

  it('roots with a datarim component or ".." inside a name are accepted (no false rejection)', () => {
    for (const rel of ['work/datarim/checkout', 'a..b', 'datarim']) {
      const r2 = path.join(scratch, rel);
      fs.mkdirSync(r2, { recursive: true });
      const r = stageWrite({ root: r2 }, scratch);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(fs.existsSync(notePath(r2))).toBe(true);
    }
  });

  it('the root is realpath-ed: a symlinked root writes into the real directory', () => {
    const link = path.join(scratch, 'link-to-repo');
    fs.symlinkSync(root, link);
    expect(stageWrite({ root: link }, scratch).status).toBe(0);
    expect(fs.existsSync(notePath(root))).toBe(true);
  });

  it('--captured-at must be ISO 8601 UTC; a valid one is written as given', () => {
    for (const bad of ['yesterday', '2026-05-21 13:45:00', '2026-02-30T10:00:00Z', '2026-05-21T13:45:00+02:00', '2026-05-21T25:00:00Z']) {
      const r = stageWrite({ root, capturedAt: bad }, scratch);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('ISO 8601 UTC');
    }
    for (const good of ['2026-05-21T13:45:00Z', '2026-05-21T13:45:00.123Z', '2026-05-21T13:45:00+00:00']) {
      expect(stageWrite({ root, capturedAt: good }, scratch).status).toBe(0);
      expect(parse(fs.readFileSync(notePath(root), 'utf8').split('\n---\n')[0]!.slice(4))).toMatchObject({ captured_at: good });
    }
  });

  it('the default captured_at is now, as date -u +%FT%TZ prints it', () => {
    const before = Date.now();
    expect(stageWrite({ root }, scratch).status).toBe(0);
    const line = frontmatterLines(notePath(root)).find((l) => l.startsWith('captured_at: ')) ?? '';
    const value = line.slice('captured_at: '.length);
    expect(value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Date.parse(value)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
  });

  it('--dir must stay below the root', () => {
    for (const dir of ['../outside', '/tmp', '.']) {
      const r = stageWrite({ root, extra: ['--dir', dir] }, scratch);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('not inside the root');
    }
    expect(fs.existsSync(path.join(scratch, 'outside'))).toBe(false);
    expect(stageWrite({ root, extra: ['--dir', 'notes/stage'] }, scratch).status).toBe(0);
    expect(fs.existsSync(path.join(root, 'notes', 'stage', 'TUNE-0254.snapshot.md'))).toBe(true);
  });

  it('a snapshot dir reached through a symlink that leaves the root is refused', () => {
    const outside = path.join(scratch, 'elsewhere');
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(root, 'escape'));
    const r = stageWrite({ root, extra: ['--dir', 'escape/snapshots'] }, scratch);
    expect(r.status).toBe(1);
    expect(fs.readdirSync(outside)).toEqual([]);
  });
});

describe('options file', () => {
  it('options are written as quoted list items and parse back exactly', () => {
    const options = ['/dr-do TUNE-0254 | execute the plan', '/dr-status | escape: "x"', '  - indented: yes', '# not a comment'];
    expect(stageWrite({ root, options: `${options.join('\n')}\n\n` }, scratch).status).toBe(0);
    const fm = parse(fs.readFileSync(notePath(root), 'utf8').split('\n---\n')[0]!.slice(4)) as { options: string[] };
    expect(fm.options).toEqual(options);
    expect(frontmatterLines(notePath(root))).toContain('  - "/dr-do TUNE-0254 | execute the plan"');
  });

  it('CRLF option lines lose their CR', () => {
    expect(stageWrite({ root, options: '/dr-a | one\r\n/dr-b | two\r\n' }, scratch).status).toBe(0);
    const fm = parse(fs.readFileSync(notePath(root), 'utf8').split('\n---\n')[0]!.slice(4)) as { options: string[] };
    expect(fm.options).toEqual(['/dr-a | one', '/dr-b | two']);
  });

  it('a missing options file gives an empty list, not an error', () => {
    const args = writeArgs({ root }, scratch);
    args.push('--options-file', path.join(scratch, 'no-such-file'));
    expect(runCli(args).status).toBe(0);
    expect(frontmatterLines(notePath(root))).toContain('options: []');
  });
});

describe('one UTF-8 rule for stage input', () => {
  const invalid = Buffer.from([0x66, 0xff, 0xfe, 0xc3, 0x28, 0x0a]);

  it('a body file with invalid UTF-8 exits 1 with ERR_VALIDATION and writes no note, as an options file does', () => {
    const args = writeArgs({ root }, scratch);
    const bodyFile = args[args.indexOf('--body-file') + 1]!;
    fs.writeFileSync(bodyFile, invalid);
    const r = runCli([...args, '--json']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('body is not valid UTF-8');
    expect(r.stderr).toContain('ERR_VALIDATION');
    expect(fs.existsSync(notePath(root))).toBe(false);
  });

  it('an options file with invalid UTF-8 is refused the same way (same code, same exit)', () => {
    const args = writeArgs({ root }, scratch);
    const optionsFile = path.join(scratch, 'bad-options.txt');
    fs.writeFileSync(optionsFile, invalid);
    const r = runCli([...args, '--options-file', optionsFile, '--json']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('options file is not valid UTF-8');
    expect(r.stderr).toContain('ERR_VALIDATION');
    expect(fs.existsSync(notePath(root))).toBe(false);
  });
});

describe('size cap (upstream stage-snapshot-size-cap)', () => {
  it('a short body: no marker, truncated: false, declared size equals the real size', () => {
    expect(stageWrite({ root, body: 'short\n' }, scratch).status).toBe(0);
    const text = fs.readFileSync(notePath(root), 'utf8');
    expect(text).not.toContain('snapshot-truncated');
    expect(frontmatterLines(notePath(root))).toContain('truncated: false');
    const s = sizes(notePath(root));
    expect(s.declared).toBe(s.actual);
  });

  it('a 30 KB body: at most 8192 bytes, marker, truncated: true, exact size', () => {
    expect(stageWrite({ root, body: 'y'.repeat(30_000) }, scratch).status).toBe(0);
    const s = sizes(notePath(root));
    expect(s.declared).toBe(s.actual);
    expect(s.actual).toBe(8192); // ASCII: the cut lands exactly on the cap
    expect(fs.readFileSync(notePath(root), 'utf8')).toContain(TRUNCATION_MARKER);
  });

  it('a 9000-char options line (no room left for the body) exits 1: nothing published, no lock left', () => {
    const r = stageWrite({ root, options: `/dr-x | ${'o'.repeat(9000)}\n` }, scratch);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/rendered snapshot is \d+ bytes; exceeds 8192-byte cap/);
    expect(r.stderr).not.toContain('illegal byte count');
    expect(fs.existsSync(notePath(root))).toBe(false);
    const dir = path.dirname(notePath(root));
    expect(fs.existsSync(dir) ? fs.readdirSync(dir) : []).toEqual([]);
  });
});

describe('UTF-8 truncation (upstream stage-snapshot-utf8-truncation)', () => {
  const cases: Array<[string, string, number]> = [
    ['3000 × "一" (CJK, 3 bytes each)', '一'.repeat(3000), 3],
    ['2200 × U+1F30D (emoji, 4 bytes each)', '\u{1F30D}'.repeat(2200), 4],
    ['10000 × "A"', 'A'.repeat(10_000), 1],
  ];
  for (const [name, body, width] of cases) {
    it(`${name}: valid UTF-8, at most 8192 bytes, marker, exact size, whole characters only`, () => {
      expect(stageWrite({ root, body }, scratch).status).toBe(0);
      const bytes = fs.readFileSync(notePath(root));
      expect(isValidUtf8(bytes)).toBe(true);
      expect(bytes.length).toBeLessThanOrEqual(8192);
      // As close to the cap as a character boundary allows.
      expect(bytes.length).toBeGreaterThan(8192 - width);
      const s = sizes(notePath(root));
      expect(s.declared).toBe(s.actual);
      const text = bytes.toString('utf8');
      expect(text.endsWith(`\n${TRUNCATION_MARKER}\n`)).toBe(true);
      const kept = text.slice(text.indexOf('\n---\n\n') + 6, text.length - TRUNCATION_MARKER.length - 2);
      expect(body.startsWith(kept)).toBe(true);
    });
  }
});

describe('task ids (upstream stage-snapshot-id-regex)', () => {
  for (const id of ['TUNE-0334', 'DEV-1438-FU-engage-generator-perf', 'INFRA-0042-hotfix-db', 'ABCDEFGHIJ-0001', 'TUNE-0001-Ab9', 'AB-0000', 'TUNE-0001-FU-1']) {
    it(`accepts ${id} and writes <ID>.snapshot.md with task_id = the full id`, () => {
      expect(stageWrite({ root, task: id }, scratch).status).toBe(0);
      expect(frontmatterLines(notePath(root, id))).toContain(`task_id: ${id}`);
    });
  }
  it('rejects every malformed id with exit 1 and writes nothing', () => {
    for (const id of ['../etc/passwd', 'FOO/../bar', 'A-1234', 'lowercase-0001', 'TUNE-034', 'TUNE-0334.bak', 'TUNE 0334', 'ABCDEFGHIJK-0001', 'TUNE-12345', 'V2-0001', 'TUNE-0001-', 'TUNE-0001-a_b', 'TUNE-0001--x']) {
      const r = stageWrite({ root, task: id }, scratch);
      expect(r.status, id).toBe(1);
    }
    expect(fs.existsSync(path.join(root, 'datarim', 'snapshots'))).toBe(false);
  });
});

describe('end to end (upstream stage-snapshot-e2e, TUNE-9999)', () => {
  const task = 'TUNE-9999';
  const cta = '## Implementation\n\n**рекомендуется** `/dr-qa TUNE-9999`\n';

  it('writes the note, keeps the CTA marker, and the validator accepts it', () => {
    expect(stageWrite({ root, task, stage: 'do', command: '/dr-do', recommendedNext: '/dr-qa', body: cta }, scratch).status).toBe(0);
    const text = fs.readFileSync(notePath(root, task), 'utf8');
    expect(text).toContain('**рекомендуется**');
    expect(frontmatterLines(notePath(root, task))).toContain('stage: do');
    expect(runCli(['stage', 'check', '--task', task, '--root', root, '--validate-frontmatter']).status).toBe(0);
  });

  it('the terminator never glues onto the body: the line two after the closing --- is the body', () => {
    expect(stageWrite({ root, task, body: '## Implementation\nline' }, scratch).status).toBe(0);
    const text = fs.readFileSync(notePath(root, task), 'utf8');
    expect(text).not.toMatch(/^---## Implementation/m);
    const lines = text.split('\n');
    const close = lines.indexOf('---', 1);
    expect(lines[close + 1]).toBe('');
    expect(lines[close + 2]).toBe('## Implementation');
    expect(text.endsWith('\nline')).toBe(true); // no newline added
  });

  it('the kill switch writes no file', () => {
    expect(stageWrite({ root, task }, scratch, { DATARIM_DISABLE_SNAPSHOT: '1' }).status).toBe(0);
    expect(fs.existsSync(notePath(root, task))).toBe(false);
  });

  it('size_bytes is exact across the 999 → 1000 byte boundary', () => {
    // Find the body length whose note is 999 bytes, then write that and the next few lengths.
    expect(stageWrite({ root, task, body: '' }, scratch).status).toBe(0);
    const empty = fs.statSync(notePath(root, task)).size;
    const at999 = 999 - empty;
    for (const len of [at999 - 1, at999, at999 + 1, at999 + 2, 1000]) {
      expect(stageWrite({ root, task, body: 'b'.repeat(len) }, scratch).status).toBe(0);
      const s = sizes(notePath(root, task));
      expect(s.declared, `body ${len}`).toBe(s.actual);
      const text = fs.readFileSync(notePath(root, task), 'utf8');
      expect(text.split('\n')[text.split('\n').indexOf('---', 1) + 1]).toBe('');
    }
    const crossing = sizes(notePath(root, task));
    expect(crossing.actual).toBeGreaterThanOrEqual(1000);
  });

  it('oversized options: exit 1, "exceeds 8192-byte cap", no file, no lock dir', () => {
    const options = Array.from({ length: 200 }, (_, i) => `/dr-opt-${i} | ${'purpose '.repeat(6)}`).join('\n');
    const r = stageWrite({ root, task, options }, scratch);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('exceeds 8192-byte cap');
    expect(fs.existsSync(notePath(root, task))).toBe(false);
    expect(fs.existsSync(path.join(root, 'datarim', 'snapshots', `.lock.${task}`))).toBe(false);
  });

  it('an I/O failure under a root named $(touch${IFS}CANARY): non-zero, no canary, no lock, nothing published', () => {
    const evilRoot = path.join(scratch, '$(touch${IFS}CANARY)');
    fs.mkdirSync(evilRoot);
    // The target name is taken by a non-empty directory: the rename over it fails.
    const blocked = path.join(evilRoot, 'datarim', 'snapshots', `${task}.snapshot.md`);
    fs.mkdirSync(path.join(blocked, 'inside'), { recursive: true });
    const r = runCli(writeArgs({ root: evilRoot, task }, scratch), { cwd: scratch });
    expect(r.status).not.toBe(0);
    expect(r.status).toBe(1);
    const everything = fs.readdirSync(scratch, { recursive: true }).map(String);
    expect(everything.some((p) => p.endsWith('CANARY') && !p.includes('$('))).toBe(false);
    const dir = path.dirname(blocked);
    expect(fs.readdirSync(dir)).toEqual([`${task}.snapshot.md`]);
    expect(fs.statSync(blocked).isDirectory()).toBe(true);
  });
});

describe('auto stage (upstream stage-snapshot-auto-stage)', () => {
  it('--stage auto --command /dr-auto exits 0 and writes stage: auto', () => {
    expect(stageWrite({ root, stage: 'auto', command: '/dr-auto' }, scratch).status).toBe(0);
    expect(frontmatterLines(notePath(root))).toEqual(expect.arrayContaining(['stage: auto', 'command: /dr-auto']));
  });
});

describe('hostile values cannot inject frontmatter', () => {
  it('a value with a newline stays one field and parses back exactly', () => {
    const evil = '/dr-do\ntruncated: true\nsize_bytes: 1';
    expect(stageWrite({ root, command: evil, recommendedNext: 'yes', stage: 'null' }, scratch).status).toBe(0);
    const text = fs.readFileSync(notePath(root), 'utf8');
    const fm = parse(text.split('\n---\n')[0]!.slice(4), { uniqueKeys: true }) as Record<string, unknown>;
    expect(fm.command).toBe(evil);
    expect(fm.recommended_next).toBe('yes');
    expect(fm.stage).toBe('null');
    expect(fm.truncated).toBe(false);
    expect(fm.size_bytes).toBe(Buffer.byteLength(text));
    expect(Object.keys(fm)).toEqual(['task_id', 'artifact', 'schema_version', 'stage', 'command', 'captured_at', 'captured_by', 'recommended_next', 'options', 'size_bytes', 'truncated']);
  });
});
