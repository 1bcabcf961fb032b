import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { GatewayConfig } from '../config/gateway-config.js';
import { createEngine } from '../engines/create-engine.js';
import { ModelRegistry } from './model-registry.js';

/** Builds one engine per configured model and exposes them, with their admission, through the ModelRegistry. */
@Global()
@Module({
  providers: [
    {
      provide: ModelRegistry,
      inject: [GatewayConfig],
      useFactory: async (config: GatewayConfig) =>
        new ModelRegistry(
          await Promise.all(config.models.map(async (model) => ({ config: model, engine: await createEngine(model) }))),
        ),
    },
  ],
  exports: [ModelRegistry],
})
export class ModelsModule implements OnApplicationShutdown {
  constructor(@Inject(ModelRegistry) private readonly registry: ModelRegistry) {}

  async onApplicationShutdown(): Promise<void> {
    await this.registry.close();
  }
}
