import { describe, expect, it } from 'vitest';
import { ContextLengthError } from '../../engine/context-length-error.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { anthropicErrorStatus, toAnthropicErrorBody } from './anthropic-error.js';
import { openAIErrorStatus, toOpenAIErrorBody } from './openai-error.js';

describe('a prompt over the context, in each protocol’s words', () => {
  it('OpenAI: 400 invalid_request_error, code context_length_exceeded, param messages, OpenAI’s sentence', () => {
    const error = new ContextLengthError(5000, 4096);
    expect(openAIErrorStatus(error)).toBe(400);
    expect(toOpenAIErrorBody(error)).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
        param: 'messages',
        message:
          "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens. Please reduce the length of the messages.",
      },
    });
  });

  it('Anthropic: 400 invalid_request_error, "prompt is too long: N tokens > M maximum"', () => {
    const error = new ContextLengthError(5000, 4096);
    expect(anthropicErrorStatus(error)).toBe(400);
    expect(toAnthropicErrorBody(error)).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 5000 tokens > 4096 maximum' },
    });
  });

  it('without the numbers, the same codes and a plain sentence', () => {
    const error = new ContextLengthError();
    expect(toOpenAIErrorBody(error).error).toMatchObject({
      code: 'context_length_exceeded',
      message: "The prompt is longer than this model's context window.",
    });
    expect(toAnthropicErrorBody(error).error.message).toBe("prompt is too long for this model's context window");
  });

  it('an unknown model: OpenAI’s 404 invalid_request_error with code model_not_found, Anthropic’s not_found_error', () => {
    const error = new GatewayError('not_found', "The model 'x' does not exist on this gateway.", {
      param: 'model',
      code: 'model_not_found',
    });
    expect([openAIErrorStatus(error), toOpenAIErrorBody(error).error]).toEqual([
      404,
      { type: 'invalid_request_error', code: 'model_not_found', param: 'model', message: error.message },
    ]);
    expect([anthropicErrorStatus(error), toAnthropicErrorBody(error).error.type]).toEqual([404, 'not_found_error']);
  });
});
