import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '../config/config-error.js';
import { loadConfig, type ConfigSources } from '../config/config-loader.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { fileStatus, sameFileStatus } from './config-file-watcher.js';

/** The waits before each new read of a file that looked unfinished: about two seconds in all. */
export const UNFINISHED_RETRY_DELAYS_MS: readonly number[] = [100, 200, 400, 500, 800];

/** Called before each new read: why the file looked unfinished, and how long until it is read again. */
export type UnfinishedFileListener = (reason: string, delayMs: number) => void;

/**
 * Reads the configuration file for a reload: validated as a start validates it, and refused
 * without `models` (see LoadOptions.requireModels). A file that looks caught while it is being
 * written (a truncate-then-write, an editor's save: empty, not YAML yet, no models yet, or
 * changing while it was read) is read again after each of `retryDelaysMs`, and `onRetry` says
 * why; still so after the last, it is refused. Throws ConfigError, as a start does.
 */
export async function readReloadedConfig(
  sources: ConfigSources & { file: string },
  onRetry: UnfinishedFileListener,
  retryDelaysMs: readonly number[] = UNFINISHED_RETRY_DELAYS_MS,
): Promise<GatewayConfig> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return readOnce(sources);
    } catch (error) {
      const delayMs = retryDelaysMs[attempt];
      if (!(error instanceof ConfigError) || !error.unfinished || delayMs === undefined) throw error;
      onRetry(error.problems.join('; '), delayMs);
      await sleep(delayMs);
    }
  }
}

function readOnce(sources: ConfigSources & { file: string }): GatewayConfig {
  const before = fileStatus(sources.file);
  const config = loadConfig(sources, { requireModels: true });
  if (!sameFileStatus(before, fileStatus(sources.file)))
    throw new ConfigError(sources.file, ['the file changed while it was read'], true);
  return config;
}
