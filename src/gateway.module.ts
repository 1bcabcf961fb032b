import { type DynamicModule, Module, type Provider, type Type } from '@nestjs/common';
import { AuthModule } from './auth/auth.module.js';
import { GatewayConfig } from './config/gateway-config.js';
import { HttpModule } from './http/http.module.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { ModelsModule } from './models/models.module.js';
import { ObservabilityModule, type ObservabilityOptions } from './observability/observability.module.js';
import { StoredResponsesModule } from './stored-responses/stored-responses.module.js';

/**
 * The gateway, assembled from a validated configuration, plus any plugin modules. Nest's routes
 * run the global guards in import order: drain, then auth (the generation routes run the same two
 * in that order, mount-generation-routes.ts). `providers` are offered to every module (a worker
 * of several provides the primary's admission, limit store and metrics this way).
 */
@Module({})
export class GatewayModule {
  static forRoot(
    config: GatewayConfig,
    options: {
      /** Names the configuration in refusals: its file, `defaults`. */
      origin?: string;
      observability?: ObservabilityOptions;
      plugins?: Array<Type<unknown> | DynamicModule>;
      providers?: Provider[];
    } = {},
  ): DynamicModule {
    const shared = options.providers ?? [];
    return {
      module: GatewayModule,
      global: true,
      imports: [
        LifecycleModule,
        AuthModule,
        ModelsModule.forRoot(options.origin ?? 'config'),
        ObservabilityModule.forRoot(config, options.observability),
        StoredResponsesModule,
        HttpModule,
        ...(options.plugins ?? []),
      ],
      providers: [{ provide: GatewayConfig, useValue: config }, ...shared],
      exports: [GatewayConfig, ...shared.map((provider) => ('provide' in provider ? provider.provide : provider))],
    };
  }
}
