import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayConfig } from '../config/gateway-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import { isMetricsPath, isProbePath, pathOf } from '../routing/probe-paths.js';
import type { RequestGuard } from '../routing/request-guard.js';
import { ApiKeyRing } from './api-key-ring.js';
import { Callers } from './callers.js';
import { KeyLimiter } from './key-limiter.js';

/**
 * Every route needs an accepted API key unless the gateway is open (no `auth.apiKeys`), or the
 * route is a probe or `/metrics` left open by `auth.protectHealth` / `auth.protectMetrics`.
 * The key comes as `Authorization: Bearer <key>` (OpenAI SDKs) or `x-api-key: <key>` (Anthropic
 * SDKs). Refusals are 401s in the client's protocol shape; the key is never logged or echoed.
 * The caller it identifies (the key's id and tenant) is remembered for the request's handler.
 *
 * Only a generation holds one of its tenant's `concurrentStreams` slots (the generation routes
 * call `check`), and reserves in its token budgets once its body is read (GenerationService). Nest's routes (`canActivate`:
 * models, token counts, stored responses) count in the rate only: a token count is not a stream,
 * and a client can always poll or cancel its run.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate, RequestGuard {
  constructor(
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
    @Inject(ApiKeyRing) private readonly ring: ApiKeyRing,
    @Inject(KeyLimiter) private readonly limiter: KeyLimiter,
    @Inject(Callers) private readonly callers: Callers,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const http = context.switchToHttp();
    return this.admit(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), false);
  }

  /** A generation's check (it holds a stream slot); synchronous unless a per-key limit has to ask its store. */
  check(request: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> {
    return this.admit(request, reply, true);
  }

  private admit(request: FastifyRequest, reply: FastifyReply, generation: boolean): boolean | Promise<boolean> {
    if (this.ring.isOpen) return true;
    const path = pathOf(request.url);
    if (isProbePath(path) && !this.config.auth.protectHealth) return true;
    if (isMetricsPath(path) && !this.config.auth.protectMetrics) return true;

    const presented = presentedKey(request.headers);
    if (presented === undefined) {
      throw new GatewayError(
        'authentication',
        'Missing API key: send it as `Authorization: Bearer <key>` or `x-api-key: <key>`.',
        {
          code: 'missing_api_key',
        },
      );
    }
    const caller = this.ring.callerOf(presented);
    if (caller === undefined) throw new GatewayError('authentication', 'Invalid API key.', { code: 'invalid_api_key' });
    this.callers.remember(request, caller);
    if (caller.tenant.limits === undefined) return true;
    return this.limiter.admit(caller, reply.raw, generation).then(() => true);
  }
}

/** The key a request presents: a Bearer token first, else `x-api-key`. */
export function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (bearer) return bearer[1];
  }
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim().length > 0) return apiKey.trim();
  return undefined;
}
