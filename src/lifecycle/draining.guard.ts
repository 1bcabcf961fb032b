import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { isMetricsPath, isProbePath, pathOf } from '../routing/probe-paths.js';
import { LifecycleService } from './lifecycle.service.js';

/**
 * While the gateway drains, refuses new requests with 503 in the client's protocol shape (the
 * exception filter renders it) and `Connection: close`, so clients move to another replica.
 * Probes and metrics keep answering: `/ready` reports the drain itself.
 */
@Injectable()
export class DrainingGuard implements CanActivate {
  constructor(@Inject(LifecycleService) private readonly lifecycle: LifecycleService) {}

  canActivate(context: ExecutionContext): boolean {
    if (!this.lifecycle.isDraining) return true;
    const http = context.switchToHttp();
    const path = pathOf(http.getRequest<FastifyRequest>().url);
    if (isProbePath(path) || isMetricsPath(path)) return true;
    void http.getResponse<FastifyReply>().header('connection', 'close');
    throw new GatewayError('unavailable', 'Gantry is shutting down; retry on another replica.', {
      code: 'shutting_down',
      retryAfterSeconds: 1,
    });
  }
}
