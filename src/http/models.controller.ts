import { Controller, Get, Inject } from '@nestjs/common';
import { ModelRegistry } from '../engines/model-registry.js';

const STARTED_AT = Math.floor(Date.now() / 1000);

/** `GET /v1/models` in OpenAI's list shape. */
@Controller('v1/models')
export class ModelsController {
  constructor(@Inject(ModelRegistry) private readonly registry: ModelRegistry) {}

  @Get()
  list() {
    return {
      object: 'list',
      data: this.registry.list().map((model) => ({
        id: model.config.name,
        object: 'model',
        created: STARTED_AT,
        owned_by: 'gantry',
      })),
    };
  }
}
