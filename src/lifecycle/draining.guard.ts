import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { isMetricsPath, isProbePath, pathOf } from '../routing/probe-paths.js';
import type { RequestGuard } from '../routing/request-guard.js';
import { LifecycleService } from './lifecycle.service.js';

/**
 * While the gateway drains, refuses new requests with 503 in the client's protocol shape (the
 * exception filter renders it) and `Connection: close`, so clients move to another replica.
 * Probes and metrics keep answering: `/ready` reports the drain itself.
 */
@Injectable()
export class DrainingGuard implements CanActivate, RequestGuard {
  constructor(@Inject(LifecycleService) private readonly lifecycle: LifecycleService) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    return this.check(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  check(request: FastifyRequest, reply: FastifyReply): boolean {
    if (!this.lifecycle.isDraining) return true;
    const path = pathOf(request.url);
    if (isProbePath(path) || isMetricsPath(path)) return true;
    void reply.header('connection', 'close');
    throw new GatewayError('unavailable', 'Gantry is shutting down; retry on another replica.', {
      code: 'shutting_down',
      retryAfterSeconds: 1,
    });
  }
}
