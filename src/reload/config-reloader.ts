import { Logger } from '@nestjs/common';
import { resolvedKeysOf, type ApiKeyRing } from '../auth/api-key-ring.js';
import { ConfigError } from '../config/config-error.js';
import { applyLiveKeys, keysNeedingRestart, liveKeysChanged } from '../config/config-changes.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { EngineKinds } from '../engines/engine-kinds.js';
import type { ModelChanges, ModelRegistry } from '../models/model-registry.js';
import { reloadedMessage, refusedMessage, restartWarning } from './reload-messages.js';

/** What applying a reloaded configuration did. */
export interface ReloadOutcome {
  changes: ModelChanges;
  /** Changed keys this process does not apply until a restart (see LIVE_KEYS). */
  restartKeys: string[];
  /** Changed keys it applied besides the models (the API keys and their tenants, the limit values). */
  liveKeys: string[];
}

/** What a reload swaps besides the running configuration itself. */
export interface ReloadTargets {
  /** The accepted API keys and their tenants (absent: a reload leaves keys to whoever holds them). */
  keys?: ApiKeyRing;
}

/**
 * Applies a re-read configuration file to a running gateway: its models (engines, upstreams,
 * limits) and its API keys with their tenants (weights, priorities, models, limits) for new
 * requests at once; requests already accepted finish where they started. The other keys keep
 * their running values, and the changed ones are named in a warning.
 */
export class ConfigReloader {
  private readonly logger = new Logger('Gantry');
  private readonly keys?: ApiKeyRing;

  /** @param running the configuration the gateway started with; its live keys follow each reload. */
  constructor(
    private readonly running: GatewayConfig,
    private readonly registry: ModelRegistry,
    private readonly kinds: EngineKinds,
    targets: ReloadTargets = {},
  ) {
    this.keys = targets.keys;
  }

  /**
   * Applies a validated configuration, its models validated by their kinds here (a ConfigError
   * naming `origin`, as at start); rejects, changing nothing, when one is refused, an engine
   * cannot start or a key source no longer yields a key.
   */
  async apply(next: GatewayConfig, origin: string): Promise<ReloadOutcome> {
    const models = this.kinds.parseModels(next, origin);
    const keys = this.keys && resolvedKeysOf(next.auth);
    const changes = await this.registry.apply(models, (model) => this.kinds.create(model));
    // `next` was read for this reload alone: its entries become instances of their kinds' classes.
    next.models = models;
    const restartKeys = keysNeedingRestart(this.running, next);
    const liveKeys = liveKeysChanged(this.running, next);
    applyLiveKeys(this.running, next);
    if (keys) this.keys!.load(keys, this.running.auth.limits);
    return { changes, restartKeys, liveKeys };
  }

  /**
   * Reads the configuration through `load` (which throws ConfigError, as at start) and applies
   * it, logging what happened; a refused file leaves everything as it was. Resolves whether the
   * configuration was applied.
   */
  async reload(load: () => GatewayConfig | Promise<GatewayConfig>, origin: string): Promise<boolean> {
    let outcome: ReloadOutcome;
    try {
      outcome = await this.apply(await load(), origin);
    } catch (error) {
      this.logger.error(refusedMessage(error instanceof ConfigError ? error.message : (error as Error).message));
      return false;
    }
    this.logger.log(reloadedMessage(origin, outcome.changes, '', outcome.liveKeys));
    if (outcome.restartKeys.length > 0) this.logger.warn(restartWarning(outcome.restartKeys));
    return true;
  }
}
