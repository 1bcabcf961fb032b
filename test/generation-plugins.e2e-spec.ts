import {
  type ArgumentsHost,
  type CallHandler,
  type CanActivate,
  Catch,
  type ExceptionFilter,
  type ExecutionContext,
  HttpException,
  Injectable,
  Module,
  type NestInterceptor,
  type PipeTransform,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { of, type Observable } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../src/engine/engine-event.js';
import { LifecycleService } from '../src/lifecycle/lifecycle.service.js';
import { GenerationHook, type GenerationOutcome, type ObservedRequest } from '../src/observability/generation-hook.js';
import type { GenerationTelemetry } from '../src/observability/generation-telemetry.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { captureLogs } from './support/log-capture.js';
import { hasProtocolErrorShape } from './support/protocol-errors.js';
import { postSse } from './support/sse-client.js';

/** Every hook the plugins ran, as `{plugin}:{hook}`, for the requests that carry `x-test-run`. */
let log: string[] = [];
/** The text deltas each plugin saw, by plugin. */
const texts = new Map<string, string>();

abstract class RecordingPlugin extends GenerationHook {
  private readonly watched = new WeakSet<GenerationTelemetry>();
  protected abstract readonly name: string;

  private record(telemetry: GenerationTelemetry, entry: string): void {
    if (this.watched.has(telemetry)) log.push(`${this.name}:${entry}`);
  }
  protected override onStart(telemetry: GenerationTelemetry, request: ObservedRequest): void {
    if (request.headers['x-test-run'] === undefined) return;
    this.watched.add(telemetry);
    this.record(telemetry, 'start');
  }
  protected override onAccepted(telemetry: GenerationTelemetry): void {
    this.record(telemetry, 'accepted');
  }
  protected override onAdmitted(telemetry: GenerationTelemetry): void {
    this.record(telemetry, 'admitted');
  }
  protected override onEvent(telemetry: GenerationTelemetry, event: EngineEvent): void {
    // Apart from the hooks' names: the engine's `accepted` event is not the gateway's onAccepted.
    this.record(telemetry, `event ${event.type}`);
    if (this.watched.has(telemetry) && event.type === 'text')
      texts.set(this.name, (texts.get(this.name) ?? '') + event.text);
  }
  protected override onEnd(telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    this.record(telemetry, `end ${outcome.kind}`);
  }
}

/** Registered the documented way: a plain provider of the plugin's module. */
@Injectable()
class ProvidedPlugin extends RecordingPlugin {
  protected readonly name = 'provided';
}

/** A second one, under a token of its own: found all the same. */
@Injectable()
class SecondPlugin extends RecordingPlugin {
  protected readonly name = 'second';
}

@Module({ providers: [ProvidedPlugin, { provide: 'second-hook', useClass: SecondPlugin }] })
class RecordingPluginsModule {}

/** What the policy guard saw: each request's path and body model, in order. */
let policed: string[] = [];

/**
 * A plugin's policy, registered the usual Nest way (an APP_GUARD): `x-policy` says what it answers.
 * It reads the request as any Nest guard does, through `switchToHttp()`.
 */
@Injectable()
class PolicyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean | Promise<boolean> | Observable<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    policed.push(`${request.url} ${(request.body as { model?: string } | undefined)?.model}`);
    switch (request.headers['x-policy']) {
      case 'refuse':
        return false;
      case 'refuse-later':
        return of(false);
      case 'legal':
        throw new HttpException('Not in this jurisdiction.', 451);
      default:
        return Promise.resolve(true);
    }
  }
}

@Module({ providers: [{ provide: APP_GUARD, useClass: PolicyGuard }] })
class PolicyPluginModule {}

@Injectable()
class UppercasePipe implements PipeTransform {
  transform(value: unknown): unknown {
    return value;
  }
}

/** Thrown by nothing: the filter is there to be named, and changes no answer of Nest's routes. */
class PluginOnlyError extends Error {}

@Catch(PluginOnlyError)
class PluginErrorFilter implements ExceptionFilter {
  catch(_exception: PluginOnlyError, _host: ArgumentsHost): void {}
}

@Injectable()
class TimingInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

@Module({
  providers: [
    { provide: APP_PIPE, useClass: UppercasePipe },
    { provide: APP_FILTER, useClass: PluginErrorFilter },
    { provide: APP_INTERCEPTOR, useClass: TimingInterceptor },
  ],
})
class EnhancersPluginModule {}

/** The gateway's log lines (warnings and worse). */
const logs = captureLogs();

const KEY = 'plugin-test-key';
const WITH_KEY = { authorization: `Bearer ${KEY}`, 'x-test-run': '1' };

/** A valid body of each generation API, and one that fails its validation. */
const APIS = [
  {
    path: '/v1/chat/completions',
    valid: { model: 'stub', messages: [{ role: 'user', content: 'one two three' }] },
    invalid: { model: 'stub', messages: 'none' },
  },
  { path: '/v1/responses', valid: { model: 'stub', input: 'one two three' }, invalid: { model: 'stub', input: 7 } },
  {
    path: '/v1/messages',
    valid: { model: 'stub', max_tokens: 16, messages: [{ role: 'user', content: 'one two three' }] },
    invalid: { model: 'stub', max_tokens: 16, messages: 'none' },
  },
] as const;

/** What both plugins see of a request that ran to completion: they run as nested interceptors, `provided` outermost. */
function servedRun(events: string[]): string[] {
  const eventLines = events.flatMap((event) => [`second:event ${event}`, `provided:event ${event}`]);
  return [
    'provided:start',
    'second:start',
    'provided:accepted',
    'second:accepted',
    'provided:admitted',
    'second:admitted',
    ...eventLines,
    'second:end completed',
    'provided:end completed',
  ];
}

describe('generation routes: guards (Gantry’s and a plugin’s APP_GUARD), validation and plugins’ GenerationHooks, through a real gateway', () => {
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway(
      {
        auth: { apiKeys: [KEY], limits: { concurrentStreams: 1 } },
        models: [
          { name: 'stub', engine: 'stub' },
          { name: 'slow', engine: 'stub', prefillMs: 60_000 },
        ],
        observability: { logging: { level: 'warn' } },
      },
      {
        plugins: [RecordingPluginsModule, PolicyPluginModule, EnhancersPluginModule],
        observability: { logDestination: logs.destination },
      },
    );
  });
  afterAll(() => gateway?.close());
  beforeEach(() => {
    log = [];
    policed = [];
    texts.clear();
  });

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('checks the key before the body: without one, even a bad body is a 401 in the protocol’s shape, and no plugin sees the request', async () => {
    for (const { path, invalid } of APIS) {
      const response = await post(path, invalid, { 'x-test-run': '1' });
      const body = await response.json();
      expect(response.status).toBe(401);
      expect(hasProtocolErrorShape(path, body)).toBe(true);
      expect(body).toMatchObject({ error: { type: 'authentication_error' } });
    }
    expect(log).toEqual([]);
  });

  it('gives a bad body to the plugins as a rejection and answers 400 in the protocol’s shape', async () => {
    for (const { path, invalid } of APIS) {
      log = [];
      const response = await post(path, invalid, WITH_KEY);
      const body = await response.json();
      expect(response.status).toBe(400);
      expect(hasProtocolErrorShape(path, body)).toBe(true);
      expect(body).toMatchObject({ error: { type: 'invalid_request_error' } });
      expect(log).toEqual(['provided:start', 'second:start', 'second:end rejected', 'provided:end rejected']);
    }
  });

  it('shows the plugins every engine event of a stream, in every API, as the client got it', async () => {
    for (const { path, valid } of APIS) {
      log = [];
      texts.clear();
      const exchange = await postSse(`${gateway.url}${path}`, { ...valid, stream: true }, { headers: WITH_KEY });
      expect(exchange.status).toBe(200);
      const events = log
        .filter((entry) => entry.startsWith('provided:event '))
        .map((entry) => entry.slice('provided:event '.length));
      expect(events.filter((event) => event === 'text')).toHaveLength(3);
      expect(events.at(-1)).toBe('done');
      expect(log).toEqual(servedRun(events));
      expect(texts.get('provided')).toBe(texts.get('second'));
      expect(texts.get('provided')?.replace(/\s+/g, ' ').trim()).toBe('one two three');
    }
  });

  it('shows the plugins every event of a non-streaming request too', async () => {
    const response = await post(APIS[0].path, APIS[0].valid, WITH_KEY);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(response.status).toBe(200);
    const events = log
      .filter((entry) => entry.startsWith('second:event '))
      .map((entry) => entry.slice('second:event '.length));
    expect(log).toEqual(servedRun(events));
    expect(texts.get('second')).toBe(body.choices[0].message.content);
  });

  it('answers a per-key limit that its store decides (the guard’s promise) in the protocol’s shape, and no plugin sees the refused request', async () => {
    // The key's one stream: held open (the model's prefill takes a minute) until this test hangs up.
    const holder = new AbortController();
    const held = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...WITH_KEY },
      body: JSON.stringify({ ...APIS[2].valid, model: 'slow', stream: true }),
      signal: holder.signal,
    });
    expect(held.status).toBe(200);
    await eventually(() => log.includes('provided:admitted'));
    log = [];
    for (const { path, valid } of APIS) {
      const response = await post(path, valid, WITH_KEY);
      const body = await response.json();
      expect(response.status).toBe(429);
      expect(hasProtocolErrorShape(path, body)).toBe(true);
    }
    expect(log).toEqual([]);
    holder.abort();
    await eventually(() => log.includes('provided:end client_closed'));
    expect(log).toEqual(['second:end client_closed', 'provided:end client_closed']);
  });

  it('runs a plugin’s APP_GUARD after the API-key check, reading the parsed request, and lets the request through when it says so', async () => {
    for (const { path, valid } of APIS) {
      expect((await post(path, valid, { 'x-policy': 'refuse' })).status).toBe(401);
      const served = await post(path, valid, WITH_KEY);
      expect(served.status).toBe(200);
    }
    expect(policed).toEqual(APIS.map(({ path }) => `${path} stub`));
    expect(log.filter((entry) => entry.endsWith('end completed'))).toHaveLength(APIS.length * 2);
  });

  it('answers a plugin guard’s refusal in each protocol’s shape: false (or an observable of false) is a 403, a thrown HttpException its own status; no hook sees it', async () => {
    for (const { path, valid } of APIS) {
      for (const [policy, status, message] of [
        ['refuse', 403, 'Forbidden resource'],
        ['refuse-later', 403, 'Forbidden resource'],
        ['legal', 451, 'Not in this jurisdiction.'],
      ] as const) {
        const response = await post(path, { ...valid, stream: true }, { ...WITH_KEY, 'x-policy': policy });
        const body = (await response.json()) as { error: { message: string; type: string } };
        expect(response.status).toBe(status);
        expect(hasProtocolErrorShape(path, body)).toBe(true);
        expect(body.error.message).toBe(message);
        if (status === 403) expect(body.error.type).toBe('permission_error');
      }
    }
    expect(policed).toHaveLength(APIS.length * 3);
    expect(log).toEqual([]);
  });

  it('runs the plugin’s guard on Nest’s own routes too, as any APP_GUARD', async () => {
    const refused = await fetch(`${gateway.url}/v1/models`, {
      headers: { authorization: `Bearer ${KEY}`, 'x-policy': 'refuse' },
    });
    expect(refused.status).toBe(403);
    expect((await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200);
  });

  it('names, in one warning at start, each Nest enhancer that cannot reach the generation routes (not a guard)', () => {
    expect(logs.lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
      "These Nest enhancers reach Nest's own routes only, not the generation routes (/v1/chat/completions, /v1/responses, /v1/messages, " +
        '/v1/completions, /v1/embeddings, /v1/rerank, /rerank, /v2/rerank, /v1/score): ' +
        'APP_PIPE UppercasePipe, APP_FILTER PluginErrorFilter, APP_INTERCEPTOR TimingInterceptor. ' +
        'Generation requests run APP_GUARD guards and GenerationHook providers (docs/extending.md, What Nest applies to the generation routes).',
    ]);
  });
  it('refuses every request with a 503 and `Connection: close` in the protocol’s shape while draining, before the key is checked, and no plugin sees it', async () => {
    gateway.app.get(LifecycleService).beginDrain();
    for (const { path, valid } of APIS) {
      const response = await post(path, valid, { 'x-test-run': '1' });
      const body = await response.json();
      expect(response.status).toBe(503);
      expect(response.headers.get('connection')).toBe('close');
      expect(hasProtocolErrorShape(path, body)).toBe(true);
      expect(body).toMatchObject({ error: { message: expect.stringMatching(/shutting down/) } });
    }
    expect(log).toEqual([]);
  });
});
