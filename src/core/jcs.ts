import { createHash } from 'node:crypto';
import { CairnError } from './errors.js';
import { hasLoneSurrogate } from './utf8.js';

/**
 * RFC 8785 JSON Canonicalization Scheme.
 * - object keys sorted by UTF-16 code units (the RFC's rule, not code points);
 * - numbers as ECMAScript prints them (JSON.stringify does exactly that, -0 -> 0);
 * - strings escaped as JSON.stringify does; no whitespace.
 * Rejects what JSON cannot carry: NaN/Infinity, bigint, functions, symbols, lone surrogates.
 * `undefined` members are dropped and `undefined` array items become null, as JSON.stringify does.
 */
export function canonicalize(value: unknown): string {
  const out: string[] = [];
  emit(value, out, new Set());
  return out.join('');
}

function fail(message: string): never {
  throw new CairnError('ERR_CANONICALIZE', message);
}

function emit(value: unknown, out: string[], seen: Set<object>): void {
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'number':
      if (!Number.isFinite(value)) fail(`cannot canonicalize the number ${String(value)}: JSON has no NaN or Infinity`);
      out.push(JSON.stringify(value));
      return;
    case 'string':
      if (hasLoneSurrogate(value)) fail('cannot canonicalize a string with a lone UTF-16 surrogate');
      out.push(JSON.stringify(value));
      return;
    case 'bigint':
      fail('cannot canonicalize a bigint: convert it to a number or a string first');
    // eslint-disable-next-line no-fallthrough
    case 'function':
    case 'symbol':
    case 'undefined':
      fail(`cannot canonicalize a value of type ${typeof value}`);
    // eslint-disable-next-line no-fallthrough
    default:
      break;
  }
  const obj = value;
  if (seen.has(obj)) fail('cannot canonicalize a cyclic structure');
  seen.add(obj);
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function' && !Array.isArray(obj)) {
    const replaced: unknown = (obj as { toJSON: () => unknown }).toJSON();
    seen.delete(obj);
    emit(replaced, out, seen);
    return;
  }
  if (Array.isArray(obj)) {
    out.push('[');
    for (let i = 0; i < obj.length; i++) {
      if (i > 0) out.push(',');
      const item: unknown = obj[i];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') out.push('null');
      else emit(item, out, seen);
    }
    out.push(']');
  } else {
    const record = obj as Record<string, unknown>;
    // Default sort compares UTF-16 code units: exactly RFC 8785 § 3.2.3.
    const keys = Object.keys(record).sort();
    out.push('{');
    let first = true;
    for (const key of keys) {
      const v = record[key];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      if (hasLoneSurrogate(key)) fail('cannot canonicalize a key with a lone UTF-16 surrogate');
      if (!first) out.push(',');
      first = false;
      out.push(JSON.stringify(key), ':');
      emit(v, out, seen);
    }
    out.push('}');
  }
  seen.delete(obj);
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `sha256:<hex>` of the canonical form of `value`. */
export function canonicalDigest(value: unknown): string {
  return `sha256:${sha256Hex(canonicalize(value))}`;
}

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
