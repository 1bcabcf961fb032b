import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ids = new WeakMap<IncomingMessage, string>();
const ACCEPTABLE = /^[\w.:@/+=-]{1,128}$/;

/**
 * The id of a request: the client's `x-request-id` when it is a sane token, else a new UUID.
 * Memoized on the raw request, so Fastify, pino-http and the response header agree whatever
 * order they ask in.
 */
export function requestIdOf(request: IncomingMessage): string {
  let id = ids.get(request);
  if (id === undefined) {
    const given = request.headers['x-request-id'];
    id = typeof given === 'string' && ACCEPTABLE.test(given) ? given : randomUUID();
    ids.set(request, id);
  }
  return id;
}
