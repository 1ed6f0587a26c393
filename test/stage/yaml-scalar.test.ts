import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { doubleQuoted, yamlString } from '../../src/stage/yaml-scalar.js';

// Values a YAML 1.1 or 1.2 reader would turn into something other than the string given.
const TRICKY = ['true', 'False', 'yes', 'No', 'on', 'OFF', 'y', 'n', 'null', 'Null', '~', '1', '-1', '+1', '1.5', '1e3', '0o17', '0x1F', '0b101', '017', '1:20', '1_000', '.inf', '-.inf', '.nan', '=', '<<', 'a:', '- a', '? a', '*a', '&a', '!a', '%a', '@a', '`a`', '#a', '|', '>', '[a]', '{a}', '"a"', "'a'", ' a', 'a ', 'a #b', 'a: b', ''];
const PLAIN = ['plan', 'TUNE-0254', 'DEV-1438-FU-perf', '/dr-plan', 'agent', 'operator', 'custom-review', 'http://h/p', 'a:b', '2026-05-21T13:45:00Z'];

describe('YAML scalars of the frontmatter', () => {
  it('tricky values are quoted and read back as the same string by YAML 1.2 and 1.1 readers', () => {
    for (const value of TRICKY) {
      const text = yamlString(value, 'f');
      expect(text.startsWith('"'), value).toBe(true);
      expect((parse(`k: ${text}`) as { k: unknown }).k).toBe(value);
      expect((parse(`k: ${text}`, { version: '1.1' }) as { k: unknown }).k).toBe(value);
    }
  });

  it('simple tokens stay plain, as in the seed, and still read back as strings', () => {
    for (const value of PLAIN) {
      expect(yamlString(value, 'f')).toBe(value);
      expect((parse(`k: ${value}`) as { k: unknown }).k).toBe(value);
      if (!value.startsWith('2026')) expect((parse(`k: ${value}`, { version: '1.1' }) as { k: unknown }).k).toBe(value);
    }
  });

  it('control characters, line separators and BOMs are escaped, never written raw', () => {
    const value = 'a\nb\rc\td\u0000e\u007f\u0085\u2028\u2029\ufeff\u{1F30D}"\\';
    const text = doubleQuoted(value);
    for (const raw of ['\n', '\r', '\u0000', '\u007f', '\u0085', '\u2028', '\u2029', '\ufeff']) expect(text.includes(raw)).toBe(false);
    expect((parse(`k: ${text}`) as { k: unknown }).k).toBe(value);
  });

  it('an unpaired surrogate is refused with exit 1', () => {
    expect(() => yamlString('a\ud800b', 'command')).toThrow(expect.objectContaining({ code: 'ERR_VALIDATION', exitCode: 1 }) as Error);
  });
});
