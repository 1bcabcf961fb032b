import {
  type ArgumentMetadata,
  type ArgumentsHost,
  Body,
  type CallHandler,
  type CanActivate,
  Catch,
  Controller,
  type ExecutionContext,
  HttpCode,
  Inject,
  Injectable,
  type NestInterceptor,
  type PipeTransform,
  Post,
  Res,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, Reflector } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type MonoTypeOperatorFunction, Observable, of, tap, throwError } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { ProtocolExceptionFilter } from '../errors/protocol-exception.filter.js';
import { RequestValidationPipe } from '../validation/request-validation.pipe.js';
import { DirectBody, DirectExchange, DirectPost, type HttpExchange } from './direct-route.decorator.js';
import { mountDirectRoutes } from './mount-direct-routes.js';

/**
 * The same enhancers and the same handler, served once by Nest's own router (an ordinary
 * controller) and once as a direct route (mountDirectRoutes): what runs, in which order, and what
 * the client gets must be the same. The known differences are asserted as such.
 */

/** What ran, in order: every enhancer and the handler append to it. */
let log: string[] = [];
/** What the global guard and the handler saw of the last request. */
let seen: { tag?: unknown; controller?: unknown; request?: FastifyRequest; reply?: unknown; handlerReply?: FastifyReply } = {};

const TAG = 'test:tag';

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

/** Global (APP_GUARD); `x-guard` picks its verdict: true (default), false, promise, promise-false, thenable-false, observable, throw. */
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

/** `x-inner`: `async` returns a Promise of its Observable, `throw` throws, `cached` answers without running the handler. */
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

/** A global pipe ahead of the validation pipe: logs each parameter's ArgumentMetadata. */
class RecordingPipe implements PipeTransform {
  transform(value: unknown, { type, metatype, data }: ArgumentMetadata): unknown {
    log.push(`pipe:${type}:${metatype?.name}:${String(data)}`);
    return value;
  }
}

@Catch()
class RecordingFilter extends ProtocolExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): true {
    log.push(`filter:${(exception as Error).message}`);
    if ((exception as Error).message === 'Filter breaks.') throw new Error('The filter itself failed.');
    return super.catch(exception, host);
  }
}

/** Emits `first` and the body's text after sending the reply; `text: "fail"` fails instead. */
function echo(body: EchoDto, reply: FastifyReply): Observable<string> {
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

@Controller('nest')
class NestRoute {
  @Post('route')
  @HttpCode(200)
  @SetMetadata(TAG, 'tagged')
  @UseGuards(MethodGuard)
  create(@Body() body: EchoDto, @Res() reply: FastifyReply): Observable<string> {
    return echo(body, reply);
  }
}

@Injectable()
class DirectRoute {
  @DirectPost('/direct/route')
  @SetMetadata(TAG, 'tagged')
  @UseGuards(MethodGuard)
  create(@DirectBody() body: EchoDto, @DirectExchange() { reply }: HttpExchange): Observable<string> {
    return echo(body, reply);
  }
}

interface Outcome {
  status: number;
  body: unknown;
  log: string[];
}

/** What a valid `{ text: 'hi' }` runs after the interceptors: the pipe, the handler, its values and completion, innermost first. */
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

/** Nest's pipes see a direct route's HttpExchange parameter too, as a custom parameter's value: the one difference in what runs. */
const REPLY_PIPED = 'pipe:custom:Object:undefined';

describe('a direct route, against the same handler on Nest’s router', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [NestRoute],
      providers: [
        DirectRoute,
        MethodGuard,
        { provide: APP_GUARD, useClass: GlobalGuard },
        { provide: APP_INTERCEPTOR, useClass: OuterInterceptor },
        { provide: APP_INTERCEPTOR, useClass: InnerInterceptor },
        { provide: APP_FILTER, useClass: RecordingFilter },
      ],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    app.useGlobalPipes(new RecordingPipe(), new RequestValidationPipe());
    mountDirectRoutes(app, [DirectRoute]);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(() => app.close());

  async function post(url: string, payload: unknown, headers: Record<string, string>): Promise<Outcome> {
    log = [];
    seen = {};
    const response = await app.inject({ method: 'POST', url, payload: payload as object, headers });
    return { status: response.statusCode, body: response.json(), log };
  }

  /** The request through both routes: the direct one's outcome (with the piped reply left out of its log), and Nest's. */
  async function both(payload: unknown, headers: Record<string, string> = {}): Promise<{ direct: Outcome; nest: Outcome }> {
    const direct = await post('/direct/route', payload, headers);
    const nest = await post('/nest/route', payload, headers);
    const piped = direct.log.filter((entry) => entry === REPLY_PIPED).length;
    const ranPipes = direct.log.some((entry) => entry.startsWith('pipe:body:'));
    expect(piped).toBe(ranPipes ? 1 : 0);
    return { direct: { ...direct, log: direct.log.filter((entry) => entry !== REPLY_PIPED) }, nest };
  }

  it('runs the guards, then the interceptors outermost first, then the pipes, then the handler; the interceptors see every value and the completion', async () => {
    const { direct, nest } = await both({ text: 'hi', extra: 1 });
    expect(direct).toEqual(nest);
    expect(direct).toEqual({ status: 200, body: { text: 'hi' }, log: ['guard:global', 'guard:method', 'outer', 'inner', ...HANDLED_HI] });
  });

  it('gives a validation failure to the interceptors as an error, and answers the filter’s 400', async () => {
    const { direct, nest } = await both({ text: 42 });
    expect(direct).toEqual(nest);
    expect(direct.status).toBe(400);
    expect(direct.body).toMatchObject({ error: { type: 'invalid_request_error', param: 'text' } });
    expect(direct.log.slice(0, 5)).toEqual(['guard:global', 'guard:method', 'outer', 'inner', 'pipe:body:EchoDto:undefined']);
    expect(direct.log.slice(5, 7)).toEqual([expect.stringMatching(/^inner:error:.*text/), expect.stringMatching(/^outer:error:.*text/)]);
    expect(direct.log.slice(7)).toEqual([expect.stringMatching(/^filter:.*text/)]);
  });

  it('gives an error from the handler’s observable to the interceptors, then to the filter', async () => {
    const { direct, nest } = await both({ text: 'fail' });
    expect(direct).toEqual(nest);
    expect(direct.status).toBe(503);
    expect(direct.body).toMatchObject({ error: { message: 'Engine down.' } });
    expect(direct.log.slice(-3)).toEqual(['inner:error:Engine down.', 'outer:error:Engine down.', 'filter:Engine down.']);
  });

  it('answers 403 when a guard returns false (or a Promise or thenable of false), running nothing after it', async () => {
    for (const verdict of ['false', 'promise-false', 'thenable-false']) {
      const { direct, nest } = await both({ text: 'hi' }, { 'x-guard': verdict });
      expect(direct).toEqual(nest);
      expect(direct.status).toBe(403);
      expect(direct.body).toMatchObject({ error: { message: 'Forbidden resource' } });
      expect(direct.log).toEqual(['guard:global', 'filter:Forbidden resource']);
    }
  });

  it('lets a request through on a Promise<true> or an Observable<true> guard', async () => {
    for (const verdict of ['promise', 'observable']) {
      const { direct, nest } = await both({ text: 'hi' }, { 'x-guard': verdict });
      expect(direct).toEqual(nest);
      expect(direct.status).toBe(200);
      expect(direct.log).toContain('handler:EchoDto:hi');
      expect(direct.log.at(-1)).toBe('outer:complete');
    }
  });

  it('answers the filter’s response when a guard throws', async () => {
    const { direct, nest } = await both({ text: 'hi' }, { 'x-guard': 'throw' });
    expect(direct).toEqual(nest);
    expect(direct).toEqual({ status: 401, body: expect.objectContaining({ error: expect.objectContaining({ message: 'No key.' }) }), log: ['guard:global', 'filter:No key.'] });
  });

  it('subscribes to the Observable an interceptor returns in a Promise', async () => {
    const { direct, nest } = await both({ text: 'hi' }, { 'x-inner': 'async' });
    expect(direct).toEqual(nest);
    expect(direct.body).toEqual({ text: 'hi' });
    expect(direct.log.slice(2)).toEqual(['outer', 'inner', 'inner:resolved', ...HANDLED_HI]);
  });

  it('gives an interceptor that throws to the outer interceptors as an error, then to the filter, after a sync or an async guard', async () => {
    for (const verdict of ['true', 'promise']) {
      const { direct, nest } = await both({ text: 'hi' }, { 'x-guard': verdict, 'x-inner': 'throw' });
      expect(direct).toEqual(nest);
      expect(direct.status).toBe(503);
      expect(direct.body).toMatchObject({ error: { message: 'Interceptor broke.' } });
      expect(direct.log).toEqual(['guard:global', 'guard:method', 'outer', 'inner', 'outer:error:Interceptor broke.', 'filter:Interceptor broke.']);
    }
  });

  it('runs the pipes and the handler only when the stream next.handle() returns is subscribed', async () => {
    const { direct, nest } = await both({ text: 'hi' }, { 'x-inner': 'cached' });
    expect(direct).toEqual(nest);
    expect(direct).toEqual({ status: 200, body: { text: 'cached' }, log: ['guard:global', 'guard:method', 'outer', 'inner', 'outer:next:cached', 'outer:complete'] });
  });

  it('answers a 500 in the protocol’s shape when an exception filter throws, and keeps serving', async () => {
    const { direct, nest } = await both({ text: 'break' });
    expect(direct).toEqual({ ...nest, log: nest.log.slice(0, -1) });
    expect(direct.status).toBe(500);
    expect(direct.body).toMatchObject({ error: { type: 'server_error', message: 'The gateway failed to serve this request.' } });
    // The one difference: Nest's router hands the filter's own failure to the filters once more
    // (through Fastify's error handler); the direct route answers that 500 itself.
    expect(nest.log.at(-1)).toBe('filter:The filter itself failed.');
    const after = await both({ text: 'hi' });
    expect([after.direct.status, after.nest.status]).toEqual([200, 200]);
  });

  it('gives the enhancers the route method (with its metadata), the class, and Fastify’s request and reply', async () => {
    for (const [url, controller] of [
      ['/direct/route', DirectRoute],
      ['/nest/route', NestRoute],
    ] as const) {
      await post(url, { text: 'hi' }, {});
      expect(seen.tag).toBe('tagged');
      expect(seen.controller).toBe(controller);
      expect(seen.reply).toBe(seen.handlerReply);
      expect(seen.request).toBe(seen.handlerReply?.request);
      expect(seen.request?.routeOptions.url).toBe(url);
      expect(seen.request?.body).toEqual({ text: 'hi' });
    }
  });
});
