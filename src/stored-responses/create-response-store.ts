import type { ResponsesConfig } from '../config/responses-config.js';
import { MemoryResponseStore } from './memory-response-store.js';
import { RedisResponseStore } from './redis-response-store.js';
import type { ResponseStore } from './response-store.js';

/** The store `responses.store` names; undefined for `off` (the stateful features are refused). */
export function createResponseStore(config: ResponsesConfig): ResponseStore | undefined {
  switch (config.store) {
    case 'off':
      return undefined;
    case 'redis':
      return new RedisResponseStore(config.redisUrl!, {
        prefix: config.redisKeyPrefix,
        ttlSeconds: config.ttlSeconds,
        maxEventsPerResponse: config.maxEventsPerResponse,
        commandTimeoutMs: config.redisTimeoutMs,
      });
    case 'memory':
      return new MemoryResponseStore({
        ttlSeconds: config.ttlSeconds,
        maxStoredResponses: config.maxStoredResponses,
        maxEventsPerResponse: config.maxEventsPerResponse,
        maxStoredBytes: config.maxStoredBytes,
      });
  }
}
