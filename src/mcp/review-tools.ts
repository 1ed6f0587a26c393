/**
 * The review tools of the MCP server: what an iteration changed and the list of iterations, in
 * pages an agent can afford. Every result is bounded (the bound is in each tool's description):
 * a page of files or iterations with a cursor for the next page and the count of the rest, and
 * a patch cut at a file boundary with the cursor where it stopped.
 */
import { z } from 'zod';
import { iterationFileChanges, listIterations, loadIteration, renderFilePatch, resolveIteration, reviewFile, savedFileChanges, type FileChange } from '../review/index.js';
import { PAGE_CHARS, RESULT_BOUND, cursorStart, pageOf } from './paging.js';
import { jsonResult } from './results.js';
import type { RootAllowlist } from './roots.js';
import type { ToolTable } from './tool-table.js';

const READ_ONLY = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;
/** Most characters of patch text in one result. */
export const PATCH_PAGE_CHARS = 64 * 1024;

export function addReviewTools(tools: ToolTable, allow: RootAllowlist, rootInput: z.ZodOptional<z.ZodString>): void {
  tools.add('cairn_session_diff', {
    title: 'How an iteration changed the project',
    description:
      'What an iteration changed, pre → post, committed or not: each file with status (added, modified, deleted, renamed with oldPath, typechange), +/− line counts and a binary flag; with format "patch", git\'s unified diff of those files. ' +
      'Call it to review your own or another agent\'s work before committing or restoring. ' +
      `Bounded: at most limit files per page (default 100, max 500) and ${PAGE_CHARS / 1024} KiB of them, and at most ${PATCH_PAGE_CHARS / 1024} KiB of patch text, cut at a file boundary; pass nextCursor back to get the next page; totals count every file. The result stays under ${(RESULT_BOUND + PATCH_PAGE_CHARS) / 1024} KiB of JSON.`,
    input: {
      root: rootInput,
      iteration: z.string().min(1).optional().describe('Iteration number (3 or 003) or directory; default the latest.'),
      format: z.enum(['files', 'patch']).default('files').describe('"files": the list with counts; "patch": the unified diff of the page\'s files as well.'),
      limit: z.number().int().min(1).max(500).default(100).describe('Most files in this page.'),
      cursor: z.string().optional().describe('nextCursor of the previous page; omit for the first.'),
    },
    annotations: READ_ONLY,
    run: (args) => {
      const root = allow.resolveRoot(args.root);
      const it = loadIteration(root, resolveIteration(root, args.iteration));
      // The file list comes from the review kept at post when there is one (no inventory or content read).
      const changes = (args.format === 'files' ? savedFileChanges(it, { within: root }) : null) ?? iterationFileChanges(root, it, { hunks: args.format === 'patch' });
      const start = cursorStart(args.cursor, changes.length);
      const first = pageOf(changes.map(reviewFile), args.cursor, args.limit);
      let end = changes.length - first.remaining;
      let patch: string | undefined;
      let cut = false;
      if (args.format === 'patch') {
        patch = '';
        for (let i = start; i < end; i++) {
          const block = renderFilePatch(changes[i] as FileChange);
          if (patch.length + block.length > PATCH_PAGE_CHARS && i > start) {
            end = i;
            cut = true;
            break;
          }
          patch += block.length > PATCH_PAGE_CHARS ? `${block.slice(0, block.lastIndexOf('\n', PATCH_PAGE_CHARS) + 1)}# cairn: this file's patch is cut here; \`cairn session diff ${it.iteration}\` prints all of it\n` : block;
        }
      }
      const totals = { files: changes.length, additions: 0, deletions: 0 };
      for (const c of changes) {
        totals.additions += c.additions;
        totals.deletions += c.deletions;
      }
      const page = changes.slice(start, end);
      const result: Record<string, unknown> = {
        iteration: it.iteration,
        totals,
        files: page.map(reviewFile),
        notCaptured: page.filter((c) => c.notCaptured !== undefined).map((c) => c.path),
        remaining: changes.length - end,
        nextCursor: end < changes.length ? String(end) : null,
      };
      if (patch !== undefined) {
        result.patch = patch;
        result.patchCut = cut;
      }
      return jsonResult(result);
    },
  });

  tools.add('cairn_session_list', {
    title: 'List the iterations',
    description:
      'Every iteration of a project, oldest first: number, start time, duration, files changed, +/− lines, commits, tests (passed/failed/skipped), whether it is finished, and restored (null, or the restore that put the project back to it: to pre|post, id, time). ' +
      `Call it to find the iteration to diff, report or restore. Bounded: at most limit iterations per page (default 50, max 200) and ${PAGE_CHARS / 1024} KiB of them; pass nextCursor back for the next page.`,
    input: {
      root: rootInput,
      limit: z.number().int().min(1).max(200).default(50).describe('Most iterations in this page.'),
      cursor: z.string().optional().describe('nextCursor of the previous page; omit for the first.'),
    },
    annotations: READ_ONLY,
    run: (args) => {
      const root = allow.resolveRoot(args.root);
      const rows = listIterations(root);
      const page = pageOf(rows, args.cursor, args.limit);
      return jsonResult({ total: page.total, iterations: page.items, remaining: page.remaining, nextCursor: page.nextCursor });
    },
  });
}
