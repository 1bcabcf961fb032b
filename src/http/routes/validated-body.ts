import { GatewayError } from '../../errors/gateway-error.js';

/**
 * The body as the validation pipe left it: an instance of its DTO. Anything else means the pipe
 * did not see it as the body (a Nest upgrade renumbering parameter types, say): refused, not
 * served unvalidated.
 */
export function validated<Body>(body: unknown, dto: new () => Body): Body {
  if (body instanceof dto) return body;
  throw new GatewayError('internal', 'The request body was not validated; the gateway refuses to serve it.');
}
