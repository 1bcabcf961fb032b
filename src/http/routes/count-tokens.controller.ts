import { Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Callers } from '../../auth/callers.js';
import { GenerationService } from '../../generation/generation.service.js';
import { decodePrompt } from '../../protocols/anthropic-messages/decode-messages-request.js';
import { CountTokensRequestDto } from '../../protocols/anthropic-messages/messages-request.dto.js';

/** `POST /v1/messages/count_tokens` (Anthropic): the prompt's exact token count on the model's engine. */
@Controller('v1/messages')
export class CountTokensController {
  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(Callers) private readonly callers: Callers,
  ) {}

  @Post('count_tokens')
  @HttpCode(200)
  async countTokens(
    @Body() body: CountTokensRequestDto,
    @Req() request: FastifyRequest,
  ): Promise<{ input_tokens: number }> {
    return {
      input_tokens: await this.generations.countPromptTokens(decodePrompt(body), undefined, this.callers.of(request)),
    };
  }
}
