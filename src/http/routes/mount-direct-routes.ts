import { Logger, type Type } from '@nestjs/common';
import { ExternalContextCreator, type ParamsFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import { renderError } from '../../protocols/errors/render-error.js';
import { dialectOfPath } from '../../protocols/generation-protocols.js';
import { DIRECT_ROUTE, DIRECT_ROUTE_PARAMS, type DirectRoute, DirectRouteParam, type HttpExchange } from './direct-route.decorator.js';

const logger = new Logger('Gantry');

/** The handler's arguments, from what the Fastify route gets: `[request, reply]`. */
const PARAMS: ParamsFactory = {
  exchangeKeyForValue: (type: number, _data: unknown, [request, reply]: [FastifyRequest, FastifyReply]) =>
    type === DirectRouteParam.Body ? request.body : ({ request, reply } satisfies HttpExchange),
};

/**
 * Registers the `@DirectPost` methods of the given providers as Fastify routes, each wrapped by
 * Nest's ExternalContextCreator (the public way Nest applies enhancers outside its HTTP router, as
 * @nestjs/microservices and @nestjs/graphql do): guards, then interceptors, then the pipes on the
 * parameters and the handler, the exception filters for whatever fails, global enhancers
 * (APP_GUARD, APP_INTERCEPTOR, APP_FILTER, `useGlobalPipes`) included. Call it once the global
 * pipes are set, before the application listens. Enhancers are resolved here, once: request-scoped
 * ones do not apply to these routes (Nest offers no public way to see them, so they cannot be
 * refused either). Middleware reaches these routes by path.
 *
 * Why not a controller: the generation routes stream, and Nest's router adds per request a
 * disconnect watcher and a ReplaySubject, and per event a `tap` and a `takeUntil`; the responder
 * already ends the stream when the client leaves.
 */
export function mountDirectRoutes(app: NestFastifyApplication, providers: readonly Type<object>[]): void {
  const contexts = app.get(ExternalContextCreator);
  const fastify = app.getHttpAdapter().getInstance();
  for (const provider of providers) {
    const instance = app.get(provider);
    const prototype = provider.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const method = prototype[name];
      const route = typeof method === 'function' ? (Reflect.getMetadata(DIRECT_ROUTE, method) as DirectRoute | undefined) : undefined;
      if (route === undefined) continue;
      const handle = contexts.create(instance, method as (...args: unknown[]) => unknown, name, DIRECT_ROUTE_PARAMS, PARAMS);
      const onArrival = route.onArrival;
      fastify.post(route.path, (request, reply) => {
        onArrival?.(request);
        handle(request, reply).catch((error: unknown) => answerUnhandled(error, request, reply));
      });
    }
  }
}

/**
 * What no exception filter answered: a filter that threw, or none that returned a value (outside
 * the HTTP router, Nest takes a filter that returns nothing for one that did not handle the
 * error). A 500 in the protocol's shape if nothing was sent yet; a cut connection otherwise.
 */
function answerUnhandled(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  if (reply.sent || reply.raw.headersSent) {
    if (!reply.raw.writableEnded) reply.raw.destroy();
    return;
  }
  logger.error(`No exception filter answered on ${request.method} ${request.url.split('?')[0]}`, (error as Error)?.stack);
  const rendered = renderError(new GatewayError('internal', 'The gateway failed to serve this request.'), dialectOfPath(request.url));
  void reply.status(rendered.status).headers(rendered.headers).send(rendered.body);
}
