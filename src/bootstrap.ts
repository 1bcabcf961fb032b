import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { GatewayConfig } from './config/gateway-config.js';
import { GatewayModule } from './gateway.module.js';
import { requestValidationPipe } from './http/request-validation.pipe.js';

export interface GatewayOptions {
  /** Nest's own log levels; the CLI keeps warnings and errors. */
  logger?: false | Array<'log' | 'error' | 'warn' | 'debug' | 'verbose'>;
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
  });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config), adapter, {
    logger: options.logger ?? ['error', 'warn'],
  });
  app.useGlobalPipes(requestValidationPipe());
  return app;
}
