import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { defer, mergeMap, type Observable } from 'rxjs';
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
 * `POST /v1/messages` (Anthropic Messages), streaming and not (a generation route). Any query
 * string (Claude Code's `?beta=true`) and any `anthropic-version` or `anthropic-beta` header are
 * accepted; errors take Anthropic's shape (see ProtocolExceptionFilter).
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
    const request = decodeMessagesRequest(body);
    const identity = { id: newId('msg_'), model: body.model };
    if (!body.stream) {
      const accepted = this.generations.accept(request, 'messages', false, reply.request);
      return this.responder.json(reply, accepted, (result) => toAnthropicMessage(result, identity), 'anthropic');
    }
    // `message_start` carries the prompt's tokens, so they are counted before the stream opens
    // (the engine's own count: local for the stub and llama, bounded in time for HTTP upstreams).
    return defer(() => this.generations.countPromptTokens(request)).pipe(
      mergeMap((inputTokens) => {
        const accepted = this.generations.accept(request, 'messages', true, reply.request);
        return this.responder.sse(reply, accepted, encodeMessagesStream({ ...identity, inputTokens }));
      }),
    );
  }
}
