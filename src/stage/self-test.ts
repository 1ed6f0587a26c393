import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { STAGE_SNAPSHOT_MAX_BYTES } from './constants.js';
import { stageSnapshotPath } from './read.js';
import { validateStageSnapshot } from './validate.js';
import { writeStageSnapshot } from './write.js';

export interface StageSelfTestResult {
  ok: boolean;
  /** One line per failed expectation; empty when ok. */
  problems: string[];
}

/**
 * The upstream validator's `--self-test`: proves, in a throw-away root under the OS temp dir,
 * that a freshly written note validates in both modes, that a capped note validates, and that
 * a missing note (1) and a symlinked note (2) get their exit codes. Removes its root afterwards.
 */
export async function selfTestStageSnapshot(): Promise<StageSelfTestResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-stage-self-test-'));
  const problems: string[] = [];
  const expectExit = (task: string, validateFrontmatter: boolean, want: number, what: string): void => {
    const check = validateStageSnapshot(root, task, { validateFrontmatter });
    if (check.exitCode !== want) problems.push(`${what}: exit ${check.exitCode}, expected ${want} (${check.problems.join('; ')})`);
  };
  try {
    const fields = { root, stage: 'plan', command: '/dr-plan', capturedBy: 'agent', recommendedNext: '/dr-do', env: {} };
    await writeStageSnapshot({ ...fields, task: 'SELF-0001', body: 'Summary\n', options: ['/dr-do SELF-0001 | execute the plan'] });
    expectExit('SELF-0001', false, 0, 'a written note (presence mode)');
    expectExit('SELF-0001', true, 0, 'a written note (--validate-frontmatter)');

    const capped = await writeStageSnapshot({ ...fields, task: 'SELF-0002', body: 'x'.repeat(2 * STAGE_SNAPSHOT_MAX_BYTES) });
    if (!capped.truncated || capped.sizeBytes > STAGE_SNAPSHOT_MAX_BYTES) problems.push(`an oversized body was not capped (${capped.sizeBytes} bytes)`);
    expectExit('SELF-0002', true, 0, 'a truncated note (--validate-frontmatter)');

    expectExit('SELF-0003', true, 1, 'a missing note');

    fs.symlinkSync(stageSnapshotPath(root, 'SELF-0001'), stageSnapshotPath(root, 'SELF-0004'));
    expectExit('SELF-0004', false, 2, 'a symlinked note (presence mode)');
    expectExit('SELF-0004', true, 2, 'a symlinked note (--validate-frontmatter)');
  } catch (e) {
    problems.push(`self-test could not run: ${(e as Error).message}`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  return { ok: problems.length === 0, problems };
}
