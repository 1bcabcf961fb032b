import { ContextLengthError } from '../../engine/context-length-error.js';
import type { FailureKind, GatewayError } from '../../errors/gateway-error.js';

/** OpenAI's error body: `{"error": {"message", "type", "param", "code"}}` (shared/error_object.py). */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

const STATUS_AND_TYPE: Record<FailureKind, [number, string]> = {
  invalid_request: [400, 'invalid_request_error'],
  authentication: [401, 'authentication_error'],
  permission: [403, 'permission_error'],
  // OpenAI answers an unknown model (code model_not_found) or path as an invalid request.
  not_found: [404, 'invalid_request_error'],
  method_not_allowed: [405, 'invalid_request_error'],
  payload_too_large: [413, 'invalid_request_error'],
  unsupported_media_type: [415, 'invalid_request_error'],
  rate_limited: [429, 'rate_limit_error'],
  // Queue full: 429 so that the SDKs back off and retry (they retry 429 and >= 500).
  overloaded: [429, 'rate_limit_error'],
  unavailable: [503, 'server_error'],
  upstream: [502, 'upstream_error'],
  timeout: [504, 'timeout_error'],
  internal: [500, 'server_error'],
};

export function openAIErrorStatus(error: GatewayError): number {
  return STATUS_AND_TYPE[error.kind][0];
}

export function toOpenAIErrorBody(error: GatewayError): OpenAIErrorBody {
  return {
    error: {
      message: openAIMessage(error),
      type: STATUS_AND_TYPE[error.kind][1],
      param: error.param ?? null,
      code: error.code ?? null,
    },
  };
}

/** OpenAI's own sentence for a prompt over the context, which clients show as it is. */
function openAIMessage(error: GatewayError): string {
  if (!(error instanceof ContextLengthError) || error.promptTokens === undefined || error.contextLength === undefined)
    return error.message;
  return (
    `This model's maximum context length is ${error.contextLength} tokens. ` +
    `However, your messages resulted in ${error.promptTokens} tokens. Please reduce the length of the messages.`
  );
}
