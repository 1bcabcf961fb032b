import { Body, Controller, HttpCode, Inject, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Observable } from 'rxjs';
import type { EngineEvent } from '../engine/engine-event.js';
import { GenerationService } from '../generation/generation.service.js';
import { GenerationApi } from '../observability/generation-api.decorator.js';
import { toAnthropicMessage } from '../protocols/anthropic-messages/anthropic-message.js';
import { decodeMessagesRequest, decodePrompt } from '../protocols/anthropic-messages/decode-messages-request.js';
import { encodeMessagesStream } from '../protocols/anthropic-messages/encode-messages-stream.js';
import { CountTokensRequestDto, MessagesRequestDto } from '../protocols/anthropic-messages/messages-request.dto.js';
import { newId } from '../protocols/ids.js';
import { StreamResponder } from './stream-responder.js';

/**
 * `POST /v1/messages` (Anthropic Messages), streaming and not, and `POST /v1/messages/count_tokens`.
 * `anthropic-version` is accepted whatever its value; errors take Anthropic's shape (see
 * ProtocolExceptionFilter).
 */
@Controller('v1/messages')
export class MessagesController {
  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
  ) {}

  @Post()
  @HttpCode(200)
  @GenerationApi('messages')
  create(@Body() body: MessagesRequestDto, @Res() reply: FastifyReply): Observable<EngineEvent> {
    const { events$, telemetry } = this.generations.accept(decodeMessagesRequest(body), 'messages', body.stream === true, reply.request);
    const identity = { id: newId('msg_'), model: body.model };
    if (!body.stream) {
      return this.responder.json(reply, { events$, telemetry }, (result) => toAnthropicMessage(result, identity), 'anthropic');
    }
    return this.responder.sse(reply, { events$, telemetry }, encodeMessagesStream(identity));
  }

  @Post('count_tokens')
  @HttpCode(200)
  async countTokens(@Body() body: CountTokensRequestDto): Promise<{ input_tokens: number }> {
    return { input_tokens: await this.generations.countPromptTokens(decodePrompt(body)) };
  }
}
