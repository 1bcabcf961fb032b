import type { GatewayConfig } from './gateway-config.js';

const recorded = new WeakMap<GatewayConfig, readonly string[]>();

/** Remembers what reading a configuration warned of (deprecated keys), for whoever starts from it. */
export function recordWarnings(config: GatewayConfig, warnings: readonly string[]): void {
  if (warnings.length > 0) recorded.set(config, warnings);
}

/**
 * What to warn of when a gateway starts from `config` (and what `check-config` prints): keys
 * deprecated in its file, and an open gateway (no API keys) that listens beyond this machine.
 * One line each; names keys, never values.
 */
export function startWarnings(config: GatewayConfig): string[] {
  const warnings = [...(recorded.get(config) ?? [])];
  const { host } = config.server;
  if (config.auth.apiKeys.length === 0 && !isLoopback(host)) {
    warnings.push(
      `No API keys (auth.apiKeys) and listening on ${host}, beyond this machine: anyone who reaches it may use every model. ` +
        'Set auth.apiKeys, or listen on 127.0.0.1 (server.host).',
    );
  }
  return warnings;
}

/** Whether only this machine reaches an address (a name other than localhost may resolve anywhere). */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host) || /^::ffff:127\./i.test(host);
}
