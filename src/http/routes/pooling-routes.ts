import { Inject, Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { Callers } from '../../auth/callers.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import type { InferenceEngine } from '../../engine/inference-engine.js';
import type { EmbeddingResult, PoolingContext, PoolingPassResult } from '../../engine/pooling.js';
import { GenerationService } from '../../generation/generation.service.js';
import { poolingGenerationRequest, poolingWork } from '../../generation/pooling-work.js';
import {
  decodeEmbeddingsRequest,
  embeddingTexts,
  toEmbeddingsBody,
} from '../../protocols/openai-embeddings/embeddings-protocol.js';
import { EmbeddingsRequestDto } from '../../protocols/openai-embeddings/embeddings-request.dto.js';
import {
  decodePoolingPass,
  RERANK_PATHS,
  RerankRequestDto,
  ScoreRequestDto,
  toPoolingPassBody,
} from '../../protocols/pooling/pooling-pass.js';
import { afterPromise } from '../../streaming/after-promise.js';
import { StreamResponder } from '../streaming/stream-responder.js';
import type { GenerationExchange, GenerationRoute } from './generation-pipeline.js';

/** What a pooling request's refusals name: its input field, no output limit. */
const INPUT_NAMES = { maxTokens: 'max_tokens', messages: 'input' };

/**
 * The pooling routes: embeddings, rerank (and vLLM's aliases), score. Each is a generation route
 * to the pipeline (guards, hooks, validation, errors), accepted as any request (model access and
 * `apis`, limits, the fair queue) and answered as one JSON body; the engine's pooling method does
 * the work (engine/pooling.ts, docs/architecture.md).
 */
@Injectable()
export class PoolingRoutes {
  readonly routes: readonly GenerationRoute[];

  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
    @Inject(Callers) private readonly callers: Callers,
  ) {
    this.routes = [
      route({
        protocol: { api: 'embeddings', path: '/v1/embeddings' },
        body: EmbeddingsRequestDto,
        handle: (body, exchange) => this.embeddings(body, exchange),
      }),
      ...RERANK_PATHS.map((path) =>
        route({
          protocol: { api: 'rerank', path },
          body: RerankRequestDto,
          handle: (body, exchange) => this.pass('rerank', body, exchange),
        }),
      ),
      route({
        protocol: { api: 'score', path: '/v1/score' },
        body: ScoreRequestDto,
        handle: (body, exchange) => this.pass('score', body, exchange),
      }),
    ];
  }

  private embeddings(body: EmbeddingsRequestDto, exchange: GenerationExchange): Observable<EngineEvent> {
    const request = decodeEmbeddingsRequest(body, exchange.request.body);
    let result: EmbeddingResult | undefined;
    return this.serve(exchange, body.model, embeddingTexts(request), {
      work: (engine, context) => engine.embed!(request, context),
      keep: (answer) => (result = answer),
      body: () => toEmbeddingsBody(result!, body.model, request.encodingFormat),
    });
  }

  private pass(
    api: 'rerank' | 'score',
    body: RerankRequestDto | ScoreRequestDto,
    exchange: GenerationExchange,
  ): Observable<EngineEvent> {
    const { request, texts } = decodePoolingPass(body, exchange.request.body);
    let result: PoolingPassResult | undefined;
    return this.serve(exchange, body.model, texts, {
      work: (engine, context) =>
        api === 'rerank' ? engine.rerank!(request, context) : engine.score!(request, context),
      keep: (answer) => (result = answer),
      body: () => toPoolingPassBody(result!, body.model),
    });
  }

  /** Accepted as any request (a refusal is its status), run on the engine's pooling method, answered whole. */
  private serve<Result extends EmbeddingResult | PoolingPassResult>(
    { request, reply, telemetry }: GenerationExchange,
    model: string,
    texts: string[],
    call: {
      work: (engine: InferenceEngine, context: PoolingContext) => Promise<Result>;
      keep: (result: Result) => void;
      body: () => unknown;
    },
  ): Observable<EngineEvent> {
    const caller = this.callers.of(request);
    telemetry.tenant = caller.tenant.name;
    return afterPromise(
      () =>
        this.generations.accept(poolingGenerationRequest(model, texts), {
          telemetry,
          stream: false,
          names: INPUT_NAMES,
          caller,
          work: (engine, traced) =>
            poolingWork((context) => call.work(engine, context), traced.traceHeaders, call.keep),
        }),
      (accepted) => this.responder.json(reply, accepted, call.body, 'openai'),
    );
  }
}

function route<Body extends object>(declared: GenerationRoute<Body>): GenerationRoute {
  return declared as unknown as GenerationRoute;
}
