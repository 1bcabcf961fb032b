import { Inject, Injectable } from '@nestjs/common';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';
import type { AnswerResume } from '../../engine/answer-resume.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import { isOutput } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import { GenerationHook, type GenerationOutcome, type ObservedRequest } from '../generation-hook.js';
import type { GenerationTelemetry } from '../generation-telemetry.js';
import { GantryTracer } from './gantry-tracer.js';

const headerGetter: TextMapGetter<ObservedRequest['headers']> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key.toLowerCase()],
};

/**
 * One span per generation request, after the OpenTelemetry GenAI semantic conventions, a child of
 * the caller's `traceparent` when there is one: attributes for the request and usage, an event at
 * the first token and one at each resume (mid-stream failover), child spans for the queue wait and
 * the engine call, and the trace context handed to the engine so that HTTP upstreams continue the
 * trace.
 */
@Injectable()
export class TracingHook extends GenerationHook {
  private readonly spans = new WeakMap<GenerationTelemetry, Span>();

  constructor(@Inject(GantryTracer) private readonly gantry: GantryTracer) {
    super();
  }

  protected override onStart(telemetry: GenerationTelemetry, request: ObservedRequest): void {
    const parent = this.gantry.propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
    const operation = operationOf(telemetry.api);
    const span = this.gantry.tracer.startSpan(
      operation,
      {
        kind: SpanKind.SERVER,
        startTime: telemetry.arrivedAtEpochMs,
        attributes: { 'gen_ai.operation.name': operation, 'gantry.api': telemetry.api },
      },
      parent,
    );
    this.spans.set(telemetry, span);
    this.gantry.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), telemetry.traceHeaders, {
      set: (carrier: Record<string, string>, key, value) => void (carrier[key] = value),
    });
  }

  protected override onAccepted(telemetry: GenerationTelemetry): void {
    const span = this.spans.get(telemetry)!;
    span.updateName(`${operationOf(telemetry.api)} ${telemetry.model}`);
    const attributes: Attributes = {
      'gen_ai.request.model': telemetry.model,
      'gen_ai.provider.name': 'gantry',
      'gantry.engine': telemetry.engine,
      'gantry.stream': telemetry.stream,
    };
    if (telemetry.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = telemetry.maxTokens;
    span.setAttributes(attributes);
  }

  protected override onEvent(telemetry: GenerationTelemetry, event: EngineEvent): void {
    if (isOutput(event) && telemetry.outputEvents === 1) {
      this.spans
        .get(telemetry)!
        .addEvent(
          'gen_ai.first_token',
          { 'gantry.time_to_first_token_ms': telemetry.timeToFirstOutputMs },
          epochOf(telemetry, telemetry.firstOutputAt!),
        );
    }
  }

  protected override onResumed(telemetry: GenerationTelemetry, resume: AnswerResume): void {
    this.spans.get(telemetry)?.addEvent('gantry.stream.resumed', {
      'gantry.resume.reason': resume.reason,
      'gantry.resume.number': resume.resume,
      'gantry.resume.produced_tokens': resume.producedTokens,
      'gantry.resume.from': resume.from,
      'gantry.resume.to': resume.to,
    });
  }

  protected override onEnd(telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    const span = this.spans.get(telemetry)!;
    const now = performance.now();
    // Known from the handler on (never the key): a request refused by validation has none.
    if (telemetry.tenant !== undefined) span.setAttribute('gantry.tenant', telemetry.tenant);
    if (telemetry.accepted) {
      const parent = trace.setSpan(ROOT_CONTEXT, span);
      const admittedAt = telemetry.admittedAt ?? now;
      this.gantry.tracer
        .startSpan('gantry.queue', { startTime: telemetry.arrivedAtEpochMs }, parent)
        .end(epochOf(telemetry, admittedAt));
      if (telemetry.admittedAt !== undefined) {
        this.gantry.tracer
          .startSpan(
            `gantry.engine ${telemetry.engine}`,
            { kind: SpanKind.CLIENT, startTime: epochOf(telemetry, admittedAt) },
            parent,
          )
          .end(epochOf(telemetry, now));
      }
      span.setAttributes({
        'gen_ai.usage.input_tokens': telemetry.usage.promptTokens,
        'gen_ai.usage.output_tokens': telemetry.usage.completionTokens,
        'gantry.outcome': outcome.kind,
        'gantry.heartbeats': telemetry.heartbeats,
      });
      if (telemetry.finishReason !== undefined)
        span.setAttribute('gen_ai.response.finish_reasons', [telemetry.finishReason]);
    }
    if (outcome.kind === 'failed' || outcome.kind === 'rejected') {
      const failure = asGatewayError(outcome.error);
      span.setAttribute('error.type', failure.kind);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    }
    span.end(epochOf(telemetry, now));
  }
}

/** A `performance.now()` time of this request as epoch milliseconds. */
function epochOf(telemetry: GenerationTelemetry, at: number): number {
  return telemetry.arrivedAtEpochMs + (at - telemetry.arrivedAt);
}

/** OpenTelemetry's GenAI operation name for an API (`chat` for the three chat APIs). */
function operationOf(api: GenerationTelemetry['api']): string {
  if (api === 'completions') return 'text_completion';
  if (api === 'embeddings') return 'embeddings';
  if (api === 'rerank' || api === 'score') return api;
  return 'chat';
}
