import { Inject, Injectable } from '@nestjs/common';
import { Observable } from 'rxjs';
import { GatewayConfig } from '../config/gateway-config.js';
import type { EngineEvent } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import { ModelRegistry } from '../models/model-registry.js';
import type { GenerationTelemetry } from '../observability/generation-telemetry.js';
import { applyRequestLimits, DEFAULT_FIELD_NAMES, type RequestFieldNames } from './request-limits.js';

/**
 * A generation accepted for a model: nothing runs until `events$` is subscribed. Each event is
 * already folded into `telemetry` when it comes out of `events$`, so every consumer (the
 * responder, the interceptors' hooks) reads counters that include it.
 */
export interface AcceptedGeneration {
  events$: Observable<EngineEvent>;
  telemetry: GenerationTelemetry;
}

export interface AcceptOptions {
  /** The request's telemetry, made by the generation pipeline on arrival. */
  telemetry: GenerationTelemetry;
  stream: boolean;
  /** The client protocol's names for the limited fields, used in refusals. */
  names?: RequestFieldNames;
}

/**
 * The protocol-neutral half of every API: finds the model, refuses what cannot be admitted
 * (limits, a full queue: all before the stream opens, so they get real HTTP statuses), and wires
 * admission to the engine. Unsubscribing `events$` leaves the queue or cancels the engine work.
 * It is the one writer of a generation's telemetry past arrival, but for heartbeats (the responder
 * makes those): the model and engine, acceptance, admission and every engine event.
 */
@Injectable()
export class GenerationService {
  constructor(
    @Inject(ModelRegistry) private readonly registry: ModelRegistry,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  /**
   * Accepts a generation, or rejects with the refusal (unknown model, limits, a full queue). A
   * promise because admission may be decided elsewhere (another process holds the instance's
   * queues); the work itself waits in `events$`.
   */
  async accept(request: GenerationRequest, options: AcceptOptions): Promise<AcceptedGeneration> {
    return this.acceptNow(request, options);
  }

  /** `accept`, decided in this process. */
  private acceptNow(request: GenerationRequest, { telemetry, stream, names = DEFAULT_FIELD_NAMES }: AcceptOptions): AcceptedGeneration {
    const model = this.registry.resolve(request.model);
    telemetry.identify({ model: request.model, engine: model.config.engine });
    const limited = applyRequestLimits(request, model.config, this.config.limits, names);
    model.admission.checkCapacity(request.model);
    telemetry.markAccepted({ model: request.model, engine: model.config.engine, maxTokens: limited.sampling.maxTokens, stream });
    // The trace context the tracing interceptor wrote goes on to the engine (HTTP upstreams continue the trace).
    const traced: GenerationRequest = { ...limited, stream, traceHeaders: telemetry.traceHeaders };
    const admitted$ = model.admission.run(model.engine.generate(traced), () => telemetry.markAdmitted());
    return { events$: observedBy(telemetry, admitted$), telemetry };
  }

  /** The prompt's token count on the model's engine (404 for an unknown model). */
  countPromptTokens(request: GenerationRequest, names: RequestFieldNames = DEFAULT_FIELD_NAMES): Promise<number> {
    const model = this.registry.resolve(request.model);
    applyRequestLimits(request, model.config, this.config.limits, names);
    return model.engine.countPromptTokens(request);
  }
}

/** `events$`, each event folded into `telemetry` before it goes on: the one place events are observed. */
function observedBy(telemetry: GenerationTelemetry, events$: Observable<EngineEvent>): Observable<EngineEvent> {
  return new Observable<EngineEvent>((subscriber) =>
    events$.subscribe({
      next: (event) => {
        telemetry.observe(event);
        subscriber.next(event);
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    }),
  );
}
