import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { GenerationService } from '../../generation/generation.service.js';
import { decodePrompt } from '../../protocols/anthropic-messages/decode-messages-request.js';
import { CountTokensRequestDto } from '../../protocols/anthropic-messages/messages-request.dto.js';

/** `POST /v1/messages/count_tokens` (Anthropic): the prompt's exact token count on the model's engine. */
@Controller('v1/messages')
export class CountTokensController {
  constructor(@Inject(GenerationService) private readonly generations: GenerationService) {}

  @Post('count_tokens')
  @HttpCode(200)
  async countTokens(@Body() body: CountTokensRequestDto): Promise<{ input_tokens: number }> {
    return { input_tokens: await this.generations.countPromptTokens(decodePrompt(body)) };
  }
}
