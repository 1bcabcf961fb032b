import { Inject, Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { EngineEvent } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import { ModelRegistry } from '../engines/model-registry.js';

/** A generation accepted for a model: nothing runs until `events$` is subscribed. */
export interface AcceptedGeneration {
  events$: Observable<EngineEvent>;
}

/**
 * The protocol-neutral half of every API: finds the model, refuses what cannot be admitted
 * (both before the stream opens, so they get real HTTP statuses), and wires admission to the
 * engine. Unsubscribing `events$` leaves the queue or cancels the engine work.
 */
@Injectable()
export class GenerationService {
  constructor(@Inject(ModelRegistry) private readonly registry: ModelRegistry) {}

  accept(request: GenerationRequest): AcceptedGeneration {
    const model = this.registry.resolve(request.model);
    model.admission.checkCapacity(request.model);
    return { events$: model.admission.run(model.engine.generate(request)) };
  }

  /** The prompt's token count on the model's engine (404 for an unknown model). */
  countPromptTokens(request: GenerationRequest): Promise<number> {
    return this.registry.resolve(request.model).engine.countPromptTokens(request);
  }
}
