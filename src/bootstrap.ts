import 'reflect-metadata';
import type { IncomingMessage } from 'node:http';
import { type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { GatewayConfig } from './config/gateway-config.js';
import { GatewayModule } from './gateway.module.js';
import { requestValidationPipe } from './http/request-validation.pipe.js';
import { GantryLogger } from './observability/logging/gantry-logger.js';
import { requestIdOf } from './observability/logging/request-id.js';
import type { ObservabilityOptions } from './observability/observability.module.js';
import { loadPlugins } from './observability/plugins.js';

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
  const adapter = new FastifyAdapter({
    bodyLimit: config.server.bodyLimitBytes,
    // Idle keep-alive sockets would otherwise hold app.close() for seconds.
    forceCloseConnections: true,
    // A long stream is not a slow request: no whole-request timeout.
    requestTimeout: 0,
    keepAliveTimeout: 65_000,
    genReqId: (request: IncomingMessage) => requestIdOf(request),
  });
  const plugins = [...(await loadPlugins(config.plugins)), ...(options.plugins ?? [])];
  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayModule.forRoot(config, { observability: options.observability, plugins }),
    adapter,
    { bufferLogs: true },
  );
  app.useLogger(app.get(GantryLogger));
  app.useGlobalPipes(requestValidationPipe());
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
