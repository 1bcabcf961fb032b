import { describe, expect, it } from 'vitest';
import { StubModelConfig } from '../engines/stub/stub-model-config.js';
import { generationRequest, userMessage } from '../../test/support/requests.js';
import { applyRequestLimits } from './request-limits.js';

const model = (maxTokensLimit?: number) =>
  Object.assign(new StubModelConfig(), { name: 'capped', engine: 'stub' as const, maxTokensLimit });

function refusalOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

describe('applyRequestLimits', () => {
  it('applies the model ceiling to a request that asked for no limit, without touching the input', () => {
    const request = generationRequest();
    const limited = applyRequestLimits(request, model(256), {});
    expect(limited.sampling.maxTokens).toBe(256);
    expect(request.sampling.maxTokens).toBeUndefined();
    const asked = generationRequest({ sampling: { stop: [], maxTokens: 100 } });
    expect(applyRequestLimits(asked, model(256), {})).toBe(asked);
    expect(applyRequestLimits(request, model(), {})).toBe(request);
  });

  it('refuses max tokens above the ceiling, naming the protocol field', () => {
    const request = generationRequest({ sampling: { stop: [], maxTokens: 1000 } });
    const refusal = refusalOf(() =>
      applyRequestLimits(request, model(256), {}, { maxTokens: 'max_output_tokens', messages: 'input' }),
    );
    expect(refusal).toMatchObject({ kind: 'invalid_request', param: 'max_output_tokens', code: 'max_tokens_exceeded' });
    expect((refusal as Error).message).toBe("max_output_tokens is 1000, above the limit of 256 for model 'capped'.");
  });

  it('refuses a conversation with more messages than limits.maxMessages', () => {
    const request = generationRequest({ messages: [userMessage('a'), userMessage('b'), userMessage('c')] });
    expect(applyRequestLimits(request, model(), { maxMessages: 3 })).toBe(request);
    expect(refusalOf(() => applyRequestLimits(request, model(), { maxMessages: 2 }))).toMatchObject({
      kind: 'invalid_request',
      param: 'messages',
      code: 'too_many_messages',
    });
  });

  it('refuses integers no engine can take: token counts and top_k beyond int32, seeds beyond a double', () => {
    const sampling = (extra: Record<string, number>) => generationRequest({ sampling: { stop: [], ...extra } });
    expect(
      refusalOf(() =>
        applyRequestLimits(
          sampling({ maxTokens: 1e308 }),
          model(),
          {},
          { maxTokens: 'max_completion_tokens', messages: 'messages' },
        ),
      ),
    ).toMatchObject({
      kind: 'invalid_request',
      param: 'max_completion_tokens',
      code: 'integer_out_of_range',
    });
    expect(refusalOf(() => applyRequestLimits(sampling({ maxTokens: 2 ** 31 }), model(), {}))).toMatchObject({
      param: 'max_tokens',
    });
    expect(refusalOf(() => applyRequestLimits(sampling({ topK: 2 ** 53 + 2 }), model(), {}))).toMatchObject({
      param: 'top_k',
    });
    expect(refusalOf(() => applyRequestLimits(sampling({ seed: 2 ** 53 + 2 }), model(), {}))).toMatchObject({
      param: 'seed',
    });
    const largest = sampling({ maxTokens: 2 ** 31 - 1, topK: 2 ** 31 - 1, seed: -(2 ** 53 - 1) });
    expect(applyRequestLimits(largest, model(), {})).toBe(largest);
  });
});
