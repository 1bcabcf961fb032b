import { Injectable } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { GenerationInterceptor } from './generation-interceptor.js';

/**
 * The one global interceptor behind the built-in observability: it runs the hooks of the request
 * log, metrics and tracing interceptors (those switched on), which are plain providers, not
 * `APP_INTERCEPTOR`s. Three Nest interceptors cost each request three operator layers and each
 * event three hops; hosted, they cost one. What each records is unchanged.
 */
@Injectable()
export class ObservabilityInterceptor extends GenerationInterceptor {
  constructor(reflector: Reflector, hosted: readonly GenerationInterceptor[]) {
    super(reflector, hosted);
  }
}
