import { type ArgumentMetadata, type ArgumentsHost, type CallHandler, type CanActivate, Catch, type ExecutionContext, Inject, Injectable, type NestInterceptor, type PipeTransform, SetMetadata, UseGuards } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, Reflector } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type MonoTypeOperatorFunction, Observable, of, tap, throwError } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { ProtocolExceptionFilter } from '../protocol-exception.filter.js';
import { RequestValidationPipe } from '../validation/request-validation.pipe.js';
import { GenerationRoute } from './generation-route.decorator.js';
import { mountGenerationRoutes } from './generation-router.js';

/** What ran, in order: every enhancer and the handler append to it. */
const log: string[] = [];
/** What the global guard and the handler saw of the last request. */
let seen: { tag?: unknown; controller?: unknown; request?: FastifyRequest; reply?: unknown; handlerReply?: FastifyReply } = {};

const TAG = 'test:tag';

/** What follows the interceptors for a valid `{ text: 'hi' }`: the pipe, the handler, its values and completion, innermost first. */
const HANDLED_HI = [
  'pipe:body:EchoDto:undefined',
  'handler:EchoDto:hi',
  'inner:next:first',
  'outer:next:first',
  'inner:next:hi',
  'outer:next:hi',
  'inner:complete',
  'outer:complete',
];

function header(context: ExecutionContext, name: string): string | undefined {
  return context.switchToHttp().getRequest<FastifyRequest>().headers[name] as string | undefined;
}

/** Logs what passes through an interceptor: each value, and the completion or the error. */
function record(name: string): MonoTypeOperatorFunction<unknown> {
  return tap({
    next: (value) => log.push(`${name}:next:${String(value)}`),
    error: (error: Error) => log.push(`${name}:error:${error.message}`),
    complete: () => log.push(`${name}:complete`),
  });
}

class EchoDto {
  @IsString()
  text!: string;
}

/** Global (APP_GUARD); `x-guard` picks its verdict: true (default), false, promise, promise-false, observable, throw. */
@Injectable()
class GlobalGuard implements CanActivate {
  constructor(@Inject(Reflector) private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> | Observable<boolean> {
    log.push('guard:global');
    seen.tag = this.reflector.get(TAG, context.getHandler());
    seen.controller = context.getClass();
    seen.request = context.switchToHttp().getRequest<FastifyRequest>();
    seen.reply = context.switchToHttp().getResponse();
    switch (header(context, 'x-guard')) {
      case 'false':
        return false;
      case 'promise':
        return Promise.resolve(true);
      case 'promise-false':
        return Promise.resolve(false);
      case 'thenable-false':
        // Not a native Promise (another library's, another realm's): awaited all the same.
        return { then: (resolve: (allowed: boolean) => void) => resolve(false) } as unknown as Promise<boolean>;
      case 'observable':
        return of(true);
      case 'throw':
        throw new GatewayError('authentication', 'No key.');
      default:
        return true;
    }
  }
}

@Injectable()
class MethodGuard implements CanActivate {
  canActivate(): boolean {
    log.push('guard:method');
    return true;
  }
}

@Injectable()
class OuterInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    log.push('outer');
    return next.handle().pipe(record('outer'));
  }
}

/** Returns a Promise of its Observable when `x-inner: async` (calling `next.handle()` once it resolves); throws when `x-inner: throw`. */
@Injectable()
class InnerInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> | Promise<Observable<unknown>> {
    log.push('inner');
    if (header(context, 'x-inner') === 'throw') throw new GatewayError('unavailable', 'Interceptor broke.');
    if (header(context, 'x-inner') === 'cached') {
      // Asks for the handler's stream but answers from elsewhere: the handler must not run.
      next.handle();
      void context.switchToHttp().getResponse<FastifyReply>().send({ text: 'cached' });
      return of('cached');
    }
    if (header(context, 'x-inner') !== 'async') return next.handle().pipe(record('inner'));
    return Promise.resolve().then(() => {
      log.push('inner:resolved');
      return next.handle().pipe(record('inner'));
    });
  }
}

/** A global pipe ahead of the validation pipe: logs the body's ArgumentMetadata. */
class RecordingPipe implements PipeTransform {
  transform(value: unknown, { type, metatype, data }: ArgumentMetadata): unknown {
    log.push(`pipe:${type}:${metatype?.name}:${String(data)}`);
    return value;
  }
}

@Catch()
class RecordingFilter extends ProtocolExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    log.push(`filter:${(exception as Error).message}`);
    if ((exception as Error).message === 'Filter breaks.') throw new Error('The filter itself failed.');
    super.catch(exception, host);
  }
}

@Injectable()
class TestController {
  /** Emits `first` and the body's text after sending the reply; `text: "fail"` fails instead. */
  @GenerationRoute('/test/route', EchoDto)
  @SetMetadata(TAG, 'tagged')
  @UseGuards(MethodGuard)
  create(body: EchoDto, reply: FastifyReply): Observable<string> {
    log.push(`handler:${body.constructor.name}:${body.text}`);
    seen.handlerReply = reply;
    if (body.text === 'fail') return throwError(() => new GatewayError('unavailable', 'Engine down.'));
    if (body.text === 'break') return throwError(() => new GatewayError('unavailable', 'Filter breaks.'));
    return new Observable<string>((subscriber) => {
      subscriber.next('first');
      subscriber.next(body.text);
      void reply.send({ text: body.text });
      subscriber.complete();
    });
  }
}

describe('RoutePipeline', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      providers: [
        TestController,
        { provide: APP_GUARD, useClass: GlobalGuard },
        { provide: APP_INTERCEPTOR, useClass: OuterInterceptor },
        { provide: APP_INTERCEPTOR, useClass: InnerInterceptor },
        { provide: APP_FILTER, useClass: RecordingFilter },
      ],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    app.useGlobalPipes(new RecordingPipe(), new RequestValidationPipe());
    mountGenerationRoutes(app, [TestController]);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(() => app.close());

  beforeEach(() => {
    log.length = 0;
    seen = {};
  });

  const post = (payload: unknown, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url: '/test/route', payload: payload as object, headers });

  it('runs the guards, then the interceptors outermost first, then the pipes, then the handler; the interceptors see every value and the completion', async () => {
    const response = await post({ text: 'hi', extra: 1 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ text: 'hi' });
    expect(log).toEqual([
      'guard:global',
      'guard:method',
      'outer',
      'inner',
      ...HANDLED_HI,
    ]);
  });

  it('gives a validation failure to the interceptors as an error, and answers the filter’s 400', async () => {
    const response = await post({ text: 42 });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'text' } });
    expect(log.slice(0, 5)).toEqual(['guard:global', 'guard:method', 'outer', 'inner', 'pipe:body:EchoDto:undefined']);
    expect(log.slice(5, 7)).toEqual([expect.stringMatching(/^inner:error:.*text/), expect.stringMatching(/^outer:error:.*text/)]);
    expect(log.slice(7)).toEqual([expect.stringMatching(/^filter:.*text/)]);
  });

  it('gives an error from the handler’s observable to the interceptors, then to the filter', async () => {
    const response = await post({ text: 'fail' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ error: { message: 'Engine down.' } });
    expect(log.slice(-3)).toEqual(['inner:error:Engine down.', 'outer:error:Engine down.', 'filter:Engine down.']);
  });

  it('answers 403 when a guard returns false (or a Promise of false), running nothing after it', async () => {
    for (const verdict of ['false', 'promise-false', 'thenable-false']) {
      log.length = 0;
      const response = await post({ text: 'hi' }, { 'x-guard': verdict });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ error: { message: 'Forbidden resource' } });
      expect(log).toEqual(['guard:global', 'filter:Forbidden resource']);
    }
  });

  it('lets a request through on a Promise<true> or an Observable<true> guard', async () => {
    for (const verdict of ['promise', 'observable']) {
      log.length = 0;
      const response = await post({ text: 'hi' }, { 'x-guard': verdict });
      expect(response.statusCode).toBe(200);
      expect(log).toContain('handler:EchoDto:hi');
      expect(log.at(-1)).toBe('outer:complete');
    }
  });

  it('answers the filter’s response when a guard throws', async () => {
    const response = await post({ text: 'hi' }, { 'x-guard': 'throw' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error: { message: 'No key.' } });
    expect(log).toEqual(['guard:global', 'filter:No key.']);
  });

  it('subscribes to the Observable an interceptor returns in a Promise', async () => {
    const response = await post({ text: 'hi' }, { 'x-inner': 'async' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ text: 'hi' });
    expect(log.slice(2)).toEqual([
      'outer',
      'inner',
      'inner:resolved',
      ...HANDLED_HI,
    ]);
  });

  it('gives an interceptor that throws to the outer interceptors as an error, then to the filter, after a sync or an async guard', async () => {
    for (const verdict of ['true', 'promise']) {
      log.length = 0;
      const response = await post({ text: 'hi' }, { 'x-guard': verdict, 'x-inner': 'throw' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ error: { message: 'Interceptor broke.' } });
      expect(log).toEqual(['guard:global', 'guard:method', 'outer', 'inner', 'outer:error:Interceptor broke.', 'filter:Interceptor broke.']);
    }
  });

  it('runs the pipes and the handler only when the stream next.handle() returns is subscribed, as Nest does', async () => {
    const response = await post({ text: 'hi' }, { 'x-inner': 'cached' });
    expect(response.json()).toEqual({ text: 'cached' });
    expect(log).toEqual(['guard:global', 'guard:method', 'outer', 'inner', 'outer:next:cached', 'outer:complete']);
  });

  it('answers a 500 in the protocol shape when an exception filter throws, and keeps serving', async () => {
    const broken = await post({ text: 'break' });
    expect(broken.statusCode).toBe(500);
    expect(broken.json()).toMatchObject({ error: { type: 'server_error', message: 'The gateway failed to serve this request.' } });
    expect((await post({ text: 'hi' })).statusCode).toBe(200);
  });

  it('gives the enhancers the route method (with its metadata), the controller class, and Fastify’s request and reply', async () => {
    await post({ text: 'hi' });
    expect(seen.tag).toBe('tagged');
    expect(seen.controller).toBe(TestController);
    expect(seen.reply).toBe(seen.handlerReply);
    expect(seen.request).toBe(seen.handlerReply?.request);
    expect(seen.request?.routeOptions.url).toBe('/test/route');
    expect(seen.request?.body).toEqual({ text: 'hi' });
  });
});
