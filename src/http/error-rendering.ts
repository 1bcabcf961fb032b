import { asGatewayError, type GatewayError } from '../errors/gateway-error.js';
import { anthropicErrorStatus, toAnthropicErrorBody } from '../protocols/errors/anthropic-error.js';
import { openAIErrorStatus, toOpenAIErrorBody } from '../protocols/errors/openai-error.js';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The protocol a path speaks, which decides the shape of its errors. */
export type ErrorDialect = 'openai' | 'anthropic';

/** Decided on the decoded path, as the router matches it (`/v1/message%73` is Messages). */
export function dialectOf(url: string): ErrorDialect {
  return decodedPathOf(url).startsWith('/v1/messages') ? 'anthropic' : 'openai';
}

function decodedPathOf(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
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
