import { Injectable } from '@nestjs/common';
import { GenerationInterceptor } from './generation-interceptor.js';

/**
 * The one global interceptor behind the built-in observability: it runs the hooks of the request
 * log, metrics and tracing interceptors (those switched on), which are plain providers, not
 * `APP_INTERCEPTOR`s: each Nest interceptor is an operator layer per request and a hop per event,
 * so hosting them costs one of each, whatever is switched on.
 */
@Injectable()
export class ObservabilityInterceptor extends GenerationInterceptor {
  constructor(hosted: readonly GenerationInterceptor[]) {
    super(undefined, hosted);
  }
}
