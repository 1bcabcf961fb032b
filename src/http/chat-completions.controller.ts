import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Observable } from 'rxjs';
import type { EngineEvent } from '../engine/engine-event.js';
import { GenerationService } from '../generation/generation.service.js';
import { GenerationApi } from '../observability/generation-api.decorator.js';
import { newId, unixSeconds } from '../protocols/ids.js';
import { toChatCompletion } from '../protocols/openai-chat/chat-completion.js';
import { ChatCompletionRequestDto } from '../protocols/openai-chat/chat-request.dto.js';
import { decodeChatRequest } from '../protocols/openai-chat/decode-chat-request.js';
import { encodeChatStream } from '../protocols/openai-chat/encode-chat-stream.js';
import { GenerationRoute } from './generation-routes/generation-route.decorator.js';
import { StreamResponder } from './stream-responder.js';

/** `POST /v1/chat/completions` (OpenAI Chat Completions), streaming and not. */
@Injectable()
export class ChatCompletionsController {
  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
  ) {}

  @GenerationRoute('/v1/chat/completions', ChatCompletionRequestDto)
  @GenerationApi('chat')
  create(body: ChatCompletionRequestDto, reply: FastifyReply): Observable<EngineEvent> {
    const { events$, telemetry } = this.generations.accept(decodeChatRequest(body), 'chat', body.stream === true, reply.request, {
      maxTokens: body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens',
      messages: 'messages',
    });
    const identity = { id: newId('chatcmpl-'), model: body.model, created: unixSeconds() };
    if (!body.stream) {
      return this.responder.json(reply, { events$, telemetry }, (result) => toChatCompletion(result, identity), 'openai');
    }
    return this.responder.sse(
      reply,
      { events$, telemetry },
      encodeChatStream({
        ...identity,
        includeUsage: body.stream_options?.include_usage === true,
        continuousUsage: body.stream_options?.continuous_usage_stats === true,
        timings: body.timings_per_token === true,
      }),
    );
  }
}
