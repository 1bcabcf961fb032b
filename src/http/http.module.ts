import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { GatewayConfig } from '../config/gateway-config.js';
import { GenerationService } from '../generation/generation.service.js';
import { ReasoningCipher } from '../protocols/openai-responses/reasoning-cipher.js';
import { ProtocolExceptionFilter } from './errors/protocol-exception.filter.js';
import { CountTokensController } from './routes/count-tokens.controller.js';
import { GenerationRoutes } from './routes/generation-routes.js';
import { PoolingRoutes } from './routes/pooling-routes.js';
import { HealthController } from './routes/health.controller.js';
import { InputTokensController } from './routes/input-tokens.controller.js';
import { ModelsController } from './routes/models.controller.js';
import { ReadinessController } from './routes/readiness.controller.js';
import { StoredResponsesController } from './routes/stored-responses.controller.js';
import { StreamResponder } from './streaming/stream-responder.js';

/**
 * The HTTP surface: the generation routes (mounted on Fastify by mountGenerationRoutes, see there
 * why), the other routes as Nest controllers, the shared responder and the error filter.
 */
@Module({
  controllers: [
    CountTokensController,
    InputTokensController,
    ModelsController,
    HealthController,
    ReadinessController,
    StoredResponsesController,
  ],
  providers: [
    GenerationService,
    // One per gateway: what a Responses answer seals, input_tokens and the next request open.
    {
      provide: ReasoningCipher,
      useFactory: (config: GatewayConfig) => ReasoningCipher.fromSecret(config.responses.encryptionKey),
      inject: [GatewayConfig],
    },
    StreamResponder,
    GenerationRoutes,
    PoolingRoutes,
    ProtocolExceptionFilter,
    { provide: APP_FILTER, useExisting: ProtocolExceptionFilter },
  ],
})
export class HttpModule {}
