import { describe, expect, it } from 'vitest';
import { ContextLengthError } from '../../engine/context-length-error.js';
import { upstreamContextLengthError } from './upstream-context-error.js';

const vllm = (message: string) =>
  JSON.stringify({ error: { message, type: 'BadRequestError', param: null, code: 400 } });
const numbers = (error: ContextLengthError | undefined) => [error?.promptTokens, error?.contextLength];

describe('upstreamContextLengthError', () => {
  it('reads the prompt and context sizes out of vLLM’s wordings', () => {
    const cases: Array<[string, number, number]> = [
      [
        "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4608 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
        4608,
        4096,
      ],
      [
        "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens. Please reduce the length of the messages.",
        5000,
        4096,
      ],
      [
        "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.",
        5000,
        4096,
      ],
      [
        "'max_tokens' or 'max_completion_tokens' is too large: 512. This model's maximum context length is 4096 tokens and your request has 4000 input tokens (512 > 4096 - 4000).",
        4000,
        4096,
      ],
      [
        'The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens.',
        5000,
        4096,
      ],
      ['Input prompt (5000 tokens) is too long and exceeds limit of 4096', 5000, 4096],
    ];
    for (const [message, prompt, context] of cases) {
      const error = upstreamContextLengthError(400, vllm(message));
      expect(error).toBeInstanceOf(ContextLengthError);
      expect(numbers(error)).toEqual([prompt, context]);
      expect(error).toMatchObject({ kind: 'invalid_request', code: 'context_length_exceeded', param: 'messages' });
    }
  });

  it('reads llama.cpp’s typed error and SGLang’s wording', () => {
    const llama = JSON.stringify({
      error: {
        code: 400,
        type: 'exceed_context_size_error',
        message: 'the request exceeds the available context size, try increasing it',
        n_prompt_tokens: 5000,
        n_ctx: 4096,
      },
    });
    expect(numbers(upstreamContextLengthError(400, llama))).toEqual([5000, 4096]);
    const sglang = JSON.stringify({
      object: 'error',
      message: "The input (5000 tokens) is longer than the model's context length (4096 tokens).",
      code: 400,
    });
    expect(numbers(upstreamContextLengthError(400, sglang))).toEqual([5000, 4096]);
  });

  it('takes an OpenAI-style code without numbers', () => {
    const error = upstreamContextLengthError(
      400,
      JSON.stringify({ error: { message: 'too long', code: 'context_length_exceeded' } }),
    );
    expect(error).toBeInstanceOf(ContextLengthError);
    expect(numbers(error)).toEqual([undefined, undefined]);
  });

  it('leaves other refusals and other statuses alone', () => {
    expect(upstreamContextLengthError(400, vllm('temperature must be at most 2'))).toBeUndefined();
    expect(
      upstreamContextLengthError(500, vllm('Input prompt (5000 tokens) is too long and exceeds limit of 4096')),
    ).toBeUndefined();
    expect(upstreamContextLengthError(400, 'not json at all')).toBeUndefined();
  });
});
