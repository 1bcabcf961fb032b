import type { FastifyReply } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import { renderError } from '../../protocols/errors/render-error.js';
import { dialectOfPath } from '../../protocols/generation-protocols.js';

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route runs (a malformed `%`
 * escape in the path, an over-long path parameter) is a 400 in the protocol's shape, not
 * Fastify's `{"statusCode", "code", ...}`.
 */
export function answerFrameworkError(error: { code?: string }, url: string, reply: Pick<FastifyReply, 'code'>): void {
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'The request path is not a valid URL (a malformed % escape).'
      : 'The request could not be routed.';
  const rendered = renderError(
    new GatewayError('invalid_request', message, { code: 'invalid_url' }),
    dialectOfPath(url),
  );
  void reply
    .code(rendered.status)
    .headers({ ...rendered.headers, connection: 'close' })
    .send(rendered.body);
}
