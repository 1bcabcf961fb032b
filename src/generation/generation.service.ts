import { Inject, Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { GatewayConfig } from '../config/gateway-config.js';
import type { EngineEvent } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import { ModelRegistry } from '../engines/model-registry.js';
import { applyRequestLimits, DEFAULT_FIELD_NAMES, type RequestFieldNames } from './request-limits.js';

/** A generation accepted for a model: nothing runs until `events$` is subscribed. */
export interface AcceptedGeneration {
  events$: Observable<EngineEvent>;
}

/**
 * The protocol-neutral half of every API: finds the model, refuses what cannot be admitted
 * (limits, a full queue: all before the stream opens, so they get real HTTP statuses), and wires
 * admission to the engine. Unsubscribing `events$` leaves the queue or cancels the engine work.
 */
@Injectable()
export class GenerationService {
  constructor(
    @Inject(ModelRegistry) private readonly registry: ModelRegistry,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  /** `names`: the client protocol's names for the limited fields, used in refusals. */
  accept(request: GenerationRequest, names: RequestFieldNames = DEFAULT_FIELD_NAMES): AcceptedGeneration {
    const model = this.registry.resolve(request.model);
    const limited = applyRequestLimits(request, model.config, this.config.limits, names);
    model.admission.checkCapacity(request.model);
    return { events$: model.admission.run(model.engine.generate(limited)) };
  }

  /** The prompt's token count on the model's engine (404 for an unknown model). */
  countPromptTokens(request: GenerationRequest, names: RequestFieldNames = DEFAULT_FIELD_NAMES): Promise<number> {
    const model = this.registry.resolve(request.model);
    applyRequestLimits(request, model.config, this.config.limits, names);
    return model.engine.countPromptTokens(request);
  }
}
