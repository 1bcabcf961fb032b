import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { DrainingGuard } from './draining.guard.js';
import { LifecycleService } from './lifecycle.service.js';

/** Shutdown state for every module (readiness, the responder's drain deadline) and the 503 guard. */
@Global()
@Module({
  providers: [LifecycleService, DrainingGuard, { provide: APP_GUARD, useExisting: DrainingGuard }],
  exports: [LifecycleService],
})
export class LifecycleModule {}
