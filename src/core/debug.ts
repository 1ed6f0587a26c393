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

/**
 * For a part that falls back quietly (a memo it cannot read, a stamp it cannot write): the
 * reason in a word or two (the errno code, else the message), or null when the failure is the
 * ordinary absence of something not made yet (ENOENT), which is no fallback worth a line.
 */
export function fallbackReason(e: unknown): string | null {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  if (code === 'ENOENT') return null;
  if (typeof code === 'string') return code;
  return e instanceof Error ? e.message : String(e);
}
