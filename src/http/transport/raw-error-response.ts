import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { GatewayError } from '../../errors/gateway-error.js';
import { toAnthropicErrorBody } from '../../protocols/errors/anthropic-error.js';
import { toOpenAIErrorBody } from '../../protocols/errors/openai-error.js';
import type { ErrorDialect } from '../../protocols/errors/render-error.js';

/**
 * A whole HTTP/1.1 error response, for answers the server writes on a socket itself (a request
 * Node could not parse, CONNECT, an unmet `Expect`): the status is given, the body is the
 * protocol's own error shape, and the connection closes after it.
 */
export function rawErrorResponse(status: number, error: GatewayError, dialect: ErrorDialect): string {
  const body = JSON.stringify(dialect === 'anthropic' ? toAnthropicErrorBody(error) : toOpenAIErrorBody(error));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/** How long a refused client has to read its answer before its socket is destroyed. */
const LINGER_MS = 1_000;

/**
 * Writes `rawErrorResponse` when the socket can still take it, then closes the socket: ends our
 * side at once and destroys it after a short linger. Node's server sockets stay half-open, so a
 * client that never closes its side (or keeps sending) would otherwise hold the descriptor, and
 * have what it sends parsed and served; destroying at once could reset the answer away.
 */
export function answerOnSocket(socket: Socket, status: number, error: GatewayError, dialect: ErrorDialect): void {
  if (socket.destroyed) return;
  if (!socket.writable) return void socket.destroy();
  socket.end(rawErrorResponse(status, error, dialect));
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
