import { GatewayError, type GatewayErrorOptions } from '../errors/gateway-error.js';

/** The kinds an engine may fail with; each encoder turns them into its protocol's error. */
export type EngineErrorKind =
  | 'overloaded'
  | 'invalid_request'
  | 'upstream'
  | 'internal'
  | 'timeout'
  /** Nothing can serve the model right now (every upstream replica down). */
  | 'unavailable';

/** A typed failure travelling as the RxJS error of an engine's event stream. */
export class EngineError extends GatewayError {
  constructor(kind: EngineErrorKind, message: string, options: GatewayErrorOptions = {}) {
    super(kind, message, options);
    this.name = 'EngineError';
  }
}
