/**
 * Debug channels: `CAIRN_DEBUG=inventory` (several: `inventory,store`; every one: `*`) makes a
 * part say on stderr why a run went the way it did (the scan's fast path or walk, and the
 * reason), where it otherwise stays silent. Read once per process; off, a channel costs a
 * null check.
 */
export function debugChannel(name: string, env: NodeJS.ProcessEnv = process.env): ((message: string) => void) | null {
  const on = (env.CAIRN_DEBUG ?? '').split(/[\s,]+/).some((c) => c === name || c === '*');
  return on ? (message) => void process.stderr.write(`cairn:${name} ${message}\n`) : null;
}
