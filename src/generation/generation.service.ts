import { Inject, Injectable, Optional } from '@nestjs/common';
import { Observable } from 'rxjs';
import type { AdmissionClaim } from '../admission/admission-claim.js';
import type { AdmissionTicket } from '../admission/model-admission.js';
import type { Caller } from '../auth/caller.js';
import { type BudgetHold, KeyLimiter } from '../auth/key-limiter.js';
import { OPEN_TENANT } from '../auth/tenant.js';
import { GatewayConfig } from '../config/gateway-config.js';
import type { EngineEvent } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import type { InferenceEngine } from '../engine/inference-engine.js';
import type { ModelApi } from '../config/model-apis.js';
import { GatewayError } from '../errors/gateway-error.js';
import { ModelRegistry, type ModelRuntime } from '../models/model-registry.js';
import type { GenerationTelemetry } from '../observability/generation-telemetry.js';
import { choiceCount, generateCompletion } from './completion-choices.js';
import { hideReasoning } from './hide-reasoning.js';
import { applyRequestLimits, DEFAULT_FIELD_NAMES, type RequestFieldNames } from './request-limits.js';
import { estimatePromptTokens } from '../engine/token-estimate.js';
import { meterInto, nothingProduced, type Produced, tenantClaim, usedTokens } from './tenant-claim.js';

/**
 * A generation accepted for a model: nothing runs until `events$` is subscribed. The generation
 * pipeline folds each event into `telemetry` as it reaches the hooks (the one place events are
 * observed, http/routes/generation-pipeline.ts).
 */
export interface AcceptedGeneration {
  events$: Observable<EngineEvent>;
  telemetry: GenerationTelemetry;
  /**
   * Gives back what acceptance holds (the admission place, the engine) when `events$` will not be
   * subscribed: the client left before its answer began. Idempotent; nothing once subscribed.
   */
  abandon(): void;
}

/** What a request's acceptance holds, found again by its request (the prompt count). */
interface Acceptance {
  model: ModelRuntime;
  abandon(): void;
}

export interface AcceptOptions {
  /** The request's telemetry, made by the generation pipeline on arrival. */
  telemetry: GenerationTelemetry;
  stream: boolean;
  /** Who asks (the API-key guard's caller): the models it may use, its place in a contended queue. Absent: an open gateway's caller. */
  caller?: Caller;
  /** A background run: queued after its tenant's interactive requests. */
  background?: boolean;
  /** The client protocol's names for the limited fields, used in refusals. */
  names?: RequestFieldNames;
  /**
   * The engine work behind the ticket; absent: `engine.generate(request)`. A pooling API's call
   * (engine/pooling.ts) as events, so that admission, limits and the hooks treat it as any request.
   */
  work?: (engine: InferenceEngine, request: GenerationRequest) => Observable<EngineEvent>;
}

/**
 * The protocol-neutral half of every API: finds the model, refuses what cannot be admitted
 * (limits, a full queue: all before the stream opens, so they get real HTTP statuses), and wires
 * admission to the engine; `events$` holds what the client is to see (reasoning it asked not to
 * see left out). Unsubscribing `events$` leaves the queue or cancels the engine work.
 * It writes the model and engine, acceptance and admission into the request's telemetry; the
 * pipeline folds in the events, the responder the heartbeats.
 */
@Injectable()
export class GenerationService {
  constructor(
    @Inject(ModelRegistry) private readonly registry: ModelRegistry,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
    /** Holds a request's worst case in its caller's token budgets, settled at its end. */
    @Optional() @Inject(KeyLimiter) private readonly limiter?: KeyLimiter,
  ) {}

  /** Acceptances by request, so that counting a prompt uses the model the request was accepted on. */
  private readonly acceptances = new WeakMap<GenerationRequest, Acceptance>();

  /**
   * Accepts a generation, or rejects with the refusal (unknown model, limits, a full queue). A
   * promise because admission may be decided elsewhere (the primary holds the instance's queues
   * when several workers serve); the work itself waits in `events$`. The model is resolved once:
   * a reload meanwhile leaves this request on the engine it was accepted on.
   */
  async accept(request: GenerationRequest, options: AcceptOptions): Promise<AcceptedGeneration> {
    const { telemetry, stream, names = DEFAULT_FIELD_NAMES } = options;
    const { caller } = options;
    const tenant = caller?.tenant ?? OPEN_TENANT;
    const model = this.registry.resolve(request.model, tenant);
    telemetry.identify({ model: request.model, engine: model.config.engine });
    if (!model.serves(telemetry.api)) throw notServed(request.model, telemetry.api, model.apis);
    const checked = applyRequestLimits(request, model.config, this.config.limits, names);
    // A pooling API (embeddings, rerank, score) produces no output tokens: its prompt is its worst case.
    const pooling = options.work !== undefined;
    const budgeted =
      caller !== undefined &&
      (tenant.limits?.tokensPerMinute !== undefined || tenant.limits?.tokensPerDay !== undefined);
    const promptEstimate = budgeted ? estimatePromptTokens(checked) : 0;
    // Before anything is held: a refusal (429) leaves nothing to give back.
    // A completion's choices each produce up to max_tokens: the worst case is all of them.
    const choices = choiceCount(checked);
    const hold = budgeted
      ? await this.limiter?.reserve(caller, {
          promptTokens: promptEstimate,
          maxTokens: pooling ? 0 : timesOrUndefined(request.sampling.maxTokens, choices),
          outputCap: timesOrUndefined(model.config.maxTokensLimit, choices),
        })
      : undefined;
    // Without max_tokens, the engine stops where the budget left off (shared by the choices).
    const eachOutput = hold === undefined ? undefined : Math.max(1, Math.floor(hold.outputTokens / choices));
    const limited =
      eachOutput === undefined || pooling || eachOutput === checked.sampling.maxTokens
        ? checked
        : { ...checked, sampling: { ...checked.sampling, maxTokens: eachOutput } };
    // The trace context the tracing hook wrote goes on to the engine (HTTP upstreams continue the trace);
    // what the engine reports beside its events comes back to the telemetry.
    const traced: GenerationRequest = {
      ...limited,
      stream,
      traceHeaders: telemetry.traceHeaders,
      onResume: (resume) => telemetry.markResumed(resume),
    };
    const contended = Number.isFinite(model.admission.limits.maxConcurrency) || model.admission.gated === true;
    const claim = tenantClaim(tenant, limited, options.background === true, contended);
    const produced = nothingProduced();
    const engine$ = options.work
      ? options.work(model.engine, traced)
      : generateCompletion(traced, (each) => model.engine.generate(each));
    // What the engine reports settles the tenant's charge in the queue and its token budgets.
    const generated$ = contended || budgeted ? engine$.pipe(meterInto(claim, produced)) : engine$;
    // Hidden here, before the responder's keep-alive and fold: reasoning the client never sees
    // must not end its heartbeats. Usage still counts its tokens (they were generated).
    const work$ = traced.reasoningOutput === 'hide' ? generated$.pipe(hideReasoning()) : generated$;
    const release = model.hold();
    let ticket: AdmissionTicket;
    try {
      // A place decided in this process comes synchronously, as it always did: no turn in between.
      const reserved = model.admission.reserve(request.model, claim);
      ticket = reserved instanceof Promise ? await reserved : reserved;
    } catch (error) {
      release();
      hold?.settle(0);
      throw error;
    }
    try {
      // Runs the GenerationHooks' onAccepted (plugin code): a throw must not keep the place.
      telemetry.markAccepted({
        model: request.model,
        engine: model.config.engine,
        maxTokens: limited.sampling.maxTokens,
        stream,
      });
    } catch (error) {
      ticket.release();
      release();
      hold?.settle(0);
      throw error;
    }

    let state: 'accepted' | 'running' | 'ended' = 'accepted';
    const end = () => {
      if (state === 'ended') return;
      state = 'ended';
      settle(claim, produced, promptEstimate, hold);
      ticket.release();
      release();
    };
    const admitted$ = new Observable<EngineEvent>((subscriber) => {
      if (state !== 'accepted') {
        subscriber.error(new GatewayError('internal', 'This generation already ran or was abandoned.'));
        return;
      }
      state = 'running';
      const inner = ticket.run(work$, () => telemetry.markAdmitted()).subscribe(subscriber);
      return () => {
        inner.unsubscribe();
        end();
      };
    });
    const abandon = () => {
      if (state !== 'accepted') return;
      telemetry.withdrawn = true;
      end();
    };
    this.acceptances.set(request, { model, abandon });
    return { events$: admitted$, telemetry, abandon };
  }

  /**
   * The prompt's token count on the model's engine (the one its request was accepted on, if it
   * was; 404 for an unknown model, or one the caller may not use). A count that fails gives the acceptance back: the stream will
   * not open.
   */
  async countPromptTokens(
    request: GenerationRequest,
    names: RequestFieldNames = DEFAULT_FIELD_NAMES,
    caller?: Caller,
  ): Promise<number> {
    const accepted = this.acceptances.get(request);
    try {
      const model = accepted?.model ?? this.registry.resolve(request.model, caller?.tenant);
      applyRequestLimits(request, model.config, this.config.limits, names);
      return await model.engine.countPromptTokens(request);
    } catch (error) {
      accepted?.abandon();
      throw error;
    }
  }
}

/**
 * What a request used, once it ends: written into its claim (the fair queue settles it) and
 * settled in its token budgets. A hang-up pays its prompt and what was produced, reported or,
 * when the engine reported none (an upstream without continuous usage), estimated.
 */
function settle(claim: AdmissionClaim, produced: Produced, promptEstimate: number, hold: BudgetHold | undefined): void {
  const used = usedTokens(claim, produced, promptEstimate || claim.promptTokens);
  if (used !== undefined) claim.served = used;
  hold?.settle(used === undefined ? 0 : used.promptTokens + used.completionTokens);
}

function timesOrUndefined(value: number | undefined, factor: number): number | undefined {
  return value === undefined ? undefined : value * factor;
}

/** A model asked for an API it does not serve (its `apis`, or its engine's): the client's to fix, so a 400. */
function notServed(model: string, api: ModelApi, served: readonly ModelApi[]): GatewayError {
  return new GatewayError(
    'invalid_request',
    `The model '${model}' does not serve the ${api} API; it serves: ${served.join(', ') || 'none'}.`,
    { param: 'model', code: 'api_not_served' },
  );
}
