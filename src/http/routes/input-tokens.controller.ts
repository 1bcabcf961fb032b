import { Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Callers } from '../../auth/callers.js';
import { GenerationService } from '../../generation/generation.service.js';
import {
  decodeResponsesPrompt,
  type ResponsesPrompt,
} from '../../protocols/openai-responses/decode-responses-request.js';
import { ReasoningCipher } from '../../protocols/openai-responses/reasoning-cipher.js';
import { InputTokensRequestDto } from '../../protocols/openai-responses/responses-request.dto.js';
import { RESPONSES_PROTOCOL } from '../../protocols/openai-responses/responses-protocol.js';
import { StoredResponses } from '../../stored-responses/stored-responses.js';

/** What `POST /v1/responses/input_tokens` answers. */
export interface InputTokenCount {
  object: 'response.input_tokens';
  input_tokens: number;
}

/**
 * `POST /v1/responses/input_tokens` (OpenAI): the token count of the prompt a Responses request
 * with this body would send, on the model's engine (as `count_tokens` counts for Messages). The
 * stored state it names (`previous_response_id`, `item_reference`) is read as a create reads it.
 */
@Controller('v1/responses')
export class InputTokensController {
  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StoredResponses) private readonly stored: StoredResponses,
    @Inject(ReasoningCipher) private readonly cipher: ReasoningCipher,
    @Inject(Callers) private readonly callers: Callers,
  ) {}

  @Post('input_tokens')
  @HttpCode(200)
  async count(@Body() body: InputTokensRequestDto, @Req() request: FastifyRequest): Promise<InputTokenCount> {
    // No input counts the rest of the prompt (instructions, tools, a previous response's conversation).
    let prompt: ResponsesPrompt = { ...body, input: body.input ?? [] };
    const scope = this.stored.scopeOf(request.headers);
    if (this.stored.enabled) prompt = (await this.stored.prepare(prompt, scope)).body;
    // Reasoning sealed for one API key opens only for that key, as on the create route.
    const generation = decodeResponsesPrompt(prompt, this.cipher.forKey(scope.owner));
    const names = RESPONSES_PROTOCOL.fieldNames(prompt);
    return {
      object: 'response.input_tokens',
      input_tokens: await this.generations.countPromptTokens(generation, names, this.callers.of(request)),
    };
  }
}
