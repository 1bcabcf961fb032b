import { Logger } from '@nestjs/common';
import { ConfigError } from '../config/config-error.js';
import { keysNeedingRestart } from '../config/config-changes.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { EngineKinds } from '../engines/engine-kinds.js';
import type { ModelChanges, ModelRegistry } from '../models/model-registry.js';
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
    private readonly kinds: EngineKinds,
  ) {}

  /**
   * Applies a validated configuration, its models validated by their kinds here (a ConfigError
   * naming `origin`, as at start); rejects, changing nothing, when one is refused or an engine
   * cannot start.
   */
  async apply(next: GatewayConfig, origin: string): Promise<ReloadOutcome> {
    const models = this.kinds.parseModels(next, origin);
    const changes = await this.registry.apply(models, (model) => this.kinds.create(model));
    const restartKeys = keysNeedingRestart(this.running, next);
    this.running.models = models;
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
      outcome = await this.apply(await load(), origin);
    } catch (error) {
      this.logger.error(refusedMessage(error instanceof ConfigError ? error.message : (error as Error).message));
      return false;
    }
    this.logger.log(reloadedMessage(origin, outcome.changes));
    if (outcome.restartKeys.length > 0) this.logger.warn(restartWarning(outcome.restartKeys));
    return true;
  }
}
