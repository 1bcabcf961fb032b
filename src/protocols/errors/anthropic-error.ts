import { ContextLengthError } from '../../engine/context-length-error.js';
import type { FailureKind, GatewayError } from '../../errors/gateway-error.js';

/** Anthropic's error body: `{"type": "error", "error": {"type", "message"}}` (types/shared/error_response.py). */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

const STATUS_AND_TYPE: Record<FailureKind, [number, string]> = {
  invalid_request: [400, 'invalid_request_error'],
  authentication: [401, 'authentication_error'],
  permission: [403, 'permission_error'],
  not_found: [404, 'not_found_error'],
  method_not_allowed: [405, 'invalid_request_error'],
  payload_too_large: [413, 'request_too_large'],
  unsupported_media_type: [415, 'invalid_request_error'],
  rate_limited: [429, 'rate_limit_error'],
  // 529 is what the Anthropic SDKs map to OverloadedError (and retry).
  overloaded: [529, 'overloaded_error'],
  unavailable: [503, 'overloaded_error'],
  upstream: [502, 'api_error'],
  timeout: [504, 'timeout_error'],
  internal: [500, 'api_error'],
};

export function anthropicErrorStatus(error: GatewayError): number {
  return STATUS_AND_TYPE[error.kind][0];
}

export function toAnthropicErrorBody(error: GatewayError): AnthropicErrorBody {
  return { type: 'error', error: { type: STATUS_AND_TYPE[error.kind][1], message: anthropicMessage(error) } };
}

/**
 * Anthropic's own words for a prompt over the context ("prompt is too long: N tokens > M
 * maximum"): Anthropic has no error code for it, and clients (Claude Code's compaction) match the text.
 */
function anthropicMessage(error: GatewayError): string {
  if (!(error instanceof ContextLengthError)) return error.message;
  if (error.promptTokens === undefined || error.contextLength === undefined)
    return "prompt is too long for this model's context window";
  return `prompt is too long: ${error.promptTokens} tokens > ${error.contextLength} maximum`;
}
