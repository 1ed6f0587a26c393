// Run by bundle-cli.mjs in a child process whose stdout is a pipe, as a script's or an agent's
// is: prints the help text of every command path and the version, exactly as the built full CLI
// (dist/bin/main.mjs, through main()) prints them to a pipe, as one JSON object. `cairn` prints
// these from dist/bin/help.json without loading the CLI framework (src/cli/fast-lane.ts).
import { pathToFileURL } from 'node:url';

const { buildProgram, main } = await import(pathToFileURL(process.argv[2]).href);
const run = async (argv) => {
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (s) => ((stdout += s), true) }, stderr: { write: (s) => ((stderr += s), true) }, env: {}, cwd: process.cwd() };
  const code = await main(argv, io);
  return { code, stdout, stderr };
};
const table = {};
const take = async (key, argv) => {
  const r = await run(argv);
  // Only what the full CLI prints cleanly: anything else stays with the full CLI.
  if (r.code === 0 && r.stderr === '' && r.stdout !== '') table[key] = r.stdout;
};
const silent = { stdout: { write: () => true }, stderr: { write: () => true }, env: {}, cwd: process.cwd() };
const paths = [];
const walk = (command, prefix) => {
  for (const sub of command.commands) {
    const path = [...prefix, sub.name()];
    paths.push(path);
    walk(sub, path);
  }
};
walk(buildProgram(silent), []);
await take('help:', ['--help']);
await take('version', ['--version']);
for (const path of paths) await take(`help:${path.join(' ')}`, [...path, '--help']);
process.stdout.write(JSON.stringify(table));
