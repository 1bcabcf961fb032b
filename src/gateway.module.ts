import { type DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module.js';
import { GatewayConfig } from './config/gateway-config.js';
import { EnginesModule } from './engines/engines.module.js';
import { HttpModule } from './http/http.module.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';

/** The gateway, assembled from a validated configuration. Guards run in import order: drain, then auth. */
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayModule,
      global: true,
      imports: [LifecycleModule, AuthModule, EnginesModule, HttpModule],
      providers: [{ provide: GatewayConfig, useValue: config }],
      exports: [GatewayConfig],
    };
  }
}
