import { Module, type Type } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { GenerationService } from '../generation/generation.service.js';
import { ChatCompletionsController } from './chat-completions.controller.js';
import { CountTokensController } from './count-tokens.controller.js';
import { HealthController } from './health.controller.js';
import { MessagesController } from './messages.controller.js';
import { ResponsesController } from './responses.controller.js';
import { ModelsController } from './models.controller.js';
import { ProtocolExceptionFilter } from './protocol-exception.filter.js';
import { ReadinessController } from './readiness.controller.js';
import { StreamResponder } from './stream-responder.js';

/** The three generation APIs: served by GenerationRouter (mountGenerationRoutes), below Nest's router. */
export const GENERATION_CONTROLLERS: readonly Type<unknown>[] = [ChatCompletionsController, ResponsesController, MessagesController];

/** The HTTP surface: one thin controller per API, the shared responder and the error filter. */
@Module({
  controllers: [CountTokensController, ModelsController, HealthController, ReadinessController],
  providers: [GenerationService, StreamResponder, ...GENERATION_CONTROLLERS, { provide: APP_FILTER, useClass: ProtocolExceptionFilter }],
})
export class HttpModule {}
