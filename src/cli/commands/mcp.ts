import type { Command } from 'commander';
import type { CliIO } from '../io.js';

const MCP_HELP = `
Runs a Model Context Protocol server on stdin/stdout for coding agents (Claude Code, Cursor,
Codex…). The client starts it; you do not run it by hand. It prints nothing on stdout but protocol
messages, and stops when the client closes the connection.

Tools:
  cairn_repo_snapshot   content-addressed inventory of a directory (alias: axiom_repo_snapshot)
  cairn_session_pre     start an iteration (git state, key files, whole-tree inventory)
  cairn_session_post    finish it: files changed, commits, tests found; saved to the store
  cairn_stage_write     write a task's resumable stage note
  cairn_stage_read      read a task's stage note
  cairn_store_list      list sessions / snapshot ids in the store
  cairn_store_show      read one stored snapshot
Resources: cairn://schema/RepoSnapshot and axiom://schema/RepoSnapshot (the JSON Schema).

Roots: every path a client names (root, iterationDir, globs) must resolve, after symlinks, inside
one of the --root directories; anything else is refused with ERR_ROOT_NOT_ALLOWED or
ERR_CONTAINMENT. With one --root, tools may omit "root".

Example client configuration (e.g. .mcp.json):
  { "mcpServers": { "cairn": { "command": "cairn", "args": ["mcp", "--root", "/path/to/project"] } } }`;

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Registers `cairn mcp`. The server and its SDK load only when this command runs. */
export function registerMcpCommands(program: Command, io: CliIO): void {
  program
    .command('mcp')
    .description('Run the cairn MCP server over stdio')
    .requiredOption('--root <dir>', 'a directory the client may work in (repeatable)', collect)
    .option('--store <url>', 'snapshot store for iteration records: file:DIR, s3://bucket/prefix?endpoint=…, postgres://… (default file:<first root>/.cairn/store)')
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
      // The session ends when the client closes our stdin, or goes away so that writing to it
      // fails (EPIPE): either way the server closes, in-flight calls are aborted and we exit 0.
      const closed = new Promise<void>((resolve) => {
        transport.onclose = () => resolve();
        process.stdin.once('end', () => resolve());
        process.stdin.once('close', () => resolve());
        process.stdout.on('error', () => resolve());
      });
      await server.connect(transport);
      io.stderr.write(`cairn mcp: serving ${opts.root.length} root(s) on stdio\n`);
      await closed;
      await server.close();
      process.stdin.destroy();
    });
}
