import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A check every request passes before it is served, on the request and reply themselves. Gantry's
 * guards (draining, API keys) implement it; the generation routes call it directly, and each
 * guard's Nest `canActivate` makes the same check for the other routes (the API-key guard's
 * without a stream slot: only a generation holds one).
 *
 * `true` lets the request through and `false` refuses it (403); a refusal with its own status
 * throws it (a GatewayError). A promise only when the answer must wait (a store to ask).
 */
export interface RequestGuard {
  check(request: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean>;
}
