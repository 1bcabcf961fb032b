import { Injectable } from '@nestjs/common';
import type { Caller } from './caller.js';
import { OPEN_TENANT } from './tenant.js';

/** The caller of every request on an open gateway. */
const OPEN_CALLER: Caller = { tenant: OPEN_TENANT, limitKey: 'open' };

/**
 * The caller the API-key guard identified for each request it let in, for the handlers that act
 * on it (model access, the fair queue, token charges). Held by the request object, so it goes
 * with the request.
 */
@Injectable()
export class Callers {
  private readonly byRequest = new WeakMap<object, Caller>();

  remember(request: object, caller: Caller): void {
    this.byRequest.set(request, caller);
  }

  /** The request's caller; the open gateway's (tenant `default`, every model) when no key identified one. */
  of(request: object): Caller {
    return this.byRequest.get(request) ?? OPEN_CALLER;
  }
}
