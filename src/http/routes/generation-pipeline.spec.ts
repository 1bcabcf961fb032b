import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { IsString } from 'class-validator';
import { Observable, throwError } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EngineEvent, ZERO_USAGE } from '../../engine/engine-event.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { GenerationHook, type GenerationOutcome, type ObservedRequest } from '../../observability/generation-hook.js';
import type { GenerationTelemetry } from '../../observability/generation-telemetry.js';
import type { RequestGuard } from '../../routing/request-guard.js';
import { ProtocolExceptionFilter } from '../errors/protocol-exception.filter.js';
import {
  type ErrorAnswer,
  type GenerationExchange,
  generationHandler,
  type GenerationPlugins,
  type GenerationRoute,
} from './generation-pipeline.js';

/** What ran, in order: guards, hooks, the handler and the error answer append to it. */
let log: string[] = [];
/** What the handler and the hooks were given, for identity checks. */
let seen: {
  observed?: string[];
  body?: unknown;
  exchange?: GenerationExchange;
  started?: { telemetry: GenerationTelemetry; request: ObservedRequest };
} = {};

class EchoDto {
  @IsString()
  text!: string;
}

/** `x-guard-{name}`: pass (default), false, promise, promise-false, thenable-false, throw, reject. */
function guard(name: string): RequestGuard {
  return {
    check(request: FastifyRequest): boolean | Promise<boolean> {
      log.push(`guard:${name}`);
      switch (request.headers[`x-guard-${name}`]) {
        case 'false':
          return false;
        case 'promise':
          return Promise.resolve(true);
        case 'promise-false':
          return Promise.resolve(false);
        case 'thenable-false':
          // A thenable that is not a Promise: the pipeline must await it like one.
          // oxlint-disable-next-line unicorn/no-thenable
          return { then: (resolve: (allowed: boolean) => void) => resolve(false) } as unknown as Promise<boolean>;
        case 'throw':
          throw new GatewayError('authentication', `Refused by ${name}.`);
        case 'reject':
          return Promise.reject(new GatewayError('rate_limited', `Limited by ${name}.`));
        default:
          return true;
      }
    },
  };
}

class RecordingHook extends GenerationHook {
  constructor(private readonly name: string) {
    super();
  }
  protected override onStart(telemetry: GenerationTelemetry, request: ObservedRequest): void {
    log.push(`${this.name}:start`);
    seen.started = { telemetry, request };
  }
  protected override onAccepted(): void {
    log.push(`${this.name}:accepted`);
  }
  protected override onEvent(telemetry: GenerationTelemetry, event: EngineEvent): void {
    log.push(`${this.name}:${event.type === 'text' ? `text:${event.text}` : event.type}`);
    (seen.observed ??= []).push(
      `${this.name}:${event.type}:${telemetry.outputEvents}:${telemetry.finishReason ?? '-'}`,
    );
  }
  protected override onEnd(_telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    const error =
      outcome.kind === 'failed' || outcome.kind === 'rejected' ? `:${(outcome.error as Error).message}` : '';
    log.push(`${this.name}:end:${outcome.kind}${error}`);
  }
}

/** The protocol filter, logging what it is given; `Filter breaks.` makes it throw. */
class RecordingErrors implements ErrorAnswer {
  private readonly filter = new ProtocolExceptionFilter();
  answer(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    log.push(`answer:${(error as Error).message}`);
    if ((error as Error).message === 'Filter breaks.') throw new Error('The filter itself failed.');
    this.filter.answer(error, request, reply);
  }
}

const DONE: EngineEvent = { type: 'done', finishReason: 'stop', usage: ZERO_USAGE };

/** `text` picks what the handler does: an answer (default), an early or late failure, a throw, a hang-up. */
function handle(body: EchoDto, exchange: GenerationExchange): Observable<EngineEvent> {
  log.push(`handler:${body.constructor.name}:${body.text}`);
  seen.body = body;
  seen.exchange = exchange;
  const { telemetry, reply } = exchange;
  if (body.text === 'throw') throw new GatewayError('invalid_request', 'The decoder refused it.');
  if (body.text === 'unknown model') return throwError(() => new GatewayError('not_found', 'No such model.'));
  if (body.text === 'break') return throwError(() => new GatewayError('unavailable', 'Filter breaks.'));
  return new Observable<EngineEvent>((subscriber) => {
    telemetry.markAccepted({ model: 'stub', engine: 'stub', stream: false });
    const text: EngineEvent = { type: 'text', text: body.text };
    subscriber.next(text);
    if (body.text === 'late failure') {
      subscriber.error(new GatewayError('unavailable', 'Engine down.'));
      return;
    }
    if (body.text === 'hang-up') {
      subscriber.complete();
      return;
    }
    subscriber.next(DONE);
    void reply.send({ text: body.text });
    subscriber.complete();
  });
}

const ROUTES: GenerationRoute[] = [
  { protocol: { api: 'chat', path: '/v1/chat/completions' }, body: EchoDto, handle } as unknown as GenerationRoute,
  { protocol: { api: 'messages', path: '/v1/messages' }, body: EchoDto, handle } as unknown as GenerationRoute,
];

/** Hooks that ran for a valid `{ text: 'hi' }` once the guards let it in, outer hook first. */
const SERVED_HI = [
  'outer:start',
  'inner:start',
  'handler:EchoDto:hi',
  'outer:accepted',
  'inner:accepted',
  'inner:text:hi',
  'outer:text:hi',
  'inner:done',
  'outer:done',
  'inner:end:completed',
  'outer:end:completed',
];

describe('the generation pipeline (generationHandler)', () => {
  let fastify: FastifyInstance;

  beforeAll(async () => {
    // The broken answer is logged as an error; the test checks what the client gets.
    Logger.overrideLogger(false);
    fastify = Fastify();
    const plugins: GenerationPlugins = {
      guards: [guard('first'), guard('second')],
      hooks: GenerationHook.chain([new RecordingHook('outer'), new RecordingHook('inner')]),
      errors: new RecordingErrors(),
    };
    for (const route of ROUTES) fastify.post(route.protocol.path, generationHandler(route, plugins));
    await fastify.ready();
  });
  afterAll(() => fastify.close());
  beforeEach(() => {
    log = [];
    seen = {};
  });

  async function post(payload: unknown, headers: Record<string, string> = {}, url = '/v1/chat/completions') {
    const response = await fastify.inject({ method: 'POST', url, payload: payload as object, headers });
    return { status: response.statusCode, body: response.json() as Record<string, any>, headers: response.headers };
  }

  it('runs the guards in order, then the hooks, then validation and the handler; the hooks see every event and the end, innermost first', async () => {
    const outcome = await post({ text: 'hi', extra: 1 });
    expect(outcome).toMatchObject({ status: 200, body: { text: 'hi' } });
    expect(log).toEqual(['guard:first', 'guard:second', ...SERVED_HI]);
  });

  it('folds each event into the telemetry before the hooks see it: the one place events are observed', async () => {
    expect((await post({ text: 'hi' })).status).toBe(200);
    // Output and finish counted once each, whatever the number of hooks.
    expect(seen.observed).toEqual(['inner:text:1:-', 'outer:text:1:-', 'inner:done:1:stop', 'outer:done:1:stop']);
  });

  it('hands the handler the DTO instance, without unknown fields, and the telemetry and request the hooks got', async () => {
    await post({ text: 'hi', extra: 1 });
    expect(seen.body).toBeInstanceOf(EchoDto);
    expect(seen.body).toEqual(Object.assign(new EchoDto(), { text: 'hi' }));
    expect(seen.exchange?.telemetry).toBe(seen.started?.telemetry);
    expect(seen.exchange?.request).toBe(seen.started?.request);
    expect(seen.exchange?.telemetry.api).toBe('chat');
    // The hooks read the body as the client sent it.
    expect(seen.started?.request.body).toEqual({ text: 'hi', extra: 1 });
  });

  it('validates only what the guards let in: a refused request with a bad body gets the guard’s refusal, and no hook sees it', async () => {
    const outcome = await post({ text: 42 }, { 'x-guard-first': 'throw' });
    expect(outcome.status).toBe(401);
    expect(outcome.body).toEqual({
      error: { type: 'authentication_error', message: 'Refused by first.', param: null, code: null },
    });
    expect(log).toEqual(['guard:first', 'answer:Refused by first.']);
  });

  it('gives a validation failure to the hooks as a rejection, then answers 400 in the protocol’s shape', async () => {
    const chat = await post({ text: 42 });
    expect(chat.status).toBe(400);
    expect(chat.body).toMatchObject({ error: { type: 'invalid_request_error', param: 'text' } });
    expect(log).toEqual([
      'guard:first',
      'guard:second',
      'outer:start',
      'inner:start',
      expect.stringMatching(/^inner:end:rejected:.*text/),
      expect.stringMatching(/^outer:end:rejected:.*text/),
      expect.stringMatching(/^answer:.*text/),
    ]);
    const messages = await post({ text: 42 }, {}, '/v1/messages');
    expect(messages.status).toBe(400);
    expect(messages.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('answers 403 in the protocol’s shape when a guard says false (or a promise or thenable of false), running nothing after it', async () => {
    for (const verdict of ['false', 'promise-false', 'thenable-false']) {
      log = [];
      const chat = await post({ text: 'hi' }, { 'x-guard-first': verdict });
      expect(chat).toMatchObject({
        status: 403,
        body: { error: { type: 'permission_error', message: 'Forbidden resource' } },
      });
      expect(log).toEqual(['guard:first', 'answer:Forbidden resource']);
      const messages = await post({ text: 'hi' }, { 'x-guard-second': verdict }, '/v1/messages');
      expect(messages).toMatchObject({
        status: 403,
        body: { type: 'error', error: { type: 'permission_error', message: 'Forbidden resource' } },
      });
    }
  });

  it('waits for a guard’s promise before the next guard, and answers a rejected one', async () => {
    const served = await post({ text: 'hi' }, { 'x-guard-first': 'promise' });
    expect(served.status).toBe(200);
    expect(log).toEqual(['guard:first', 'guard:second', ...SERVED_HI]);
    log = [];
    const limited = await post(
      { text: 'hi' },
      { 'x-guard-first': 'promise', 'x-guard-second': 'reject' },
      '/v1/messages',
    );
    expect(limited).toMatchObject({
      status: 429,
      body: { type: 'error', error: { type: 'rate_limit_error', message: 'Limited by second.' } },
    });
    expect(log).toEqual(['guard:first', 'guard:second', 'answer:Limited by second.']);
  });

  it('gives a handler that throws, or fails before acceptance, to the hooks as a rejection, then to the answer', async () => {
    const thrown = await post({ text: 'throw' });
    expect(thrown).toMatchObject({ status: 400, body: { error: { message: 'The decoder refused it.' } } });
    expect(log.slice(-3)).toEqual([
      'inner:end:rejected:The decoder refused it.',
      'outer:end:rejected:The decoder refused it.',
      'answer:The decoder refused it.',
    ]);
    log = [];
    const unknown = await post({ text: 'unknown model' }, {}, '/v1/messages');
    expect(unknown).toMatchObject({ status: 404, body: { type: 'error', error: { type: 'not_found_error' } } });
    expect(log.slice(-3)).toEqual([
      'inner:end:rejected:No such model.',
      'outer:end:rejected:No such model.',
      'answer:No such model.',
    ]);
  });

  it('ends a request that fails after acceptance as failed, and one that completes without finishing as client_closed', async () => {
    const failed = await post({ text: 'late failure' });
    expect(failed).toMatchObject({ status: 503, body: { error: { message: 'Engine down.' } } });
    expect(log.slice(-4)).toEqual([
      'outer:text:late failure',
      'inner:end:failed:Engine down.',
      'outer:end:failed:Engine down.',
      'answer:Engine down.',
    ]);
    log = [];
    // Nothing answers it: the handler's stream completed as a responder's does when the client leaves.
    void fastify.inject({ method: 'POST', url: '/v1/chat/completions', payload: { text: 'hang-up' } });
    await expect.poll(() => log.at(-1)).toBe('outer:end:client_closed');
    expect(log.slice(-2)).toEqual(['inner:end:client_closed', 'outer:end:client_closed']);
  });

  it('answers a 500 in the protocol’s shape when the error answer itself throws, and keeps serving', async () => {
    for (const url of ['/v1/chat/completions', '/v1/messages']) {
      const broken = await post({ text: 'break' }, {}, url);
      expect(broken.status).toBe(500);
      const error = {
        type: url === '/v1/messages' ? 'api_error' : 'server_error',
        message: 'The gateway failed to serve this request.',
      };
      expect(broken.body).toMatchObject(url === '/v1/messages' ? { type: 'error', error } : { error });
    }
    expect((await post({ text: 'hi' })).status).toBe(200);
  });
});
