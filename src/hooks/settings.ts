/**
 * Merging cairn's entries into an agent's hook settings file, and taking exactly them out again.
 * The user's own settings and hooks are never touched: cairn's entries are the hook commands that
 * run `… cairn … hook <agent>`, found and replaced in place (so installing twice leaves one copy),
 * and uninstall removes those and any container they alone filled (an empty `"hooks": {}` the
 * file had before cannot be told from one cairn emptied, and goes too).
 *
 * The file is rewritten only when that cannot change a byte of anything else: it must be plain JSON
 * (no comments) that reads back exactly as `JSON.stringify` with its own indentation writes it.
 * Anything else is refused with the entries to add by hand (or rewritten with `reformat`, which
 * keeps a backup). Writes go to a temp file renamed into place, keeping the file's mode.
 *
 * The file is reached from its scope's base (the project root, or the home directory for scope
 * user) without following a link in any component (ContainedDir): a planted `.claude` link cannot
 * carry the write, the read or the removal anywhere else; a link at the file itself is refused.
 */
import * as path from 'node:path';
import { ContainedDir, rootedAt } from '../core/contained-dir.js';
import { parseJsonBounded } from '../core/bounded-json.js';
import { CairnError } from '../core/errors.js';
import type { AgentSpec } from './agents.js';

type Json = Record<string, unknown>;

export interface SettingsChange {
  file: string;
  /** Events whose cairn entry was added, updated or removed. */
  events: string[];
  changed: boolean;
  backup?: string;
}

export interface SettingsStatus {
  file: string;
  exists: boolean;
  /** Events that have cairn's entry, and the command it runs. */
  installed: { event: string; command: string }[];
  missing: string[];
  problem?: string;
}

const MAX_SETTINGS_BYTES = 4 * 1024 * 1024;

export function isCairnCommand(command: unknown, agent: AgentSpec): boolean {
  return typeof command === 'string' && new RegExp(`cairn[^\\s'"]*['"]?\\s+hook\\s+${agent.id}(\\s|$)`).test(command);
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

interface Loaded {
  doc: Json;
  exists: boolean;
  indent: string | number;
  /** The text would not read back byte for byte (odd formatting). */
  odd: boolean;
  text: string;
}

function detectIndent(text: string): string | number {
  const m = /^\{\r?\n([ \t]+)\S/.exec(text);
  if (m === null) return 2;
  return m[1]!.startsWith('\t') ? m[1]! : m[1]!.length;
}

function serialise(doc: Json, indent: string | number): string {
  return `${JSON.stringify(doc, null, indent)}\n`;
}

/** The settings file's directory, opened from `within` with no link followed below it; null when missing. */
function openDir(file: string, within: string | undefined, create: boolean): ContainedDir | null {
  const { root, parts } = rootedAt(path.dirname(file), within);
  return ContainedDir.open(root, parts, { create });
}

function withDir<T>(file: string, within: string | undefined, create: boolean, fn: (dir: ContainedDir | null, name: string) => T): T {
  const dir = openDir(file, within, create);
  try {
    return fn(dir, path.basename(file));
  } finally {
    dir?.close();
  }
}

function load(file: string, within: string | undefined): Loaded {
  const text = withDir(file, within, false, (dir, name) => {
    const st = dir?.lstat(name) ?? null;
    if (dir === null || st === null) return null;
    if (!st.isFile()) throw new CairnError('ERR_SETTINGS', `${file} is not a regular file (a link or a directory); cairn will not write through it`, { exitCode: 2, path: file });
    if (st.size > MAX_SETTINGS_BYTES) throw new CairnError('ERR_SETTINGS', `${file} is ${st.size} bytes, too large for a settings file`, { exitCode: 2, path: file });
    return dir.readFile(name, { maxBytes: MAX_SETTINGS_BYTES })?.toString('utf8') ?? null;
  });
  if (text === null) return { doc: {}, exists: false, indent: 2, odd: false, text: '' };
  if (text.trim() === '') return { doc: {}, exists: true, indent: 2, odd: false, text };
  let doc: unknown;
  try {
    doc = parseJsonBounded(text, { file, what: 'settings file' });
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause;
    const why = cause instanceof Error ? cause.message : (e as Error).message;
    throw new CairnError('ERR_SETTINGS', `${file} is not plain JSON (${why}; comments and trailing commas are not JSON); cairn will not rewrite it. Add the entries shown below by hand, or remove the comments and run this again`, { exitCode: 2, path: file });
  }
  if (!isObject(doc)) throw new CairnError('ERR_SETTINGS', `${file} does not hold a JSON object; cairn will not rewrite it`, { exitCode: 2, path: file });
  const indent = detectIndent(text);
  const odd = serialise(doc, indent) !== text && `${JSON.stringify(doc, null, indent)}` !== text;
  return { doc, exists: true, indent, odd, text };
}

function write(file: string, within: string | undefined, loaded: Loaded, doc: Json, reformat: boolean): string | undefined {
  let backup: string | undefined;
  if (loaded.exists && loaded.odd && !reformat) {
    throw new CairnError('ERR_SETTINGS_FORMAT', `${file} is formatted in a way cairn cannot keep byte for byte; nothing was changed. Run again with --reformat to rewrite it as standard JSON (a backup is kept), or add the entries shown below by hand`, { exitCode: 2, path: file });
  }
  const keepsNewline = !loaded.exists || loaded.text.endsWith('\n') || loaded.odd;
  const text = keepsNewline ? serialise(doc, loaded.indent) : JSON.stringify(doc, null, loaded.indent);
  withDir(file, within, true, (dir, name) => {
    if (loaded.exists && loaded.odd) {
      backup = `${file}.cairn-backup`;
      dir!.writeFile(`${name}.cairn-backup`, loaded.text, { mode: 0o600 });
    }
    dir!.writeFile(name, text, { mode: (dir!.lstat(name)?.mode ?? 0o644) & 0o777 });
  });
  return backup;
}

function hookEntry(agent: AgentSpec, command: string, timeoutSeconds: number): Json {
  if (agent.layout === 'cursor') return { command };
  const entry: Json = { type: 'command', command };
  if (agent.timeoutUnit === 's') entry.timeout = timeoutSeconds;
  if (agent.timeoutUnit === 'ms') entry.timeout = timeoutSeconds * 1000;
  return entry;
}

/** The entries cairn adds, as a settings fragment a person can paste. */
export function settingsFragment(agent: AgentSpec, command: string, timeoutSeconds: number): Json {
  const hooks: Json = {};
  for (const event of Object.keys(agent.events)) {
    hooks[event] = agent.layout === 'cursor' ? [hookEntry(agent, command, timeoutSeconds)] : [{ hooks: [hookEntry(agent, command, timeoutSeconds)] }];
  }
  return agent.layout === 'cursor' ? { version: 1, hooks } : { hooks };
}

/** Every cairn entry of `event`, as [group index, hook index] (claude layout) or [index, -1] (cursor). */
function ours(agent: AgentSpec, list: unknown[]): [number, number][] {
  const out: [number, number][] = [];
  list.forEach((item, i) => {
    if (!isObject(item)) return;
    if (agent.layout === 'cursor') {
      if (isCairnCommand(item.command, agent)) out.push([i, -1]);
      return;
    }
    if (Array.isArray(item.hooks)) item.hooks.forEach((h, j) => isObject(h) && isCairnCommand(h.command, agent) && out.push([i, j]));
  });
  return out;
}

/** Options of install and uninstall: `within` is the scope's base (project root or home), below which no link is followed. */
export interface SettingsWriteOptions {
  reformat?: boolean;
  within?: string;
}

export function installHooks(agent: AgentSpec, file: string, command: string, timeoutSeconds: number, options: SettingsWriteOptions = {}): SettingsChange {
  const loaded = load(file, options.within);
  const doc = structuredClone(loaded.doc);
  if (agent.layout === 'cursor' && doc.version === undefined) doc.version = 1;
  if (doc.hooks !== undefined && !isObject(doc.hooks)) throw new CairnError('ERR_SETTINGS', `${file}: "hooks" is not an object; cairn will not rewrite it`, { exitCode: 2, path: file });
  const hooks = (doc.hooks ??= {}) as Json;
  const events: string[] = [];
  const entry = hookEntry(agent, command, timeoutSeconds);
  for (const event of Object.keys(agent.events)) {
    if (hooks[event] !== undefined && !Array.isArray(hooks[event])) throw new CairnError('ERR_SETTINGS', `${file}: hooks.${event} is not a list; cairn will not rewrite it`, { exitCode: 2, path: file });
    const list = (hooks[event] ??= []) as unknown[];
    const found = ours(agent, list);
    if (found.length === 0) {
      list.push(agent.layout === 'cursor' ? entry : { hooks: [entry] });
      events.push(event);
      continue;
    }
    // Installed already: bring the first copy up to date in place, drop any others.
    const [gi, hi] = found[0]!;
    const current = hi === -1 ? list[gi] : ((list[gi] as Json).hooks as unknown[])[hi];
    if (JSON.stringify(current) !== JSON.stringify(entry)) {
      if (hi === -1) list[gi] = entry;
      else ((list[gi] as Json).hooks as unknown[])[hi] = entry;
      events.push(event);
    }
    for (const [g, h] of found.slice(1).reverse()) removeAt(list, g, h);
    if (found.length > 1 && !events.includes(event)) events.push(event);
  }
  if (events.length === 0 && loaded.exists) return { file, events, changed: false };
  const backup = write(file, options.within, loaded, doc, options.reformat === true);
  return backup === undefined ? { file, events, changed: true } : { file, events, changed: true, backup };
}

function removeAt(list: unknown[], g: number, h: number): void {
  if (h === -1) {
    list.splice(g, 1);
    return;
  }
  const group = list[g] as Json;
  const inner = group.hooks as unknown[];
  inner.splice(h, 1);
  if (inner.length === 0) list.splice(g, 1);
}

export function uninstallHooks(agent: AgentSpec, file: string, options: SettingsWriteOptions = {}): SettingsChange {
  const loaded = load(file, options.within);
  if (!loaded.exists) return { file, events: [], changed: false };
  const doc = structuredClone(loaded.doc);
  const hooks = isObject(doc.hooks) ? doc.hooks : undefined;
  const events: string[] = [];
  if (hooks !== undefined) {
    for (const event of Object.keys(hooks)) {
      const list = hooks[event];
      if (!Array.isArray(list)) continue;
      const found = ours(agent, list);
      if (found.length === 0) continue;
      for (const [g, h] of found.reverse()) removeAt(list, g, h);
      events.push(event);
      if (list.length === 0) delete hooks[event];
    }
    if (events.length > 0 && Object.keys(hooks).length === 0) delete doc.hooks;
  }
  if (events.length === 0) return { file, events, changed: false };
  const onlyVersion = agent.layout === 'cursor' && Object.keys(doc).length === 1 && doc.version === 1;
  if (Object.keys(doc).length === 0 || onlyVersion) {
    // Nothing but what cairn added is left: the file goes, as if it had never been written.
    withDir(file, options.within, false, (dir, name) => dir?.unlink(name));
    return { file, events, changed: true };
  }
  const backup = write(file, options.within, loaded, doc, options.reformat === true);
  return backup === undefined ? { file, events, changed: true } : { file, events, changed: true, backup };
}

export function hooksStatus(agent: AgentSpec, file: string, within?: string): SettingsStatus {
  let loaded: Loaded;
  try {
    loaded = load(file, within);
  } catch (e) {
    return { file, exists: true, installed: [], missing: Object.keys(agent.events), problem: (e as Error).message };
  }
  const hooks = isObject(loaded.doc.hooks) ? loaded.doc.hooks : {};
  const installed: { event: string; command: string }[] = [];
  const missing: string[] = [];
  for (const event of Object.keys(agent.events)) {
    const list = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const found = ours(agent, list)[0];
    if (found === undefined) {
      missing.push(event);
      continue;
    }
    const [g, h] = found;
    const item = (h === -1 ? list[g] : ((list[g] as Json).hooks as unknown[])[h]) as Json;
    installed.push({ event, command: String(item.command) });
  }
  return { file, exists: loaded.exists, installed, missing };
}
