/**
 * Runs a command where file permissions apply. Root reads mode-000 files anyway, so when the
 * suite runs as root the command runs through `setpriv` with CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH removed from its bounding set: still uid 0 (so it can read the repository
 * wherever it is cloned), but subject to the permission bits like any user.
 */
export function withoutPermissionOverride(command: string, args: readonly string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, [...args]];
  return ['setpriv', ['--bounding-set', '-dac_override,-dac_read_search', '--', command, ...args]];
}
