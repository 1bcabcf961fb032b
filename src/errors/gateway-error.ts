/**
 * The one failure vocabulary of the gateway. Every protocol maps a kind to its own status code and
 * error type, so a failure raised anywhere (validation, admission, an engine) reads the same to an
 * OpenAI client and to an Anthropic client.
 */
export type FailureKind =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'overloaded'
  | 'unavailable'
  | 'upstream'
  | 'timeout'
  | 'internal';

export interface GatewayErrorOptions {
  /** The request field at fault, as a dotted path (`messages[0].content`). */
  param?: string;
  /** A stable machine-readable code (`model_not_found`, `queue_full`). */
  code?: string;
  /** Sent as `Retry-After` when the error is answered before the stream opens. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly param?: string;
  readonly code?: string;
  readonly retryAfterSeconds?: number;

  constructor(
    readonly kind: FailureKind,
    message: string,
    options: GatewayErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.param = options.param;
    this.code = options.code;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Anything thrown becomes a GatewayError; unknown failures are `internal` and keep their cause. */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError('internal', 'The gateway failed to serve this request.', { cause: error });
}
