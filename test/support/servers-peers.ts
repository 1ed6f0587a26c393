/**
 * Runs a store module where its optional peer dependency cannot be found: the module is bundled
 * (with the peer left external) into a temp dir outside any node_modules tree and run by a real
 * `node` process.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from './servers.js';

export async function runWithoutPeer(moduleRelPath: string, peer: string, script: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-peer-'));
  try {
    await build({
      entryPoints: [path.join(REPO_ROOT, moduleRelPath)],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: path.join(dir, 'store.mjs'),
      external: [peer],
      logLevel: 'silent',
    });
    writeFileSync(path.join(dir, 'main.mjs'), script);
    const r = spawnSync(process.execPath, ['main.mjs'], { cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_PATH: '' } });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
