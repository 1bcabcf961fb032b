import 'reflect-metadata';
import type { IncomingMessage } from 'node:http';
import { type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { GatewayConfig } from './config/gateway-config.js';
import { GatewayModule } from './gateway.module.js';
import { mountGenerationRoutes } from './http/generation-routes/generation-router.js';
import { GENERATION_CONTROLLERS } from './http/http.module.js';
import { RequestValidationPipe } from './http/validation/request-validation.pipe.js';
import { GantryLogger } from './observability/logging/gantry-logger.js';
import { requestIdOf } from './observability/logging/request-id.js';
import type { ObservabilityOptions } from './observability/observability.module.js';
import { loadPlugins } from './observability/plugins.js';
import { strictJsonBodyParser } from './http/strict-json-body-parser.js';

export interface GatewayOptions {
  observability?: ObservabilityOptions;
  /** Plugin modules given in code, in addition to the configured `plugins` paths. */
  plugins?: Array<Type<unknown> | DynamicModule>;
}

/**
 * Builds the gateway application (not yet listening) from a validated configuration; used by
 * the CLI and by the end-to-end tests alike.
 */
export async function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<NestFastifyApplication> {
  const { server } = config;
  const adapter = new FastifyAdapter({
    bodyLimit: server.bodyLimitBytes,
    // Idle keep-alive sockets would otherwise hold app.close() for seconds.
    forceCloseConnections: true,
    // 0 by default: a long stream is not a slow request.
    requestTimeout: server.requestTimeoutMs,
    keepAliveTimeout: server.keepAliveTimeoutMs,
    genReqId: (request: IncomingMessage) => requestIdOf(request),
  });
  const plugins = [...(await loadPlugins(config.plugins)), ...(options.plugins ?? [])];
  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayModule.forRoot(config, { observability: options.observability, plugins }),
    adapter,
    // A failing provider rejects here (the CLI reports it) instead of aborting the process.
    { bufferLogs: true, abortOnError: false },
  );
  app.useLogger(app.get(GantryLogger));
  app.getHttpServer().headersTimeout = server.headersTimeoutMs;
  // Only JSON bodies: anything else gets 415 instead of confusing validation errors.
  adapter.getInstance().removeContentTypeParser('text/plain');
  app.useBodyParser('application/json', { bodyLimit: server.bodyLimitBytes }, strictJsonBodyParser(adapter.getInstance(), config.limits.maxJsonDepth));
  app.useGlobalPipes(new RequestValidationPipe());
  mountGenerationRoutes(app, GENERATION_CONTROLLERS);
  // Every answer, SSE included (the SSE writer copies these headers), names its request.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, reply, done) => {
      void reply.header('x-request-id', request.id);
      done();
    });
  return app;
}
