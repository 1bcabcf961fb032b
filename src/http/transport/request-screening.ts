import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import { renderError } from '../../protocols/errors/render-error.js';
import { dialectOfPath } from '../../protocols/generation-protocols.js';

/**
 * The `onRequest` checks every request passes before routing, for requests that are well-formed
 * HTTP but that Gantry must not serve: two `Host` headers (ambiguous behind a proxy: which one
 * did it route by?) and a body in a `Content-Encoding` Gantry does not decode. Both are answered
 * in the protocol's shape and close the connection (their body is left unread).
 */
export function screenRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const refusal = refusalOf(request.raw.rawHeaders, request.headers);
  if (refusal === undefined) return done();
  const rendered = renderError(refusal, dialectOfPath(request.url));
  void reply
    .code(rendered.status)
    .headers({ ...rendered.headers, connection: 'close' })
    .send(rendered.body);
}

function refusalOf(rawHeaders: string[], headers: IncomingHttpHeaders): GatewayError | undefined {
  let hosts = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index].length === 4 && rawHeaders[index].toLowerCase() === 'host') hosts += 1;
  }
  if (hosts > 1)
    return new GatewayError('invalid_request', 'The request has more than one Host header.', {
      code: 'duplicate_host_header',
    });
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity' && hasBody(headers)) {
    return new GatewayError(
      'unsupported_media_type',
      `Request bodies in Content-Encoding '${encoding}' are not accepted; send plain JSON.`,
      {
        code: 'unsupported_content_encoding',
      },
    );
  }
  return undefined;
}

export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
