import { Inject, Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { GatewayConfig } from '../config/gateway-config.js';
import type { EngineEvent } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import { ModelRegistry } from '../engines/model-registry.js';
import { GenerationTelemetry, type ApiName } from '../observability/generation-telemetry.js';
import { applyRequestLimits, DEFAULT_FIELD_NAMES, type RequestFieldNames } from './request-limits.js';

/**
 * A generation accepted for a model: nothing runs until `events$` is subscribed. Whoever consumes
 * `events$` folds each event into `telemetry` (`observe`) before passing it on (StreamResponder
 * does): a `tap` here would cost every event of every stream one more hop.
 */
export interface AcceptedGeneration {
  events$: Observable<EngineEvent>;
  telemetry: GenerationTelemetry;
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

  /**
   * @param httpRequest the request being served: its telemetry (shared with the interceptors)
   *   records the admission, and carries the trace context to the engine.
   * @param names the client protocol's names for the limited fields, used in refusals.
   */
  accept(
    request: GenerationRequest,
    api: ApiName,
    stream: boolean,
    httpRequest: object,
    names: RequestFieldNames = DEFAULT_FIELD_NAMES,
  ): AcceptedGeneration {
    const model = this.registry.resolve(request.model);
    const telemetry = GenerationTelemetry.of(httpRequest);
    telemetry.identify({ model: request.model, engine: model.config.engine });
    const limited = applyRequestLimits(request, model.config, this.config.limits, names);
    model.admission.checkCapacity(request.model);
    telemetry.markAccepted({ api, model: request.model, engine: model.config.engine, maxTokens: limited.sampling.maxTokens, stream });
    const traced: GenerationRequest = { ...limited, stream, traceHeaders: telemetry.traceHeaders };
    const events$ = model.admission.run(model.engine.generate(traced), () => telemetry.markAdmitted());
    return { events$, telemetry };
  }

  /** The prompt's token count on the model's engine (404 for an unknown model). */
  countPromptTokens(request: GenerationRequest, names: RequestFieldNames = DEFAULT_FIELD_NAMES): Promise<number> {
    const model = this.registry.resolve(request.model);
    applyRequestLimits(request, model.config, this.config.limits, names);
    return model.engine.countPromptTokens(request);
  }
}
