import 'reflect-metadata';
import type { IncomingMessage } from 'node:http';
import { type DynamicModule, type Provider, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig } from './config/gateway-config.js';
import { GatewayModule } from './gateway.module.js';
import { mountGenerationRoutes } from './http/routes/mount-generation-routes.js';
import { RequestValidationPipe } from './http/validation/request-validation.pipe.js';
import { GantryLogger } from './observability/logging/gantry-logger.js';
import { requestIdOf } from './observability/logging/request-id.js';
import type { ObservabilityOptions } from './observability/observability.module.js';
import { loadPlugins } from './plugins.js';
import { strictJsonBodyParser } from './http/validation/strict-json-body-parser.js';
import { bodyTimeout } from './http/transport/body-timeout.js';
import { answerClientError } from './http/transport/client-error-handler.js';
import { limitConnectionsPerAddress } from './http/transport/connections-per-address.js';
import { answerFrameworkError } from './http/transport/framework-errors.js';
import { screenRequest } from './http/transport/request-screening.js';
import { answerUnservedRequests } from './http/transport/server-answers.js';

/** `application/vnd.example+json` and the like, parameters allowed. */
const JSON_SUFFIX_MEDIA_TYPE = /^application\/[a-z0-9!#$&^_.-]+\+json(;|$)/i;

export interface GatewayOptions {
  /** Names the configuration in refusals (its file; `defaults`); `config` when absent. */
  origin?: string;
  observability?: ObservabilityOptions;
  /** Plugin modules given in code, in addition to the configured `plugins` paths. */
  plugins?: Array<Type<unknown> | DynamicModule>;
  /** Providers offered to every module: a worker of several gives the primary's admission, limits and metrics. */
  providers?: Provider[];
  /**
   * Whether this process logs what its start finds true of the whole instance (Nest enhancers that
   * do not reach the generation routes): every worker of several builds the same gateway, so only
   * the first says it. Default true.
   */
  instanceWarnings?: boolean;
}

/**
 * Builds the gateway application (not yet listening) from a validated configuration; used by
 * the CLI and by the end-to-end tests alike. The models start when it does (`listen`, `init`):
 * their entries are validated by their engine kinds then, plugins' included, and a refusal
 * rejects with a ConfigError.
 */
export async function createGateway(
  config: GatewayConfig,
  options: GatewayOptions = {},
): Promise<NestFastifyApplication> {
  const { server } = config;
  const adapter = new FastifyAdapter({
    bodyLimit: server.bodyLimitBytes,
    // Idle keep-alive sockets would otherwise hold app.close() for seconds.
    forceCloseConnections: true,
    // 0 by default: a long stream is not a slow request.
    requestTimeout: server.requestTimeoutMs,
    keepAliveTimeout: server.keepAliveTimeoutMs,
    // Node checks header and request deadlines this often (30 s by default, which would let a
    // 1 s headersTimeoutMs run for half a minute).
    http: { connectionsCheckingInterval: Math.min(1_000, server.headersTimeoutMs) },
    genReqId: (request: IncomingMessage) => requestIdOf(request),
    clientErrorHandler: (error, socket) => answerClientError(error, socket),
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      answerFrameworkError(error, request.url, reply),
  });
  const plugins = [...(await loadPlugins(config.plugins)), ...(options.plugins ?? [])];
  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayModule.forRoot(config, {
      origin: options.origin,
      observability: options.observability,
      plugins,
      providers: options.providers,
    }),
    adapter,
    // A failing provider rejects here (the CLI reports it) instead of aborting the process.
    // Nest's default parsers would add form bodies, which a browser can send cross-site.
    { bufferLogs: true, abortOnError: false, bodyParser: false },
  );
  app.useLogger(app.get(GantryLogger));
  app.getHttpServer().headersTimeout = server.headersTimeoutMs;
  answerUnservedRequests(app.getHttpServer());
  limitConnectionsPerAddress(app.getHttpServer(), server.maxConnectionsPerAddress);
  // Only JSON bodies (`application/json`, any `+json`): anything else gets 415 instead of
  // confusing validation errors.
  adapter.getInstance().removeContentTypeParser('text/plain');
  const jsonParser = strictJsonBodyParser(
    adapter.getInstance(),
    config.limits.maxJsonDepth,
    config.limits.maxJsonNodes,
  );
  app.useBodyParser('application/json', { bodyLimit: server.bodyLimitBytes }, jsonParser);
  app.useBodyParser(JSON_SUFFIX_MEDIA_TYPE, { bodyLimit: server.bodyLimitBytes }, jsonParser);
  app.useGlobalPipes(new RequestValidationPipe());
  mountGenerationRoutes(app, { warnOfUnreachableEnhancers: options.instanceWarnings ?? true });
  // Every answer, SSE included (the SSE writer copies these headers), names its request.
  const fastify = adapter.getInstance();
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  fastify.addHook('onRequest', screenRequest);
  fastify.addHook('onRequest', bodyTimeout(server.bodyTimeoutMs));
  return app;
}
