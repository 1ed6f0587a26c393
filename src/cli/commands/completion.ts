/**
 * `cairn completion bash|zsh|fish`: a completion script for the shell, generated from the
 * program's own command tree, so it never drifts from what `cairn` accepts.
 */
import { Argument, Option, type Command } from 'commander';
import { AGENTS } from '../../hooks/agents.js';
import type { CliIO } from '../io.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

interface Node {
  /** Space-separated command path, '' for the program itself. */
  path: string;
  description: string;
  subcommands: string[];
  options: { flag: string; description: string }[];
  /** Values of the command's first argument, when they are a fixed set. */
  values: string[];
}

function walk(cmd: Command, prefix: string, out: Node[]): void {
  const agentIds = AGENTS.map((a) => a.id);
  const args = (cmd as unknown as { registeredArguments?: readonly Argument[] }).registeredArguments ?? [];
  const first = args[0];
  let values = first?.argChoices ? [...first.argChoices] : [];
  if (first !== undefined && /^agent$/.test(first.name())) values = agentIds;
  if (prefix === 'completion') values = [...SHELLS];
  out.push({
    path: prefix,
    description: cmd.description(),
    subcommands: cmd.commands.map((c) => c.name()),
    options: [...cmd.options.map((o: Option) => ({ flag: o.long ?? o.short ?? '', description: o.description })), { flag: '--help', description: 'show help' }].filter((o) => o.flag !== ''),
    values,
  });
  for (const sub of cmd.commands) walk(sub, prefix === '' ? sub.name() : `${prefix} ${sub.name()}`, out);
}

function words(node: Node): string {
  return [...node.subcommands, ...node.values, ...node.options.map((o) => o.flag)].join(' ');
}

function bash(nodes: Node[]): string {
  const cases = nodes.map((n) => `    "${n.path}") echo "${words(n)}" ;;`).join('\n');
  return `# cairn completion for bash: eval "$(cairn completion bash)" in ~/.bashrc
_cairn_words() {
  case "$1" in
${cases}
    *) return 1 ;;
  esac
}
_cairn() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) continue ;; esac
    if _cairn_words "\${path:+$path }$w" >/dev/null; then path="\${path:+$path }$w"; fi
  done
  COMPREPLY=($(compgen -W "$(_cairn_words "$path")" -- "$cur"))
  [ \${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
  return 0
}
complete -o default -F _cairn cairn
`;
}

function zsh(nodes: Node[]): string {
  const cases = nodes.map((n) => `    "${n.path}") reply=(${words(n)}) ;;`).join('\n');
  return `#compdef cairn
# cairn completion for zsh: eval "$(cairn completion zsh)" in ~/.zshrc (after compinit)
_cairn_words() {
  case "$1" in
${cases}
    *) return 1 ;;
  esac
}
_cairn() {
  local path_="" w i
  local -a reply
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    [[ "$w" == -* ]] && continue
    if _cairn_words "\${path_:+$path_ }$w"; then path_="\${path_:+$path_ }$w"; fi
  done
  reply=()
  _cairn_words "$path_"
  compadd -- $reply
  _files
}
compdef _cairn cairn
`;
}

function fishQuote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function fish(nodes: Node[]): string {
  const lines = ['# cairn completion for fish: cairn completion fish > ~/.config/fish/completions/cairn.fish', 'complete -c cairn -f'];
  for (const n of nodes) {
    const parts = n.path === '' ? [] : n.path.split(' ');
    // This node is current when its whole path has been typed and none of its subcommands yet.
    const seen = parts.map((p) => `__fish_seen_subcommand_from ${p}`);
    const notDeeper = n.subcommands.length > 0 ? [`not __fish_seen_subcommand_from ${n.subcommands.join(' ')}`] : [];
    const cond = parts.length === 0 ? '__fish_use_subcommand' : [...seen, ...notDeeper].join('; and ');
    const node = (name: string) => nodes.find((m) => m.path === (n.path === '' ? name : `${n.path} ${name}`));
    for (const sub of n.subcommands) lines.push(`complete -c cairn -n ${fishQuote(cond)} -a ${fishQuote(sub)} -d ${fishQuote(node(sub)?.description ?? '')}`);
    for (const v of n.values) lines.push(`complete -c cairn -n ${fishQuote(cond)} -a ${fishQuote(v)}`);
    for (const o of n.options) if (o.flag.startsWith('--')) lines.push(`complete -c cairn -n ${fishQuote(cond)} -l ${o.flag.slice(2)} -d ${fishQuote(o.description)}`);
  }
  return `${lines.join('\n')}\n`;
}

export function registerCompletionCommand(program: Command, io: CliIO): void {
  program
    .command('completion')
    .description('Print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'bash | zsh | fish').choices(SHELLS))
    .addHelpText('after', '\nInstall:\n  bash  echo \'eval "$(cairn completion bash)"\' >> ~/.bashrc\n  zsh   echo \'eval "$(cairn completion zsh)"\' >> ~/.zshrc   (after compinit)\n  fish  cairn completion fish > ~/.config/fish/completions/cairn.fish')
    .action((shell: Shell) => {
      const nodes: Node[] = [];
      walk(program, '', nodes);
      io.stdout.write(shell === 'bash' ? bash(nodes) : shell === 'zsh' ? zsh(nodes) : fish(nodes));
    });
}
