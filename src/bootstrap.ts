import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { GatewayConfig } from './config/gateway-config.js';
import { GatewayModule } from './gateway.module.js';
import { requestValidationPipe } from './http/request-validation.pipe.js';
import { strictJsonBodyParser } from './http/strict-json-body-parser.js';

export interface GatewayOptions {
  /** Nest's own log levels; the CLI keeps warnings and errors. */
  logger?: false | Array<'log' | 'error' | 'warn' | 'debug' | 'verbose'>;
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
  });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config), adapter, {
    logger: options.logger ?? ['error', 'warn'],
    // A failing provider rejects here (the CLI reports it) instead of aborting the process.
    abortOnError: false,
  });
  app.getHttpServer().headersTimeout = server.headersTimeoutMs;
  app.useBodyParser('application/json', { bodyLimit: server.bodyLimitBytes }, strictJsonBodyParser(adapter.getInstance(), config.limits.maxJsonDepth));
  app.useGlobalPipes(requestValidationPipe());
  return app;
}
