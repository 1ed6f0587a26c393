import type { Command } from 'commander';
import type { CliIO } from '../io.js';

const MCP_HELP = `
Runs a Model Context Protocol server on stdin/stdout for coding agents (Claude Code, Cursor, Codex…).
Tools: cairn_repo_snapshot (alias axiom_repo_snapshot), cairn_session_pre, cairn_session_post,
cairn_stage_write, cairn_stage_read, cairn_store_list, cairn_store_show. Every path a client names
must lie inside one of the --root directories.

Example client configuration:
  { "command": "cairn", "args": ["mcp", "--root", "/path/to/project"] }`;

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Registers `cairn mcp`. The server and its SDK load only when this command runs. */
export function registerMcpCommands(program: Command, io: CliIO): void {
  program
    .command('mcp')
    .description('Run the cairn MCP server over stdio')
    .requiredOption('--root <dir>', 'a directory the client may work in (repeatable)', collect)
    .option('--store <url>', 'snapshot store for iteration records (default file:<first root>/.cairn/store)')
    .addHelpText('after', MCP_HELP)
    .action(async (opts: { root: string[]; store?: string }) => {
      const [{ createCairnMcpServer }, { StdioServerTransport }] = await Promise.all([
        import('../../mcp/server.js'),
        import('@modelcontextprotocol/sdk/server/stdio.js'),
      ]);
      const serverOptions: Parameters<typeof createCairnMcpServer>[0] = { roots: opts.root, cwd: io.cwd, env: io.env };
      if (opts.store !== undefined) serverOptions.store = opts.store;
      const server = createCairnMcpServer(serverOptions);
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        transport.onclose = () => resolve();
        process.stdin.once('end', () => resolve());
      });
      await server.connect(transport);
      io.stderr.write(`cairn mcp: serving ${opts.root.length} root(s) on stdio\n`);
      await closed;
      await server.close();
    });
}
