import type { CanActivate, ExecutionContext, Type } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isObservable, lastValueFrom } from 'rxjs';
import type { RequestGuard } from '../../routing/request-guard.js';

// The argument hosts' own names are not exported by @nestjs/common; the context's methods say them.
type HttpArgumentsHost = ReturnType<ExecutionContext['switchToHttp']>;
type RpcArgumentsHost = ReturnType<ExecutionContext['switchToRpc']>;
type WsArgumentsHost = ReturnType<ExecutionContext['switchToWs']>;

/**
 * A Nest guard (`CanActivate`, a plugin's `APP_GUARD`) run by the generation pipeline after
 * Gantry's own guards, as Nest runs it on its routes: `true` lets the request through, `false` (or
 * an observable that ends without a value) refuses it with 403, a throw refuses it with its own
 * status (an `HttpException`'s).
 */
export class NestGuardCheck implements RequestGuard {
  constructor(
    private readonly guard: CanActivate,
    private readonly routeClass: Type,
    private readonly handler: (...args: never[]) => unknown,
  ) {}

  check(request: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> {
    const verdict = this.guard.canActivate(new GenerationRouteContext(request, reply, this.routeClass, this.handler));
    return isObservable(verdict) ? lastValueFrom(verdict, { defaultValue: false }) : verdict;
  }
}

/**
 * The ExecutionContext of a generation request, as a guard reads it on Nest's routes: an `http`
 * context whose request and response are Fastify's (the request's body parsed, not yet
 * validated). `getClass` is the generation routes' class, `getHandler` the route's API's handler
 * (named after it: `chat`, `embeddings`), both carrying the metadata plugins give them with
 * `@GenerationRouteMetadata`, so that a guard reads it with Nest's `Reflector` as on a controller.
 */
class GenerationRouteContext implements ExecutionContext, HttpArgumentsHost {
  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly routeClass: Type,
    private readonly handler: (...args: never[]) => unknown,
  ) {}

  getClass<T>(): Type<T> {
    return this.routeClass as Type<T>;
  }

  getHandler(): (...args: never[]) => unknown {
    return this.handler;
  }

  getArgs<T extends unknown[]>(): T {
    return [this.request, this.reply, undefined] as T;
  }

  getArgByIndex<T>(index: number): T {
    return this.getArgs()[index] as T;
  }

  getType<TContext extends string>(): TContext {
    return 'http' as TContext;
  }

  switchToHttp(): HttpArgumentsHost {
    return this;
  }

  getRequest<T>(): T {
    return this.request as T;
  }

  getResponse<T>(): T {
    return this.reply as T;
  }

  getNext<T>(): T {
    return undefined as T;
  }

  // Read as Nest reads any context: its first two arguments.
  switchToRpc(): RpcArgumentsHost {
    return { getData: <T>() => this.request as T, getContext: <T>() => this.reply as T };
  }

  switchToWs(): WsArgumentsHost {
    return { getData: <T>() => this.request as T, getClient: <T>() => this.reply as T, getPattern: () => '' };
  }
}
