import { Logger } from '@nestjs/common';
import { resolvedKeysOf, type ApiKeyRing } from '../auth/api-key-ring.js';
import { ConfigError } from '../config/config-loader.js';
import { applyLiveKeys, keysNeedingRestart, liveKeysChanged } from '../config/config-changes.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { createEngine } from '../engines/create-engine.js';
import type { EngineFactory, ModelChanges, ModelRegistry } from '../models/model-registry.js';
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
  /** Builds the engines of new and changed models (the engines' factory by default). */
  engines?: EngineFactory;
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
  private readonly engines: EngineFactory;

  /** @param running the configuration the gateway started with; its live keys follow each reload. */
  constructor(
    private readonly running: GatewayConfig,
    private readonly registry: ModelRegistry,
    targets: ReloadTargets = {},
  ) {
    this.keys = targets.keys;
    this.engines = targets.engines ?? createEngine;
  }

  /**
   * Applies a validated configuration; rejects, changing nothing, when an engine cannot start or
   * a key source no longer yields a key.
   */
  async apply(next: GatewayConfig): Promise<ReloadOutcome> {
    const keys = this.keys && resolvedKeysOf(next.auth);
    const changes = await this.registry.apply(next.models, this.engines);
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
  async reload(load: () => GatewayConfig, origin: string): Promise<boolean> {
    let outcome: ReloadOutcome;
    try {
      outcome = await this.apply(load());
    } catch (error) {
      this.logger.error(refusedMessage(error instanceof ConfigError ? error.message : (error as Error).message));
      return false;
    }
    this.logger.log(reloadedMessage(origin, outcome.changes, '', outcome.liveKeys));
    if (outcome.restartKeys.length > 0) this.logger.warn(restartWarning(outcome.restartKeys));
    return true;
  }
}
