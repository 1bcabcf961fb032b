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
