import type { GatewayConfig } from './gateway-config.js';

const recorded = new WeakMap<GatewayConfig, readonly string[]>();

/** Remembers what reading a configuration warned of (deprecated keys), for whoever starts from it. */
export function recordWarnings(config: GatewayConfig, warnings: readonly string[]): void {
  if (warnings.length > 0) recorded.set(config, warnings);
}

/**
 * What to warn of when a gateway starts from `config` (and what `check-config` prints): keys
 * deprecated in its file. One line each; names keys, never values.
 */
export function startWarnings(config: GatewayConfig): string[] {
  return [...(recorded.get(config) ?? [])];
}
