import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { AdmissionCoordinator } from '../admission/model-admission.js';
import { GatewayConfig } from '../config/gateway-config.js';
import { createEngine } from '../engines/create-engine.js';
import { ModelRegistry } from './model-registry.js';

/**
 * Builds one engine per configured model and exposes them, with their admission, through the
 * ModelRegistry. Admission is this process's own unless an AdmissionCoordinator is provided (a
 * worker of several provides the primary's).
 */
@Global()
@Module({
  providers: [
    {
      provide: ModelRegistry,
      inject: [GatewayConfig, { token: AdmissionCoordinator, optional: true }],
      useFactory: async (config: GatewayConfig, coordinator: AdmissionCoordinator | undefined) =>
        new ModelRegistry(
          await Promise.all(config.models.map(async (model) => ({ config: model, engine: await createEngine(model) }))),
          coordinator,
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
