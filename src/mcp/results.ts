import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { CairnError, errnoCode, isCodedError, type ErrorDocument } from '../core/errors.js';

/** The seed's error document: what an `isError` tool result carries as its text. */
export type ToolErrorPayload = ErrorDocument;

/** Any thrown value as `{code, message, path?, details?}`; codes stay stable, unknown failures are ERR_INTERNAL. */
export function errorPayload(e: unknown): ToolErrorPayload {
  if (isCodedError(e)) return e.toJSON();
  if (e instanceof Error) {
    const code = errnoCode(e);
    if (code !== undefined && code.startsWith('ERR_')) return { code, message: e.message };
    // A file-system failure the library let through (ENOTDIR, EACCES, ENOSPC…): an I/O error, not a bug.
    if (code !== undefined && /^E[A-Z]+$/.test(code)) return { code: 'ERR_IO', message: e.message, details: { errno: code } };
    return { code: 'ERR_INTERNAL', message: e.message };
  }
  return { code: 'ERR_INTERNAL', message: String(e) };
}

export function errorResult(e: unknown): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorPayload(e)) }] };
}

/** A successful result: `value` as structuredContent, `text` (default the same value) as its JSON text. */
export function jsonResult(value: object, text: unknown = value): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(text) }], structuredContent: value as Record<string, unknown> };
}

/**
 * Arguments that fail a tool's input schema, as one CairnError naming every bad field, so the
 * agent can correct all of them in one retry. ERR_INVALID_OPTION is the code the library and
 * the CLI use for the same mistakes (`maxFiles: 0`, …).
 */
export function invalidArguments(tool: string, error: z.ZodError): CairnError {
  const issues = error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
  const summary = issues.map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`)).join('; ');
  return new CairnError('ERR_INVALID_OPTION', `invalid arguments for ${tool}: ${summary}; see the tool's input schema (tools/list)`, { details: { tool, issues } });
}
