import type { ResponsesConfig } from '../config/responses-config.js';
import { MemoryResponseStore } from './memory-response-store.js';
import { RedisResponseStore } from './redis-response-store.js';
import type { InstanceResponseStore, ResponseStore } from './response-store.js';

/**
 * The store `responses.store` names; undefined for `off` (the stateful features are refused).
 * `memory` is the instance's store when there is one (a worker of several), else this process's.
 */
export function createResponseStore(
  config: ResponsesConfig,
  instance?: InstanceResponseStore,
): ResponseStore | undefined {
  switch (config.store) {
    case 'off':
      return undefined;
    case 'redis':
      // Resolved when the configuration was read (resolveRedisParts).
      return new RedisResponseStore(config.redis!.url!, {
        prefix: config.redis!.keyPrefix,
        ttlSeconds: config.ttlSeconds,
        maxEventsPerResponse: config.maxEventsPerResponse,
        commandTimeoutMs: config.redis!.timeoutMs,
      });
    case 'memory':
      return (
        instance ??
        new MemoryResponseStore({
          ttlSeconds: config.ttlSeconds,
          maxStoredResponses: config.maxStoredResponses,
          maxEventsPerResponse: config.maxEventsPerResponse,
          maxStoredBytes: config.maxStoredBytes,
        })
      );
  }
}
