import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../../errors/gateway-error.js';
import { answerOnSocket } from './raw-error-response.js';

/**
 * `server.maxConnectionsPerAddress`: one client address may hold at most this many open
 * connections; more are answered 429 and closed at once, so that one address cannot take every
 * file descriptor. Off (0) by default: behind a load balancer every connection comes from its
 * few addresses.
 */
export function limitConnectionsPerAddress(server: Server, limit: number): void {
  if (limit <= 0) return;
  const open = new Map<string, number>();
  const refused = new WeakSet<Socket>();
  // A request that still arrives on a refused connection (before it is destroyed) is not served.
  server.prependListener('request', (request: IncomingMessage) => {
    if (refused.has(request.socket)) request.socket.destroy();
  });
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > limit) {
      refused.add(socket);
      const error = new GatewayError(
        'rate_limited',
        `Too many open connections from this address (at most ${limit}).`,
        {
          code: 'too_many_connections',
        },
      );
      return answerOnSocket(socket, 429, error, 'openai');
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
