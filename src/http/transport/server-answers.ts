import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../../errors/gateway-error.js';
import { renderError } from '../../protocols/errors/render-error.js';
import { dialectOfPath } from '../../protocols/generation-protocols.js';
import { answerOnSocket } from './raw-error-response.js';

/**
 * Answers for what Node's HTTP server would otherwise drop or answer with an empty body: a
 * CONNECT (Node destroys the socket when nobody listens) and an `Expect` other than
 * `100-continue` (Node's bare 417). Both in the protocol's shape, connection closed.
 */
export function answerUnservedRequests(server: Server): void {
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    const error = new GatewayError('method_not_allowed', 'CONNECT is not supported: Gantry is not a forward proxy.', {
      code: 'method_not_allowed',
    });
    answerOnSocket(socket, 405, error, 'openai');
  });
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const error = new GatewayError('invalid_request', `Expect: ${request.headers.expect} is not supported.`, {
      code: 'expectation_failed',
    });
    const rendered = renderError(error, dialectOfPath(request.url ?? ''));
    const body = JSON.stringify(rendered.body);
    response.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    response.end(body);
  });
}
