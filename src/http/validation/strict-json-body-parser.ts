import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';

type ParserDone = (error: Error | null, body?: unknown) => void;

/**
 * The JSON body parser: Fastify's own (which refuses `__proto__` and `constructor.prototype`
 * keys), behind two checks that keep hostile bodies away from validation:
 * - the bytes must be valid UTF-8 (a lossy decode would silently turn them into U+FFFD);
 * - objects and arrays may nest at most `maxDepth` deep: class-transformer and class-validator
 *   recurse, and a body of 10,000 nested arrays would otherwise exhaust their stack.
 * Both failures are 400s in the client's protocol shape.
 *
 * An empty body is no body (`undefined`), not an error: SDKs send `content-type:
 * application/json` with nothing after it on routes that take none (the OpenAI Python SDK's
 * delete and cancel). A route that needs a body refuses `undefined` when it validates it.
 */
export function strictJsonBodyParser(fastify: FastifyInstance, maxDepth: number) {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return (request: FastifyRequest, body: Buffer, done: ParserDone): void => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = decoder.decode(body);
    } catch {
      done(new GatewayError('invalid_request', 'The request body is not valid UTF-8.'));
      return;
    }
    // Fastify's parser calls back; its returned promise carries nothing this parser needs.
    void parseJson(request, text, (error: Error | null, value?: unknown) => {
      if (error) return done(error);
      if (nestsDeeperThan(value, maxDepth)) {
        return done(
          new GatewayError(
            'invalid_request',
            `The request body nests objects and arrays more than ${maxDepth} levels deep.`,
          ),
        );
      }
      done(null, value);
    });
  };
}

/** Whether `value` has an object or array more than `maxDepth` levels down; iterative, so any depth is safe. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}
