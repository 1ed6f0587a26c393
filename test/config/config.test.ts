/** `.cairn/config.json`: the shipped schema and the loader agree; unknown keys name themselves; flags > env > config > defaults. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig, validateConfig } from '../../src/config/index.js';
import { REPO_ROOT, errorJson, runCli } from '../support/cli.js';
import { commitAll, trackedDirs, write } from '../session/helpers.js';

const { repo, dir: scratch } = trackedDirs();
const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'schemas', 'config.schema.json'), 'utf8')) as object;
const ajvValidate = new Ajv2020({ strict: true }).compile(schema);

function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return runCli(args, { cwd, env: { XDG_CACHE_HOME: scratch('cairn-cache-'), CAIRN_STORE: '', CAIRN_STATE_DIR: '', ...env } });
}

function writeConfig(root: string, value: unknown): void {
  write(root, '.cairn/config.json', typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

const accepted = (value: unknown): boolean => {
  try {
    validateConfig(value);
    return true;
  } catch {
    return false;
  }
};

describe('the config schema and the loader', () => {
  it('accept and refuse the same documents (schemas/config.schema.json is what the loader checks)', () => {
    const text = fc.string({ minLength: 0, maxLength: 6 }).filter((s) => !s.includes('\0'));
    const value = fc.oneof(text, fc.integer({ min: -2, max: 700 }), fc.boolean(), fc.constantFrom('7d', '30m', '0d', '2w', 'x'), fc.array(text, { maxLength: 3 }), fc.constant(null));
    const nested = (keys: string[]) => fc.dictionary(fc.oneof(fc.constantFrom(...keys), text), value, { maxKeys: 3 });
    const doc = fc.dictionary(
      fc.oneof(fc.constantFrom('$schema', 'store', 'stateDir', 'exclude', 'contentCap', 'retention', 'hooks'), text),
      fc.oneof(value, nested(['keepLast', 'keepWithin']), nested(['sessionStartContext', 'stageDir', 'timeoutSeconds'])),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(doc, (d) => {
        expect(accepted(d)).toBe(ajvValidate(d));
      }),
      { numRuns: 2000 },
    );
    const full = { $schema: './node_modules/cairn/schemas/config.schema.json', store: 'file:../shared-store', stateDir: '.agent', exclude: ['dist/**'], contentCap: 1024, retention: { keepLast: 50, keepWithin: '14d' }, hooks: { sessionStartContext: false, stageDir: 'notes', timeoutSeconds: 20 } };
    expect(ajvValidate(full)).toBe(true);
    expect(validateConfig(full)).toEqual(full);
  });

  it('names an unknown key, top-level or nested, and says which keys exist', () => {
    expect(() => validateConfig({ stor: 'x' })).toThrow(/unknown key "stor"; known keys: \$schema, store, stateDir/);
    expect(() => validateConfig({ hooks: { timeout: 3 } })).toThrow(/unknown key "hooks.timeout"; known keys of hooks: sessionStartContext, stageDir, timeoutSeconds/);
    expect(() => validateConfig({ retention: { keepLast: -1 } })).toThrow(/"retention.keepLast" must be a whole number from 0 up/);
    expect(() => validateConfig([])).toThrow(/the file must be a JSON object/);
  });

  it('reads no file as {}, and refuses a symlinked, oversized or malformed one with ERR_CONFIG', () => {
    const root = scratch();
    expect(loadConfig(root)).toEqual({ config: {}, file: null });
    writeConfig(root, '{"store": ');
    expect(() => loadConfig(root)).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', exitCode: 2 }));
    fs.rmSync(path.join(root, '.cairn', 'config.json'));
    const outside = write(scratch(), 'config.json', '{}');
    fs.symlinkSync(outside, path.join(root, '.cairn', 'config.json'));
    expect(() => loadConfig(root)).toThrow(expect.objectContaining({ code: 'ERR_CONFIG' }));
    fs.rmSync(path.join(root, '.cairn', 'config.json'));
    writeConfig(root, `{"exclude": [${'"a",'.repeat(100_000)}"b"]}`);
    expect(() => loadConfig(root)).toThrow(/too large/);
  });

  it('never reads a config through a link at any component: .cairn planted as a link is refused (ERR_CONFIG)', () => {
    const root = scratch();
    const outsideDir = scratch();
    write(outsideDir, 'config.json', '{"store": "/outside/store"}');
    fs.symlinkSync(outsideDir, path.join(root, '.cairn'));
    expect(() => loadConfig(root)).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', exitCode: 2, message: expect.stringContaining('symbolic link') as unknown }));
    fs.rmSync(path.join(root, '.cairn'));
    writeConfig(root, `${'['.repeat(600)}${']'.repeat(600)}`);
    expect(() => loadConfig(root)).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', message: expect.stringContaining('nests more than') as unknown }));
  });
});

describe('commands read the config', () => {
  it('a bad config fails the command with exit 2 naming the file and the key, before any work', () => {
    const root = repo();
    writeConfig(root, { storee: 'x' });
    const r = cli(['session', 'pre'], root);
    expect(r.status).toBe(2);
    expect(errorJson(r.stderr)).toMatchObject({ code: 'ERR_CONFIG', message: expect.stringContaining('unknown key "storee"') as unknown });
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations'))).toBe(false);
  });

  it('store: flags > CAIRN_STORE > config > .cairn/store', () => {
    const root = repo();
    write(root, 'a.txt', 'a');
    commitAll(root, 'init');
    writeConfig(root, { store: 'from-config' });
    const post = (extra: string[], env: NodeJS.ProcessEnv = {}) => {
      expect(cli(['session', 'pre'], root).status).toBe(0);
      expect(cli(['session', 'post', ...extra], path.join(root), env).status).toBe(0);
    };
    post([]);
    expect(fs.existsSync(path.join(root, 'from-config', 'default'))).toBe(true);
    post([], { CAIRN_STORE: path.join(root, 'from-env') });
    expect(fs.existsSync(path.join(root, 'from-env', 'default'))).toBe(true);
    post(['--store', path.join(root, 'from-flag')], { CAIRN_STORE: path.join(root, 'from-env') });
    expect(fs.existsSync(path.join(root, 'from-flag', 'default'))).toBe(true);
    expect(fs.existsSync(path.join(root, '.cairn', 'store'))).toBe(false);
    const listed = cli(['store', 'list', '--json'], root);
    expect(JSON.parse(listed.stdout)).toMatchObject({ store: path.join(root, 'from-config'), sessions: ['default'] });
  });

  it('stateDir and exclude shape the inventories; retention.keepLast is session prune\'s default', () => {
    const root = repo();
    write(root, 'a.txt', 'a');
    commitAll(root, 'init');
    writeConfig(root, { stateDir: '.agent', exclude: ['build/**'], retention: { keepLast: 1 } });
    write(root, '.agent/notes.md', 'n');
    for (let i = 0; i < 2; i++) {
      const pre = cli(['session', 'pre', '--json'], root);
      expect((JSON.parse(pre.stdout) as { pre: { stateDir: string } }).pre.stateDir).toBe('.agent');
      write(root, `build/out${i}.js`, 'x');
      write(root, `src/f${i}.ts`, 'x');
      const post = cli(['session', 'post', '--json', '--no-store'], root);
      expect((JSON.parse(post.stdout) as { filesAdded: string[] }).filesAdded).toEqual([`src/f${i}.ts`]);
    }
    writeConfig(root, { stateDir: '.agent', exclude: ['build/**'], retention: { keepLast: 1 }, contentCap: 10 });
    write(root, 'big.txt', 'more than ten bytes');
    const capped = JSON.parse(cli(['session', 'pre', '--json'], root, { CAIRN_STATE_DIR: '.other' }).stdout) as { pre: { stateDir: string; content?: { capBytes: number } } };
    expect(capped.pre.stateDir).toBe('.other');
    expect(capped.pre.content?.capBytes).toBe(10);
    const pruned = cli(['session', 'prune', '--json'], root);
    expect(pruned.status).toBe(0);
    expect((JSON.parse(pruned.stdout) as { iterationsDeleted: string[] }).iterationsDeleted.map((d) => path.basename(d))).toEqual(['001', '002']);
    expect(fs.existsSync(path.join(root, '.cairn', 'iterations', '003'))).toBe(true);
  });
});
