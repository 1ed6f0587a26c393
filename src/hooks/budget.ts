/**
 * How long a hook may keep its agent waiting (`hooks.timeoutSeconds`, also written as the hook's
 * timeout in the agent's settings). Its own module: the CLI's daemon lane needs it without loading
 * the hook handler.
 */
import type { CairnConfig } from '../config/index.js';

export const DEFAULT_TIMEOUT_SECONDS = 30;

export function timeoutSeconds(config: CairnConfig): number {
  return config.hooks?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
}
