/**
 * Path containment shared by every part of cairn that takes a path from a caller and must keep
 * it inside a base directory (the MCP root allowlist, the stage notes' snapshot directory).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError } from './errors.js';

/** Lexical containment of two absolute paths; a name that merely starts with `..` (`..cache`) is inside. */
export function isSameOrInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** As isSameOrInside, but the parent itself does not count: `child` lies strictly below it. */
export function isStrictlyInside(child: string, parent: string): boolean {
  return path.relative(parent, child) !== '' && isSameOrInside(child, parent);
}

export interface ContainedPathOptions {
  /** How the error message names the path; default the path as given, quoted. */
  what?: string;
  /** What the caller should do instead; default "name a path inside the root". */
  hint?: string;
  /** Exit code of the error; default the one of ERR_CONTAINMENT. */
  exitCode?: number;
}

function entryKind(p: string): 'missing' | 'symlink' | 'other' {
  try {
    return fs.lstatSync(p).isSymbolicLink() ? 'symlink' : 'other';
  } catch {
    return 'missing';
  }
}

/**
 * Resolves `p` (relative to `base`, or absolute) and proves it stays inside `base` (which must
 * be a real path), following any symlinks on the existing part of the path. The path itself
 * need not exist yet: the result is the realpath of its deepest existing ancestor joined with
 * the missing rest. A dangling or looping link on the way is refused, since creating anything
 * through it could land anywhere. Throws ERR_CONTAINMENT; `what` names the path in its message
 * (default: `p` quoted), `hint` says what to do, `exitCode` is the CLI's.
 */
export function containedPath(base: string, p: string, options: ContainedPathOptions = {}): string {
  const what = options.what ?? JSON.stringify(p);
  const hint = options.hint ?? 'name a path inside the root';
  const errorOptions = options.exitCode === undefined ? { path: p } : { path: p, exitCode: options.exitCode };
  const abs = path.resolve(base, p);
  let existing = abs;
  const rest: string[] = [];
  let retries = 0;
  for (;;) {
    try {
      existing = fs.realpathSync(existing);
      break;
    } catch {
      const kind = entryKind(existing);
      // Another process created it between the two calls (two writers on one root): look again.
      if (kind === 'other' && retries++ < 8) continue;
      if (kind !== 'missing') {
        throw new CairnError('ERR_CONTAINMENT', `${what} goes through ${existing}, a link that does not resolve (dangling or a loop); ${hint}`, errorOptions);
      }
      const parent = path.dirname(existing);
      if (parent === existing) break;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
  const real = path.join(existing, ...rest);
  if (!isSameOrInside(real, base)) {
    throw new CairnError('ERR_CONTAINMENT', `${what} resolves outside ${base}; ${hint}`, errorOptions);
  }
  return real;
}
