import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Observable } from 'rxjs';
import { GatewayConfig } from '../config/gateway-config.js';
import type { EngineEvent } from '../engine/engine-event.js';
import { GenerationService } from '../generation/generation.service.js';
import { GenerationApi } from '../observability/generation-api.decorator.js';
import { newId, unixSeconds } from '../protocols/ids.js';
import { decodeResponsesRequest } from '../protocols/openai-responses/decode-responses-request.js';
import { encodeResponsesStream } from '../protocols/openai-responses/encode-responses-stream.js';
import { ReasoningCipher } from '../protocols/openai-responses/reasoning-cipher.js';
import { toResponseBody } from '../protocols/openai-responses/response-body.js';
import { responseEnvelope } from '../protocols/openai-responses/response-object.js';
import { ResponsesRequestDto } from '../protocols/openai-responses/responses-request.dto.js';
import { GenerationRoute } from './generation-routes/generation-route.decorator.js';
import { StreamResponder } from './stream-responder.js';

/** `POST /v1/responses` (OpenAI Responses), streaming and not; stateless (nothing is stored). */
@Injectable()
export class ResponsesController {
  /** Seals reasoning for clients that keep no state (`include: ["reasoning.encrypted_content"]`). */
  private readonly cipher: ReasoningCipher;

  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    this.cipher = ReasoningCipher.fromSecret(config.responses.encryptionKey);
  }

  @GenerationRoute('/v1/responses', ResponsesRequestDto)
  @GenerationApi('responses')
  create(body: ResponsesRequestDto, reply: FastifyReply): Observable<EngineEvent> {
    const { events$, telemetry } = this.generations.accept(decodeResponsesRequest(body, this.cipher), 'responses', body.stream === true, reply.request, {
      maxTokens: 'max_output_tokens',
      messages: 'input',
    });
    const envelope = responseEnvelope(newId('resp_'), unixSeconds(), body, this.cipher);
    if (!body.stream) {
      return this.responder.json(reply, { events$, telemetry }, (result) => toResponseBody(result, envelope), 'openai');
    }
    return this.responder.sse(reply, { events$, telemetry }, encodeResponsesStream(envelope));
  }
}
