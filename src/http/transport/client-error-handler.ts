import type { Socket } from 'node:net';
import { GatewayError } from '../../errors/gateway-error.js';
import { dialectOfPath } from '../../protocols/generation-protocols.js';
import { answerOnSocket } from './raw-error-response.js';

interface NodeClientError extends Error {
  code?: string;
  /** What Node had read of the request when parsing failed (a Buffer). */
  rawPacket?: unknown;
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused, or one whose headers did not
 * arrive in time, is answered in the protocol shape of the path its request line names (the
 * Anthropic shape on `/v1/messages*`), never Fastify's own or an empty body.
 */
export function answerClientError(error: NodeClientError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const dialect = dialectOfPath(requestTargetOf(error.rawPacket));
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return answerOnSocket(
        socket,
        408,
        requestError('The request did not arrive in time.', 'request_timeout'),
        dialect,
      );
    case 'HPE_HEADER_OVERFLOW':
      return answerOnSocket(
        socket,
        431,
        requestError('The request headers are larger than this gateway accepts.', 'headers_too_large'),
        dialect,
      );
    default:
      return answerOnSocket(
        socket,
        400,
        requestError(`The request is not valid HTTP/1.1 (${error.code ?? 'parse error'}).`, 'bad_http_request'),
        dialect,
      );
  }
}

function requestError(message: string, code: string): GatewayError {
  return new GatewayError('invalid_request', message, { code });
}

/** The request target of the first line of a raw request, or '' when there is none. */
export function requestTargetOf(packet: unknown): string {
  if (!Buffer.isBuffer(packet)) return '';
  const firstLine = packet.subarray(0, Math.min(packet.length, 8192)).toString('latin1').split('\r\n', 1)[0];
  return firstLine.split(' ')[1] ?? '';
}
