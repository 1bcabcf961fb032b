import { asGatewayError, type GatewayError } from '../../errors/gateway-error.js';
import { anthropicErrorStatus, toAnthropicErrorBody } from './anthropic-error.js';
import { openAIErrorStatus, toOpenAIErrorBody } from './openai-error.js';

/** The error shape a protocol speaks: OpenAI's (Chat Completions, Responses) or Anthropic's (Messages). */
export type ErrorDialect = 'openai' | 'anthropic';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The HTTP status an error gets in a dialect (Anthropic answers a full queue 529, OpenAI 429). */
export function errorStatus(error: unknown, dialect: ErrorDialect): number {
  const failure = asGatewayError(error);
  return dialect === 'anthropic' ? anthropicErrorStatus(failure) : openAIErrorStatus(failure);
}

/** An error answered before any stream opened: real status, protocol body, `Retry-After` when known. */
export function renderError(error: unknown, dialect: ErrorDialect): RenderedError {
  const failure: GatewayError = asGatewayError(error);
  const headers: Record<string, string> = {};
  if (failure.retryAfterSeconds !== undefined) headers['retry-after'] = String(failure.retryAfterSeconds);
  switch (dialect) {
    case 'openai':
      return { status: openAIErrorStatus(failure), headers, body: toOpenAIErrorBody(failure) };
    case 'anthropic':
      return { status: anthropicErrorStatus(failure), headers, body: toAnthropicErrorBody(failure) };
  }
}
