import type { ModelConfig } from '../config/model-config.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * The names a client's protocol gives the fields that limits are about, so that a refusal names
 * the field the client actually sent (`max_completion_tokens`, `max_output_tokens`, `input`).
 */
export interface RequestFieldNames {
  maxTokens: string;
  messages: string;
}

export const DEFAULT_FIELD_NAMES: RequestFieldNames = Object.freeze({ maxTokens: 'max_tokens', messages: 'messages' });

export interface RequestLimits {
  maxMessages?: number;
}

/**
 * Checks a decoded request against the gateway's and the model's limits before its stream opens
 * (so refusals get a real 400), and applies the model's `maxTokensLimit` to a request that asked
 * for no limit. Returns the request to run; the input is not modified.
 */
export function applyRequestLimits(
  request: GenerationRequest,
  model: ModelConfig,
  limits: RequestLimits,
  names: RequestFieldNames = DEFAULT_FIELD_NAMES,
): GenerationRequest {
  if (limits.maxMessages !== undefined && request.messages.length > limits.maxMessages) {
    throw new GatewayError(
      'invalid_request',
      `${names.messages}: the conversation has ${request.messages.length} messages; this gateway accepts at most ${limits.maxMessages}.`,
      { param: names.messages, code: 'too_many_messages' },
    );
  }
  checkIntegerRanges(request, names);
  const ceiling = model.maxTokensLimit;
  if (ceiling === undefined) return request;
  const asked = request.sampling.maxTokens;
  if (asked === undefined) return { ...request, sampling: { ...request.sampling, maxTokens: ceiling } };
  if (asked > ceiling) {
    throw new GatewayError(
      'invalid_request',
      `${names.maxTokens} is ${asked}, above the limit of ${ceiling} for model '${model.name}'.`,
      { param: names.maxTokens, code: 'max_tokens_exceeded' },
    );
  }
  return request;
}

/** The largest count an engine takes: C's int32, which vLLM and llama.cpp parse token counts into. */
const INT32_MAX = 2 ** 31 - 1;

/**
 * Integers the JSON number type lets through but no engine can take (`1e308`, `2^53 + 1`): a
 * token count or `top_k` beyond int32, a `seed` beyond the integers a double holds exactly.
 */
function checkIntegerRanges(request: GenerationRequest, names: RequestFieldNames): void {
  const { maxTokens, topK, seed } = request.sampling;
  const outOfRange = (param: string, value: number, limit: string) =>
    new GatewayError('invalid_request', `${param} is ${value}, beyond ${limit}.`, {
      param,
      code: 'integer_out_of_range',
    });
  if (maxTokens !== undefined && maxTokens > INT32_MAX)
    throw outOfRange(names.maxTokens, maxTokens, `the largest value accepted (${INT32_MAX})`);
  if (topK !== undefined && Math.abs(topK) > INT32_MAX)
    throw outOfRange('top_k', topK, `the largest value accepted (${INT32_MAX})`);
  if (seed !== undefined && !Number.isSafeInteger(seed))
    throw outOfRange('seed', seed, 'the integers a seed can hold exactly (±2^53 - 1)');
}
