import { Logger } from '@nestjs/common';
import { ConfigError } from '../config/config-loader.js';
import { keysNeedingRestart } from '../config/config-changes.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { createEngine } from '../engines/create-engine.js';
import type { EngineFactory, ModelChanges, ModelRegistry } from '../models/model-registry.js';
import { reloadedMessage, refusedMessage, restartWarning } from './reload-messages.js';

/** What applying a reloaded configuration did. */
export interface ReloadOutcome {
  changes: ModelChanges;
  /** Changed keys this process does not apply until a restart (see LIVE_KEYS). */
  restartKeys: string[];
}

/**
 * Applies a re-read configuration file to a running gateway: its models (engines, upstreams,
 * limits) for new requests at once; requests already accepted finish where they started. The
 * other keys keep their running values, and the changed ones are named in a warning.
 */
export class ConfigReloader {
  private readonly logger = new Logger('Gantry');

  /** @param running the configuration the gateway started with; its `models` follow each reload. */
  constructor(
    private readonly running: GatewayConfig,
    private readonly registry: ModelRegistry,
    private readonly engines: EngineFactory = createEngine,
  ) {}

  /** Applies a validated configuration; rejects, changing nothing, when an engine cannot start. */
  async apply(next: GatewayConfig): Promise<ReloadOutcome> {
    const changes = await this.registry.apply(next.models, this.engines);
    const restartKeys = keysNeedingRestart(this.running, next);
    this.running.models = next.models;
    return { changes, restartKeys };
  }

  /**
   * Reads the configuration through `load` (which throws ConfigError, as at start) and applies
   * it, logging what happened; a refused file leaves everything as it was. Resolves whether the
   * configuration was applied.
   */
  async reload(load: () => GatewayConfig | Promise<GatewayConfig>, origin: string): Promise<boolean> {
    let outcome: ReloadOutcome;
    try {
      outcome = await this.apply(await load());
    } catch (error) {
      this.logger.error(refusedMessage(error instanceof ConfigError ? error.message : (error as Error).message));
      return false;
    }
    this.logger.log(reloadedMessage(origin, outcome.changes));
    if (outcome.restartKeys.length > 0) this.logger.warn(restartWarning(outcome.restartKeys));
    return true;
  }
}
