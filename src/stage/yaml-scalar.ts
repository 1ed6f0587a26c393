import { hasLoneSurrogate } from '../core/utf8.js';
import { CairnError } from '../core/errors.js';

// Simple tokens (stage names, /dr-commands, task ids, agent names) stay plain, as the seed's
// example shows them; everything else is double-quoted, so no value can start a new field.
// A plain token must start with a letter, `_` or `/` (so no number, indicator or `.inf`), must
// not end with `:` (a mapping key), and must not be a word YAML 1.1 or 1.2 reads as a boolean
// or null. Checked without a YAML parser, which keeps the writer's start-up light; the property
// tests prove the rule against the `yaml` package.
const PLAIN_TOKEN = /^[A-Za-z_/][A-Za-z0-9_/.:+@-]*$/;
const NON_STRING_WORDS = /^(y|yes|n|no|true|false|on|off|null)$/i;
// A timestamp stays plain as in the seed; YAML 1.2 core reads it as the string.
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function isSafePlain(value: string): boolean {
  if (ISO_TIMESTAMP.test(value)) return true;
  return PLAIN_TOKEN.test(value) && !value.endsWith(':') && !NON_STRING_WORDS.test(value);
}

function hex(n: number, width: number): string {
  return n.toString(16).toUpperCase().padStart(width, '0');
}

/** A YAML double-quoted scalar holding exactly `value`; non-printable characters are escaped. */
export function doubleQuoted(value: string): string {
  let out = '"';
  for (const ch of value) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (cp === 0x09) out += '\\t';
    else if (cp === 0x0a) out += '\\n';
    else if (cp === 0x0d) out += '\\r';
    else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) out += `\\x${hex(cp, 2)}`;
    else if (cp === 0x2028) out += '\\L';
    else if (cp === 0x2029) out += '\\P';
    else if (cp === 0xfeff || cp === 0xfffe || cp === 0xffff) out += `\\u${hex(cp, 4)}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Renders a string as a YAML scalar that parses back to exactly that string. */
export function yamlString(value: string, field: string): string {
  if (hasLoneSurrogate(value)) {
    throw new CairnError('ERR_VALIDATION', `${field} contains an unpaired UTF-16 surrogate, which UTF-8 cannot hold; pass well-formed text`, {
      exitCode: 1,
      details: { field },
    });
  }
  return isSafePlain(value) ? value : doubleQuoted(value);
}
