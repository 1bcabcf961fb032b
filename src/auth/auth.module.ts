import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { resolveApiKeys } from '../config/api-key-sources.js';
import type { KeyLimitsConfig } from '../config/auth-config.js';
import { GatewayConfig } from '../config/gateway-config.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyRing } from './api-key-ring.js';
import { KeyLimiter } from './key-limiter.js';
import { InstanceLimitStore, LimitStore } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { RedisLimitStore } from './redis-limit-store.js';

function createApiKeyRing(config: GatewayConfig): ApiKeyRing {
  const { keys, problems } = resolveApiKeys(config.auth.apiKeys);
  if (problems.length > 0) throw new Error(`Cannot load the API keys:\n  - ${problems.join('\n  - ')}`);
  return new ApiKeyRing(keys);
}

function createLimitStore(limits: KeyLimitsConfig | undefined, instance: InstanceLimitStore | undefined): LimitStore {
  const store = limits?.store ?? 'memory';
  switch (store) {
    case 'memory':
      return instance ?? new MemoryLimitStore();
    case 'redis':
      // Its failures reach the KeyLimiter, which counts them and logs at most one warning per interval.
      return new RedisLimitStore(limits!.redisUrl!, { prefix: limits!.redisKeyPrefix, commandTimeoutMs: limits!.redisTimeoutMs });
  }
}

/** API keys and per-key limits, enforced by a global guard on every route. */
@Global()
@Module({
  providers: [
    { provide: ApiKeyRing, inject: [GatewayConfig], useFactory: createApiKeyRing },
    {
      provide: LimitStore,
      inject: [GatewayConfig, { token: InstanceLimitStore, optional: true }],
      useFactory: (config: GatewayConfig, instance: InstanceLimitStore | undefined) => createLimitStore(config.auth.limits, instance),
    },
    KeyLimiter,
    ApiKeyGuard,
    { provide: APP_GUARD, useExisting: ApiKeyGuard },
  ],
  // Stored responses are kept per API key, and a background run holds its key's stream slot.
  exports: [ApiKeyRing, KeyLimiter],
})
export class AuthModule implements OnApplicationShutdown {
  constructor(@Inject(LimitStore) private readonly store: LimitStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
