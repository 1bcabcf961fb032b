import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { GatewayConfig } from '../../config/gateway-config.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import { GenerationHook, type GenerationOutcome, type ObservedRequest } from '../generation-hook.js';
import { httpStatusOf, phaseOf } from '../generation-outcome.js';
import type { GenerationTelemetry } from '../generation-telemetry.js';

/** The `context` of the line, as Nest loggers name where a line comes from. */
const LOG_CONTEXT = 'Request';

const round = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms * 10) / 10);

/**
 * One log line per generation request, at its end: request id, API, tenant (never the key), model, outcome, status,
 * time to first token, tokens, duration, finish reason. No prompt or output text unless
 * `observability.logging.includeContent` says so; a client hang-up is an ordinary `info` line.
 */
@Injectable()
export class RequestLogHook extends GenerationHook {
  /** What the end's line needs of the HTTP request, read at its start: the body is let go once validated. */
  private readonly requests = new WeakMap<GenerationTelemetry, StartedRequest>();
  private readonly outputs = new WeakMap<GenerationTelemetry, string>();
  private readonly includeContent: boolean;

  constructor(
    @Inject(PinoLogger) private readonly logger: PinoLogger,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    super();
    this.includeContent = config.observability.logging.includeContent;
  }

  protected override onStart(telemetry: GenerationTelemetry, request: ObservedRequest): void {
    this.requests.set(telemetry, {
      id: request.id,
      asked: requestedOf(request.body),
      body: this.includeContent ? request.body : undefined,
    });
  }

  protected override onEvent(telemetry: GenerationTelemetry, event: EngineEvent): void {
    if (this.includeContent && event.type === 'text')
      this.outputs.set(telemetry, (this.outputs.get(telemetry) ?? '') + event.text);
  }

  protected override onEnd(telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    const request = this.requests.get(telemetry);
    // A request refused before it was accepted (validation, unknown model, full queue) is still
    // named by what its body asked for.
    const asked = telemetry.accepted ? undefined : request?.asked;
    const line: Record<string, unknown> = {
      context: LOG_CONTEXT,
      requestId: request?.id,
      api: telemetry.api,
      tenant: telemetry.tenant,
      model: telemetry.model ?? asked?.model,
      engine: telemetry.engine,
      stream: asked?.stream ?? telemetry.stream,
      outcome: outcome.kind,
      status: httpStatusOf(telemetry, outcome),
      ttftMs: round(telemetry.timeToFirstOutputMs),
      queueMs: round(telemetry.queueMs),
      durationMs: round(performance.now() - telemetry.arrivedAt),
      promptTokens: telemetry.usage.promptTokens,
      completionTokens: telemetry.usage.completionTokens,
      finishReason: telemetry.finishReason,
      heartbeats: telemetry.heartbeats,
    };
    if (telemetry.resumes) line.resumes = telemetry.resumes.length;
    if (outcome.kind === 'client_closed') line.phase = phaseOf(telemetry);
    if (outcome.kind === 'failed' || outcome.kind === 'rejected') {
      const failure = asGatewayError(outcome.error);
      // An upstream's own error text may quote the prompt (validation messages do): content only.
      const quotesUpstream = failure.name === 'UpstreamError';
      line.error = {
        kind: failure.kind,
        code: failure.code,
        message: quotesUpstream && !this.includeContent ? undefined : failure.message,
      };
    }
    if (this.includeContent) {
      line.request = request?.body;
      line.output = this.outputs.get(telemetry) ?? '';
    }
    // pino itself (the logger PinoLogger would pick), with the context already in the line:
    // PinoLogger copied every line into a new object to put its context first.
    const logger = this.logger.logger;
    if (outcome.kind === 'failed') logger.warn(line, 'request failed');
    else logger.info(line, outcome.kind === 'client_closed' ? 'client closed the connection' : 'request completed');
  }
}

interface StartedRequest {
  id?: string;
  asked: { model?: string; stream?: boolean };
  /** Only with `includeContent`. */
  body: unknown;
}

/** Longer names are cut: a refused request's model is whatever its client sent. */
const MAX_MODEL_LENGTH = 200;

/** The `model` and `stream` of a parsed body, when they have their types. */
function requestedOf(body: unknown): { model?: string; stream?: boolean } {
  if (typeof body !== 'object' || body === null) return {};
  const { model, stream } = body as { model?: unknown; stream?: unknown };
  return {
    model: typeof model === 'string' ? model.slice(0, MAX_MODEL_LENGTH) : undefined,
    stream: typeof stream === 'boolean' ? stream : undefined,
  };
}
