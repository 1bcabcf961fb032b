import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Observable } from 'rxjs';
import type { EngineEvent } from '../engine/engine-event.js';
import { GenerationService } from '../generation/generation.service.js';
import { GenerationApi } from '../observability/generation-api.decorator.js';
import { toAnthropicMessage } from '../protocols/anthropic-messages/anthropic-message.js';
import { decodeMessagesRequest } from '../protocols/anthropic-messages/decode-messages-request.js';
import { encodeMessagesStream } from '../protocols/anthropic-messages/encode-messages-stream.js';
import { MessagesRequestDto } from '../protocols/anthropic-messages/messages-request.dto.js';
import { newId } from '../protocols/ids.js';
import { GenerationRoute } from './generation-routes/generation-route.decorator.js';
import { StreamResponder } from './stream-responder.js';

/**
 * `POST /v1/messages` (Anthropic Messages), streaming and not (a generation route).
 * `anthropic-version` is accepted whatever its value; errors take Anthropic's shape (see
 * ProtocolExceptionFilter).
 */
@Injectable()
export class MessagesController {
  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
  ) {}

  @GenerationRoute('/v1/messages', MessagesRequestDto)
  @GenerationApi('messages')
  create(body: MessagesRequestDto, reply: FastifyReply): Observable<EngineEvent> {
    const { events$, telemetry } = this.generations.accept(decodeMessagesRequest(body), 'messages', body.stream === true, reply.request);
    const identity = { id: newId('msg_'), model: body.model };
    if (!body.stream) {
      return this.responder.json(reply, { events$, telemetry }, (result) => toAnthropicMessage(result, identity), 'anthropic');
    }
    return this.responder.sse(reply, { events$, telemetry }, encodeMessagesStream(identity));
  }
}
