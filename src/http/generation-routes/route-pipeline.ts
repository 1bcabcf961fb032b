import { type ArgumentMetadata, type CallHandler, type CanActivate, ForbiddenException, Logger, type NestInterceptor, type PipeTransform, type Type } from '@nestjs/common';
import type { ExceptionsHandler } from '@nestjs/core/exceptions/exceptions-handler.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { defer, from, isObservable, lastValueFrom, mergeAll, mergeMap, type Observable, type Observer, throwError } from 'rxjs';
import { GatewayError } from '../../errors/gateway-error.js';
import { dialectOf, renderError } from '../error-rendering.js';
import { GenerationContext } from './generation-context.js';

/** A generation handler: the validated body and the reply in, the engine events out. */
export type GenerationHandler = (body: unknown, reply: FastifyReply) => Observable<unknown>;

/** What Nest would run around one route's handler, resolved once at startup. */
export interface RouteEnhancers {
  guards: readonly CanActivate[];
  pipes: readonly PipeTransform[];
  interceptors: readonly NestInterceptor[];
  exceptions: ExceptionsHandler;
}

/**
 * Serves one generation route the way Nest's router serves a controller method, in the same
 * order (guards, interceptors, then pipes and the handler inside them, exception filters for what
 * fails before the response is written), without its per-request machinery: Nest 12 gives every
 * request an async frame, a ReplaySubject, three taps, a takeUntil on a disconnect watcher, two
 * mergeAll layers per interceptor and a lastValueFrom, and every event of a stream passes through
 * them. Here a request costs a context and a call object per interceptor, and an event only
 * what the interceptors themselves add. Hang-ups need nothing more: StreamResponder completes the
 * handler's stream when the response closes, which tears down the engine work behind it.
 */
export class RoutePipeline {
  private static readonly logger = new Logger('Gantry');
  private readonly bodyMetadata: ArgumentMetadata;

  constructor(
    private readonly controller: Type<unknown>,
    private readonly instance: object,
    private readonly handler: GenerationHandler,
    body: Type<unknown>,
    private readonly enhancers: RouteEnhancers,
  ) {
    this.bodyMetadata = { type: 'body', metatype: body, data: undefined };
  }

  /** The Fastify handler: answers through the reply, as a side effect. */
  serve(request: FastifyRequest, reply: FastifyReply): void {
    const context = new GenerationContext(request, reply, this.controller, this.handler);
    let verdict: boolean | Promise<boolean>;
    try {
      verdict = passGuards(this.enhancers.guards, context, 0);
    } catch (error) {
      return this.fail(error, context);
    }
    if (verdict === true) return this.run(context);
    if (verdict === false) return this.fail(new ForbiddenException('Forbidden resource'), context);
    verdict.then(
      (allowed) => (allowed ? this.run(context) : this.fail(new ForbiddenException('Forbidden resource'), context)),
      (error: unknown) => this.fail(error, context),
    );
  }

  /** The innermost `next.handle()`: the pipes on the body, then the handler. */
  invoke(context: GenerationContext): Observable<unknown> {
    const reply = context.getResponse<FastifyReply>();
    try {
      const body = this.transformBody(context.getRequest<FastifyRequest>().body, 0);
      if (isThenable(body)) return from(body).pipe(mergeMap((value) => this.handler.call(this.instance, value, reply)));
      return this.handler.call(this.instance, body, reply);
    } catch (error) {
      return throwError(() => error);
    }
  }

  /** To the exception filters; a filter that throws gets a 500 (or a cut connection), not a crashed process. */
  fail(error: unknown, context: GenerationContext): void {
    try {
      this.enhancers.exceptions.next(error as Error, context);
    } catch (failure) {
      const reply = context.getResponse<FastifyReply>();
      RoutePipeline.logger.error(`An exception filter failed on ${reply.request.method} ${reply.request.url.split('?')[0]}`, (failure as Error)?.stack);
      if (reply.sent || reply.raw.headersSent) {
        reply.raw.destroy();
        return;
      }
      const rendered = renderError(new GatewayError('internal', 'The gateway failed to serve this request.'), dialectOf(reply.request.url));
      void reply.status(rendered.status).headers(rendered.headers).send(rendered.body);
    }
  }

  private run(context: GenerationContext): void {
    const { interceptors } = this.enhancers;
    let next: CallHandler = new HandlerCall(this, context);
    for (let index = interceptors.length - 1; index >= 0; index -= 1) next = new InterceptedCall(interceptors[index], context, next);
    next.handle().subscribe(new RouteObserver(this, context));
  }

  private transformBody(value: unknown, from: number): unknown {
    const { pipes } = this.enhancers;
    for (let index = from; index < pipes.length; index += 1) {
      value = pipes[index].transform(value, this.bodyMetadata);
      if (isThenable(value)) return Promise.resolve(value).then((settled: unknown) => this.transformBody(settled, index + 1));
    }
    return value;
  }
}

/** Promises, and any other thenable (as Nest awaits them). */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** Runs the guards in order; synchronous while they are (no promise for an open gateway). */
function passGuards(guards: readonly CanActivate[], context: GenerationContext, from: number): boolean | Promise<boolean> {
  for (let index = from; index < guards.length; index += 1) {
    const verdict: unknown = guards[index].canActivate(context);
    if (isObservable(verdict) || isThenable(verdict)) {
      const settled = isObservable(verdict) ? lastValueFrom(verdict) : Promise.resolve(verdict);
      return settled.then((allowed) => (allowed ? passGuards(guards, context, index + 1) : false));
    }
    // As in Nest: any falsy verdict (a forgotten `return` included) refuses.
    if (!verdict) return false;
  }
  return true;
}

class HandlerCall implements CallHandler {
  constructor(
    private readonly pipeline: RoutePipeline,
    private readonly context: GenerationContext,
  ) {}

  /** Runs the pipes and the handler on subscription, as Nest does (an interceptor may retry, or not subscribe). */
  handle(): Observable<unknown> {
    return defer(() => this.pipeline.invoke(this.context));
  }
}

class InterceptedCall implements CallHandler {
  constructor(
    private readonly interceptor: NestInterceptor,
    private readonly context: GenerationContext,
    private readonly next: CallHandler,
  ) {}

  /**
   * Calls the interceptor on subscription, as Nest does; one that throws fails the observable
   * (as in Nest), for the outer ones and the filters to see.
   */
  handle(): Observable<unknown> {
    return defer(() => {
      const intercepted = this.interceptor.intercept(this.context, this.next);
      return isObservable(intercepted) ? intercepted : from(intercepted).pipe(mergeAll());
    });
  }
}

/** The end of the chain: the handler already wrote the response; what failed goes to the filters. */
class RouteObserver implements Observer<unknown> {
  constructor(
    private readonly pipeline: RoutePipeline,
    private readonly context: GenerationContext,
  ) {}

  next(): void {}

  error(error: unknown): void {
    this.pipeline.fail(error, this.context);
  }

  complete(): void {}
}
