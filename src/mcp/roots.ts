import * as fs from 'node:fs';
import * as path from 'node:path';
import { CairnError } from '../core/errors.js';
import { isSameOrInside } from '../core/paths.js';

/**
 * The allowlist of directories an MCP client may touch. Every root is realpath'd once at start;
 * every path a client names is realpath'd (its nearest existing ancestor, for paths still to be
 * created) and must lie inside one of them, so neither `..` nor a planted symlink gets out.
 */
export class RootAllowlist {
  readonly roots: readonly string[];

  private constructor(roots: string[]) {
    this.roots = roots;
  }

  /** Validates the operator's `--root` list (the upstream startup rule: each must be an existing directory). */
  static fromPaths(paths: readonly string[], cwd: string): RootAllowlist {
    if (paths.length === 0) throw new CairnError('ERR_ROOT_REQUIRED', 'cairn mcp needs at least one --root <dir>: the directories the agent may snapshot and write notes in');
    const roots: string[] = [];
    for (const p of paths) {
      const abs = path.resolve(cwd, p);
      let real: string;
      try {
        real = fs.realpathSync(abs);
      } catch {
        throw new CairnError('ERR_ROOT_NOT_DIR', `--root ${abs} does not exist; pass an existing directory`, { path: abs });
      }
      if (!fs.statSync(real).isDirectory()) throw new CairnError('ERR_ROOT_NOT_DIR', `--root ${abs} is not a directory`, { path: abs });
      if (!roots.includes(real)) roots.push(real);
    }
    return new RootAllowlist(roots);
  }

  /**
   * The seed's root resolution: no root and exactly one allowlisted root → that root; no root
   * otherwise → ERR_ROOT_REQUIRED; a relative, missing, non-directory or outside root →
   * ERR_ROOT_NOT_ALLOWED. Returns the realpath.
   */
  resolveRoot(root: string | undefined): string {
    if (root === undefined || root === '') {
      if (this.roots.length === 1) return this.roots[0] as string;
      throw new CairnError('ERR_ROOT_REQUIRED', `pass "root": the server allows ${this.roots.length} roots (${this.roots.join(', ')})`);
    }
    if (!path.isAbsolute(root)) throw new CairnError('ERR_ROOT_NOT_ALLOWED', `root must be an absolute path, got ${JSON.stringify(root)}`, { path: root });
    let real: string;
    try {
      real = fs.realpathSync(root);
    } catch {
      throw new CairnError('ERR_ROOT_NOT_ALLOWED', `root ${root} does not exist`, { path: root });
    }
    if (!this.roots.some((r) => isSameOrInside(real, r))) {
      throw new CairnError('ERR_ROOT_NOT_ALLOWED', `root ${root} is outside the allowed roots (${this.roots.join(', ')})`, { path: root });
    }
    if (!fs.statSync(real).isDirectory()) throw new CairnError('ERR_ROOT_NOT_ALLOWED', `root ${root} is not a directory`, { path: root });
    return real;
  }
}
