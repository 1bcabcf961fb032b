import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import { dialectOfPath } from '../../protocols/generation-protocols.js';
import { hasBody } from './request-screening.js';
import { answerOnSocket } from './raw-error-response.js';

/**
 * `server.bodyTimeoutMs`: a request body must arrive whole within this time of its headers.
 * Node times out headers (`headersTimeout`) but, with `requestTimeout` at 0, never a body: a
 * client sending headers then a trickle (or nothing) would hold its connection, unauthenticated,
 * forever. Past the limit the client gets a 408 in its protocol's shape and the connection closes;
 * if an answer already left (a refusal that did not wait for the body), the socket just closes.
 */
export function bodyTimeout(timeoutMs: number) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const raw = request.raw;
    if (timeoutMs > 0 && !raw.complete && hasBody(raw.headers)) {
      const timer = setTimeout(() => {
        const socket = raw.socket;
        if (reply.raw.headersSent) return void socket.destroy();
        // Fastify must not answer this request again when its body read fails on the closed socket.
        reply.hijack();
        const error = new GatewayError('invalid_request', `The request body did not arrive within ${timeoutMs} ms.`, {
          code: 'body_timeout',
        });
        answerOnSocket(socket, 408, error, dialectOfPath(request.url));
      }, timeoutMs);
      const clear = () => clearTimeout(timer);
      raw.once('end', clear);
      raw.once('close', clear);
    }
    done();
  };
}
