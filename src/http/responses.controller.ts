import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Observable } from 'rxjs';
import type { EngineEvent } from '../engine/engine-event.js';
import { GenerationService } from '../generation/generation.service.js';
import { GenerationApi } from '../observability/generation-api.decorator.js';
import { newId, unixSeconds } from '../protocols/ids.js';
import { decodeResponsesRequest } from '../protocols/openai-responses/decode-responses-request.js';
import { encodeResponsesStream } from '../protocols/openai-responses/encode-responses-stream.js';
import { toResponseBody } from '../protocols/openai-responses/response-body.js';
import { responseEnvelope } from '../protocols/openai-responses/response-object.js';
import { ResponsesRequestDto } from '../protocols/openai-responses/responses-request.dto.js';
import { GenerationRoute } from './generation-routes/generation-route.decorator.js';
import { StreamResponder } from './stream-responder.js';

/** `POST /v1/responses` (OpenAI Responses), streaming and not; stateless (nothing is stored). */
@Injectable()
export class ResponsesController {
  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
  ) {}

  @GenerationRoute('/v1/responses', ResponsesRequestDto)
  @GenerationApi('responses')
  create(body: ResponsesRequestDto, reply: FastifyReply): Observable<EngineEvent> {
    const { events$, telemetry } = this.generations.accept(decodeResponsesRequest(body), 'responses', body.stream === true, reply.request, {
      maxTokens: 'max_output_tokens',
      messages: 'input',
    });
    const envelope = responseEnvelope(newId('resp_'), unixSeconds(), body);
    if (!body.stream) {
      return this.responder.json(reply, { events$, telemetry }, (result) => toResponseBody(result, envelope), 'openai');
    }
    return this.responder.sse(reply, { events$, telemetry }, encodeResponsesStream(envelope));
  }
}
