import { NEVER } from 'rxjs';
import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ApiKeyRing } from '../auth/api-key-ring.js';
import { GatewayConfig } from '../config/gateway-config.js';
import { LifecycleService } from '../lifecycle/lifecycle.service.js';
import { GantryMetrics } from '../observability/metrics/gantry-metrics.js';
import { BackgroundRuns } from './background-runs.js';
import { createResponseStore } from './create-response-store.js';
import { InstanceResponseStore } from './response-store.js';
import { StoredResponses } from './stored-responses.js';

/** After a drain deadline, how long a follower waits for its run's last events (a run cut there ends at once). */
const FOLLOWER_GRACE_MS = 1_000;

/**
 * The Responses store chosen by `responses.store` (with `memory`, the instance's when a worker of
 * several provides one), what reads and keeps through it, and the background runs.
 */
@Global()
@Module({
  providers: [
    {
      provide: StoredResponses,
      inject: [
        GatewayConfig,
        GantryMetrics,
        ApiKeyRing,
        LifecycleService,
        { token: InstanceResponseStore, optional: true },
      ],
      useFactory: (
        config: GatewayConfig,
        metrics: GantryMetrics,
        keys: ApiKeyRing,
        lifecycle: LifecycleService,
        instance: InstanceResponseStore | undefined,
      ) =>
        new StoredResponses(createResponseStore(config.responses, instance), metrics, keys, {
          keepaliveIntervalMs: config.keepalive.intervalMs,
          ttlSeconds: config.responses.ttlSeconds,
          maxResolvedInputBytes: config.responses.maxResolvedInputBytes,
          followerCutoff: { deadline$: NEVER.pipe(lifecycle.endAtDrainDeadline<never>()), graceMs: FOLLOWER_GRACE_MS },
        }),
    },
    {
      provide: BackgroundRuns,
      inject: [StoredResponses, LifecycleService, GatewayConfig],
      useFactory: (stored: StoredResponses, lifecycle: LifecycleService, config: GatewayConfig) =>
        new BackgroundRuns(stored, lifecycle, config.keepalive),
    },
  ],
  exports: [StoredResponses, BackgroundRuns],
})
export class StoredResponsesModule implements OnApplicationShutdown {
  constructor(@Inject(StoredResponses) private readonly stored: StoredResponses) {}

  async onApplicationShutdown(): Promise<void> {
    await this.stored.close();
  }
}
