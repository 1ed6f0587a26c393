import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CairnError } from '../core/errors.js';
import { errorResult, invalidArguments } from './results.js';

export interface ToolDefinition<S extends z.ZodRawShape> {
  title: string;
  /** Says what the tool does and when an agent should call it. */
  description: string;
  input: S;
  output?: z.ZodRawShape;
  annotations: ToolAnnotations;
  /** Runs with validated arguments; `signal` aborts when the client cancels or disconnects. A throw becomes an isError result. */
  run: (args: z.output<z.ZodObject<S>>, signal: AbortSignal) => Promise<CallToolResult> | CallToolResult;
}

const LOOSE_CALL_REQUEST = z.object({ method: z.literal('tools/call') }).loose();

type Dispatch = (args: unknown, signal: AbortSignal) => Promise<CallToolResult> | CallToolResult;

/**
 * The server's tools and their one call path. The SDK lists the tools; calls go through `call`,
 * which validates arguments strictly (an unknown or misspelled key is an error, not silently
 * dropped) and turns every failure — bad arguments, an unknown tool, a thrown error — into an
 * isError result whose text is the seed's `{code, message, path?, details?}`. The SDK's own
 * call handler would answer bad arguments with plain prose instead.
 */
export class ToolTable {
  private readonly tools = new Map<string, Dispatch>();

  constructor(private readonly server: McpServer) {}

  add<S extends z.ZodRawShape>(name: string, def: ToolDefinition<S>): void {
    const input = z.object(def.input).strict();
    this.tools.set(name, (args, signal) => {
      const parsed = input.safeParse(args ?? {});
      if (!parsed.success) throw invalidArguments(name, parsed.error);
      return def.run(parsed.data, signal);
    });
    // The SDK only lists the tool: `install` routes every call through `call`.
    const listed = (args: unknown, extra: { signal: AbortSignal }): Promise<CallToolResult> => this.call(name, args, extra.signal);
    const config = { title: def.title, description: def.description, inputSchema: input, annotations: def.annotations };
    if (def.output === undefined) this.server.registerTool(name, config, listed);
    else this.server.registerTool(name, { ...config, outputSchema: def.output }, listed);
  }

  get names(): string[] {
    return [...this.tools.keys()];
  }

  async call(name: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> {
    const dispatch = this.tools.get(name);
    if (dispatch === undefined) {
      return errorResult(new CairnError('ERR_UNKNOWN_TOOL', `no tool named ${JSON.stringify(name)}; this server has ${this.names.join(', ')}`, { details: { tool: name } }));
    }
    try {
      return await dispatch(args, signal);
    } catch (e) {
      return errorResult(e);
    }
  }

  /** Routes tools/call through `call` (replaces the SDK's handler; call after the last `add`). */
  install(): void {
    // Registered under a loose schema so that the SDK's server checks the request itself and
    // answers a malformed one (no tool name, arguments not an object) with JSON-RPC -32602
    // Invalid params; the strict schema here would make it -32603 Internal error.
    this.server.server.setRequestHandler(LOOSE_CALL_REQUEST, (request, extra) => {
      const { params } = CallToolRequestSchema.parse(request);
      return this.call(params.name, params.arguments, extra.signal);
    });
  }
}
