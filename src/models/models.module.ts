import { type DynamicModule, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AdmissionCoordinator } from '../admission/model-admission.js';
import { GatewayConfig } from '../config/gateway-config.js';
import { EngineKinds } from '../engines/engine-kinds.js';
import { EnginesModule } from '../engines/engines.module.js';
import { ModelRegistry } from './model-registry.js';

/**
 * Starts the configured models once every module's providers exist (an engine kind may be a
 * plugin's): validates each entry by its kind, builds the engines, and closes them at shutdown.
 * A refusal rejects the application's start (`listen`) with the message.
 */
class ModelsStartup implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly config: GatewayConfig,
    private readonly origin: string,
    private readonly kinds: EngineKinds,
    private readonly registry: ModelRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.config.models = this.kinds.parseModels(this.config, this.origin);
    await this.registry.apply(this.config.models, (model) => this.kinds.create(model));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.registry.close();
  }
}

/**
 * The models this gateway serves, with their engines and admission, through the ModelRegistry,
 * and the engine kinds (`EngineKinds`). Admission is this process's own unless an
 * AdmissionCoordinator is provided (a worker of several provides the primary's). `origin` names
 * the configuration in refusals.
 */
@Module({})
export class ModelsModule {
  static forRoot(origin: string): DynamicModule {
    return {
      module: ModelsModule,
      global: true,
      imports: [EnginesModule],
      providers: [
        {
          provide: ModelRegistry,
          inject: [{ token: AdmissionCoordinator, optional: true }],
          useFactory: (coordinator: AdmissionCoordinator | undefined) => new ModelRegistry([], coordinator),
        },
        {
          provide: ModelsStartup,
          inject: [GatewayConfig, EngineKinds, ModelRegistry],
          useFactory: (config: GatewayConfig, kinds: EngineKinds, registry: ModelRegistry) =>
            new ModelsStartup(config, origin, kinds, registry),
        },
      ],
      exports: [ModelRegistry, EnginesModule],
    };
  }
}
