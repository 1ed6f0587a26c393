/** Installing into an agent's settings: one copy however often, exactly cairn's entries out again, nothing else touched or corrupted. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentById } from '../../src/hooks/agents.js';
import { installHooks, uninstallHooks } from '../../src/hooks/settings.js';
import { errorJson, runCli } from '../support/cli.js';
import { trackedDirs } from '../session/helpers.js';

const { repo, dir: scratch } = trackedDirs();
const cli = (args: string[], cwd: string, env: NodeJS.ProcessEnv) => runCli(args, { cwd, env: { CAIRN_STORE: '', ...env } });

const USER_SETTINGS = `{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ]
  },
  "hooks": {
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/prompt-guard.sh"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "jq . >> ~/bash.log"
          }
        ]
      }
    ]
  }
}
`;

describe('cairn hooks install / uninstall', () => {
  it('installing twice leaves one copy; uninstall leaves the user\'s settings byte-identical (project and user scope)', () => {
    const root = repo();
    const home = scratch('home-');
    const env = { HOME: home };
    for (const [scope, file] of [
      ['project', path.join(root, '.claude', 'settings.json')],
      ['user', path.join(home, '.claude', 'settings.json')],
    ] as const) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, USER_SETTINGS);
      expect(cli(['hooks', 'install', 'claude-code', '--scope', scope], root, env).status).toBe(0);
      const once = fs.readFileSync(file, 'utf8');
      const again = cli(['hooks', 'install', 'claude-code', '--scope', scope], root, env);
      expect(again.stdout).toContain('nothing changed');
      expect(fs.readFileSync(file, 'utf8')).toBe(once);
      const doc = JSON.parse(once) as { model: string; hooks: Record<string, { hooks: { command: string }[] }[]> };
      expect(doc.model).toBe('opus');
      expect(doc.hooks.UserPromptSubmit!.map((g) => g.hooks[0]!.command)).toEqual(['~/bin/prompt-guard.sh', expect.stringMatching(/ hook claude-code$/)]);
      for (const event of ['SessionStart', 'Stop', 'SessionEnd']) expect(doc.hooks[event]).toHaveLength(1);
      expect(JSON.parse(cli(['hooks', 'status', 'claude-code', '--json'], root, env).stdout)).toMatchObject({ agents: [{ scopes: expect.arrayContaining([expect.objectContaining({ scope, missing: [] })]) as unknown }] });
      expect(cli(['hooks', 'uninstall', 'claude-code', '--scope', scope], root, env).status).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(USER_SETTINGS);
      expect(cli(['hooks', 'uninstall', 'claude-code', '--scope', scope], root, env).stdout).toContain('nothing changed');
    }
  });

  it('a file cairn created is removed again by uninstall; other indentation is kept byte for byte', () => {
    const root = repo();
    const file = path.join(root, '.claude', 'settings.json');
    expect(cli(['hooks', 'install', 'claude-code'], root, {}).status).toBe(0);
    expect(cli(['hooks', 'uninstall', 'claude-code'], root, {}).status).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
    for (const indent of [4, '\t']) {
      const text = JSON.stringify(JSON.parse(USER_SETTINGS), null, indent); // no final newline either
      fs.writeFileSync(file, text);
      expect(cli(['hooks', 'install', 'claude-code'], root, {}).status).toBe(0);
      expect(fs.readFileSync(file, 'utf8').split('\n')[1]).toBe(`${typeof indent === 'number' ? ' '.repeat(indent) : indent}"model": "opus",`);
      expect(cli(['hooks', 'uninstall', 'claude-code'], root, {}).status).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
    }
  });

  it('refuses a file with comments or formatting it cannot keep, changing nothing and printing the entries to add by hand; --reformat keeps a backup', () => {
    const root = repo();
    const file = path.join(root, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const withComments = '{\n  // my settings\n  "model": "opus",\n}\n';
    fs.writeFileSync(file, withComments);
    const r = cli(['hooks', 'install', 'claude-code'], root, {});
    expect(r.status).toBe(2);
    expect(errorJson(r.stderr)).toMatchObject({ code: 'ERR_SETTINGS', message: expect.stringContaining('not plain JSON') as unknown });
    expect(r.stderr).toContain('"UserPromptSubmit"');
    expect(fs.readFileSync(file, 'utf8')).toBe(withComments);

    const odd = '{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}\n';
    fs.writeFileSync(file, odd);
    const refused = cli(['hooks', 'install', 'claude-code'], root, {});
    expect(refused.status).toBe(2);
    expect(errorJson(refused.stderr).code).toBe('ERR_SETTINGS_FORMAT');
    expect(fs.readFileSync(file, 'utf8')).toBe(odd);
    const reformatted = cli(['hooks', 'install', 'claude-code', '--reformat'], root, {});
    expect(reformatted.status).toBe(0);
    expect(fs.readFileSync(`${file}.cairn-backup`, 'utf8')).toBe(odd);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { hooks: { Stop: { hooks: { command: string }[] }[] } };
    expect(doc.hooks.Stop.map((g) => g.hooks[0]!.command)).toEqual(['say done', expect.stringMatching(/hook claude-code$/)]);
  });

  it('keeps every other entry of any settings document exactly (property)', () => {
    const agent = agentById('claude-code')!;
    const dir = scratch();
    const file = path.join(dir, 'settings.json');
    const command = fc.oneof(fc.constantFrom('cairn-helper', 'echo cairn', 'my-hook --x'), fc.string({ maxLength: 12 }));
    const group = fc.record({ matcher: fc.option(fc.constantFrom('Bash', '*', ''), { nil: undefined }), hooks: fc.array(fc.record({ type: fc.constant('command'), command }), { minLength: 1, maxLength: 3 }) }, { requiredKeys: ['hooks'] });
    const settings = fc.record(
      { model: fc.string({ maxLength: 5 }), hooks: fc.dictionary(fc.constantFrom('UserPromptSubmit', 'Stop', 'PreToolUse', 'SessionStart', 'Notification'), fc.array(group, { minLength: 1, maxLength: 3 })) },
      { requiredKeys: [] },
    );
    fc.assert(
      // An empty "hooks": {} cairn cannot tell from one it emptied itself: uninstall drops it.
      fc.property(settings.filter((d) => d.hooks === undefined || Object.keys(d.hooks).length > 0), (doc) => {
        const text = `${JSON.stringify(doc, null, 2)}\n`;
        fs.writeFileSync(file, text);
        installHooks(agent, file, 'cairn hook claude-code', 30);
        const installed = fs.readFileSync(file, 'utf8');
        installHooks(agent, file, 'cairn hook claude-code', 30);
        expect(fs.readFileSync(file, 'utf8')).toBe(installed);
        uninstallHooks(agent, file);
        if (Object.keys(doc).length === 0) expect(fs.existsSync(file)).toBe(false);
        else expect(fs.readFileSync(file, 'utf8')).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});
