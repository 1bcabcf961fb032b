import { type DynamicModule, Module } from '@nestjs/common';
import { GatewayConfig } from './config/gateway-config.js';
import { EnginesModule } from './engines/engines.module.js';
import { HttpModule } from './http/http.module.js';

/** The gateway, assembled from a validated configuration. */
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayModule,
      global: true,
      imports: [EnginesModule, HttpModule],
      providers: [{ provide: GatewayConfig, useValue: config }],
      exports: [GatewayConfig],
    };
  }
}
