import type { INestApplication } from '@nestjs/common';
import { LifecycleService } from './lifecycle.service.js';

/**
 * SIGTERM's answer: drain (stop accepting, let streams finish up to `shutdown.drainMs`, end the
 * rest with their protocol's error frame), then close the application (engines included).
 */
export async function shutdownGracefully(app: INestApplication): Promise<void> {
  await app.get(LifecycleService).drain(app.getHttpServer() as Parameters<LifecycleService['drain']>[0]);
  await app.close();
}

/** A second signal during a drain: end the streams still open now, without waiting. */
export function endStreamsNow(app: INestApplication): void {
  app.get(LifecycleService).endStreamsNow();
}
