import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';

type ParserDone = (error: Error | null, body?: unknown) => void;

/**
 * The JSON body parser: Fastify's own (which refuses `__proto__` and `constructor.prototype`
 * keys), behind two checks that keep hostile bodies away from validation:
 * - the bytes must be valid UTF-8 (a lossy decode would silently turn them into U+FFFD);
 * - objects and arrays may nest at most `maxDepth` deep: class-transformer and class-validator
 *   recurse, and a body of 10,000 nested arrays would otherwise exhaust their stack;
 * - a body holds at most `maxNodes` objects and arrays, which bounds how long its checks hold
 *   the event loop every other stream shares.
 * Both failures are 400s in the client's protocol shape.
 *
 * An empty body is no body (`undefined`), not an error: SDKs send `content-type:
 * application/json` with nothing after it on routes that take none (the OpenAI Python SDK's
 * delete and cancel). A route that needs a body refuses `undefined` when it validates it.
 */
export function strictJsonBodyParser(fastify: FastifyInstance, maxDepth: number, maxNodes = Infinity) {
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
      const shape = jsonShapeBeyond(value, maxDepth, maxNodes);
      if (shape === 'deep')
        return done(
          new GatewayError(
            'invalid_request',
            `The request body nests objects and arrays more than ${maxDepth} levels deep.`,
          ),
        );
      if (shape === 'many')
        return done(
          new GatewayError('invalid_request', `The request body holds more than ${maxNodes} objects and arrays.`, {
            code: 'too_many_json_nodes',
          }),
        );
      // A small Buffer is a view of Node's shared pool, which it would pin: its text is kept instead.
      rawBodies.set(request, body.length <= Buffer.poolSize >>> 1 ? text : body);
      done(null, value);
    });
  };
}

/** Each parsed body's bytes (outside the collected heap), or its text when small, for releaseParsedBody. */
const rawBodies = new WeakMap<FastifyRequest, Buffer | string>();

/**
 * Lets go of a request's parsed body once it is validated: `request.body` becomes a getter that
 * parses the same bytes again, once, if anything reads it later. A body kept as objects while its
 * answer streams is copied by every scavenge that meets it: most of an agent turn's cost over a
 * bare proxy (docs/benchmarks.md, "The floors, with profiles"). The bytes passed the checks
 * already, so the second parse gives an equal value.
 */
export function releaseParsedBody(request: FastifyRequest): void {
  const raw = rawBodies.get(request);
  if (raw === undefined) return;
  rawBodies.delete(request);
  let parsed: { value: unknown } | undefined;
  Object.defineProperty(request, 'body', {
    configurable: true,
    enumerable: true,
    get: () =>
      (parsed ??= {
        value: JSON.parse(typeof raw === 'string' ? raw : new TextDecoder('utf-8').decode(raw)) as unknown,
      }).value,
    set: (value: unknown) => {
      Object.defineProperty(request, 'body', { configurable: true, enumerable: true, writable: true, value });
    },
  });
}

/** Whether `value` has an object or array more than `maxDepth` levels down; iterative, so any depth is safe. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  return jsonShapeBeyond(value, maxDepth, Infinity) === 'deep';
}

/**
 * Where a parsed body goes past the limits: objects and arrays nested more than `maxDepth` deep
 * (`deep`), or more than `maxNodes` of them in all (`many`: what validation costs grows with
 * their count, docs/benchmarks.md "Loop pauses"); undefined within both. One iterative walk.
 */
export function jsonShapeBeyond(value: unknown, maxDepth: number, maxNodes: number): 'deep' | 'many' | undefined {
  // Two parallel stacks and a key loop: no pair or values array per node, garbage every agent's turn would pay.
  const pending: unknown[] = [value];
  const depths: number[] = [1];
  let nodes = 0;
  while (pending.length > 0) {
    const node = pending.pop();
    const depth = depths.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > maxDepth) return 'deep';
    if (++nodes > maxNodes) return 'many';
    if (Array.isArray(node)) {
      for (const child of node) {
        if (typeof child !== 'object' || child === null) continue;
        pending.push(child);
        depths.push(depth + 1);
      }
      continue;
    }
    for (const key in node) {
      // JSON.parse makes own keys only; the check keeps any other value's inherited ones out.
      if (!Object.hasOwn(node, key)) continue;
      const child = (node as Record<string, unknown>)[key];
      if (typeof child !== 'object' || child === null) continue;
      pending.push(child);
      depths.push(depth + 1);
    }
  }
  return undefined;
}
