import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { KeyLimitsConfig } from '../config/auth-config.js';
import { GatewayConfig } from '../config/gateway-config.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyRing } from './api-key-ring.js';
import { Callers } from './callers.js';
import { KeyLimiter } from './key-limiter.js';
import { InstanceLimitStore, LimitStore } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { RedisLimitStore } from './redis-limit-store.js';

function createLimitStore(limits: KeyLimitsConfig | undefined, instance: InstanceLimitStore | undefined): LimitStore {
  const store = limits?.store ?? 'memory';
  switch (store) {
    case 'memory':
      return instance ?? new MemoryLimitStore();
    case 'redis':
      // Resolved when the configuration was read (resolveRedisParts). Its failures reach the KeyLimiter, which counts them and logs at most one warning per interval.
      return new RedisLimitStore(limits!.redis!.url!, {
        prefix: limits!.redis!.keyPrefix,
        commandTimeoutMs: limits!.redis!.timeoutMs,
      });
  }
}

/** API keys, their tenants and per-key (per-tenant) limits, enforced by a global guard on every route. */
@Global()
@Module({
  providers: [
    {
      provide: ApiKeyRing,
      inject: [GatewayConfig],
      useFactory: (config: GatewayConfig) => ApiKeyRing.fromConfig(config.auth),
    },
    Callers,
    {
      provide: LimitStore,
      inject: [GatewayConfig, { token: InstanceLimitStore, optional: true }],
      useFactory: (config: GatewayConfig, instance: InstanceLimitStore | undefined) =>
        createLimitStore(config.auth.limits, instance),
    },
    KeyLimiter,
    ApiKeyGuard,
    { provide: APP_GUARD, useExisting: ApiKeyGuard },
  ],
  // Stored responses are kept per API key, a background run holds its key's stream slot, the
  // handlers act on each request's caller (model access, the fair queue, token charges), and a
  // reload swaps the keys.
  exports: [ApiKeyRing, KeyLimiter, Callers],
})
export class AuthModule implements OnApplicationShutdown {
  constructor(@Inject(LimitStore) private readonly store: LimitStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
