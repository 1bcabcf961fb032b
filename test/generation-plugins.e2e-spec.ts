import { Injectable, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../src/engine/engine-event.js';
import { LifecycleService } from '../src/lifecycle/lifecycle.service.js';
import { GenerationInterceptor, type GenerationOutcome, type ObservedRequest } from '../src/observability/generation-interceptor.js';
import type { GenerationTelemetry } from '../src/observability/generation-telemetry.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { hasProtocolErrorShape } from './support/protocol-errors.js';
import { postSse } from './support/sse-client.js';

/** Every hook the plugins ran, as `{plugin}:{hook}`, for the requests that carry `x-test-run`. */
let log: string[] = [];
/** The text deltas each plugin saw, by plugin. */
const texts = new Map<string, string>();

abstract class RecordingPlugin extends GenerationInterceptor {
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
    if (this.watched.has(telemetry) && event.type === 'text') texts.set(this.name, (texts.get(this.name) ?? '') + event.text);
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

/** Registered as older plugins are: an APP_INTERCEPTOR. */
@Injectable()
class AppInterceptorPlugin extends RecordingPlugin {
  protected readonly name = 'app';
}

@Module({ providers: [ProvidedPlugin, { provide: APP_INTERCEPTOR, useClass: AppInterceptorPlugin }] })
class RecordingPluginsModule {}

const KEY = 'plugin-test-key';
const WITH_KEY = { authorization: `Bearer ${KEY}`, 'x-test-run': '1' };

/** A valid body of each generation API, and one that fails its validation. */
const APIS = [
  { path: '/v1/chat/completions', valid: { model: 'stub', messages: [{ role: 'user', content: 'one two three' }] }, invalid: { model: 'stub', messages: 'none' } },
  { path: '/v1/responses', valid: { model: 'stub', input: 'one two three' }, invalid: { model: 'stub', input: 7 } },
  { path: '/v1/messages', valid: { model: 'stub', max_tokens: 16, messages: [{ role: 'user', content: 'one two three' }] }, invalid: { model: 'stub', max_tokens: 16, messages: 'none' } },
] as const;

/** What both plugins see of a request that ran to completion: they run as nested interceptors, `provided` outermost. */
function servedRun(events: string[]): string[] {
  const eventLines = events.flatMap((event) => [`app:event ${event}`, `provided:event ${event}`]);
  return ['provided:start', 'app:start', 'provided:accepted', 'app:accepted', 'provided:admitted', 'app:admitted', ...eventLines, 'app:end completed', 'provided:end completed'];
}

describe('generation routes: guards, validation and plugins’ GenerationInterceptors, through a real gateway', () => {
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway(
      { auth: { apiKeys: [KEY], limits: { concurrentStreams: 1 } }, models: [{ name: 'stub', engine: 'stub' }, { name: 'slow', engine: 'stub', prefillMs: 60_000 }] },
      { plugins: [RecordingPluginsModule] },
    );
  });
  afterAll(() => gateway?.close());
  beforeEach(() => {
    log = [];
    texts.clear();
  });

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

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
      expect(log).toEqual(['provided:start', 'app:start', 'app:end rejected', 'provided:end rejected']);
    }
  });

  it('shows the plugins every engine event of a stream, in every API, as the client got it', async () => {
    for (const { path, valid } of APIS) {
      log = [];
      texts.clear();
      const exchange = await postSse(`${gateway.url}${path}`, { ...valid, stream: true }, { headers: WITH_KEY });
      expect(exchange.status).toBe(200);
      const events = log.filter((entry) => entry.startsWith('provided:event ')).map((entry) => entry.slice('provided:event '.length));
      expect(events.filter((event) => event === 'text')).toHaveLength(3);
      expect(events.at(-1)).toBe('done');
      expect(log).toEqual(servedRun(events));
      expect(texts.get('provided')).toBe(texts.get('app'));
      expect(texts.get('provided')?.replace(/\s+/g, ' ').trim()).toBe('one two three');
    }
  });

  it('shows the plugins every event of a non-streaming request too', async () => {
    const response = await post(APIS[0].path, APIS[0].valid, WITH_KEY);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(response.status).toBe(200);
    const events = log.filter((entry) => entry.startsWith('app:event ')).map((entry) => entry.slice('app:event '.length));
    expect(log).toEqual(servedRun(events));
    expect(texts.get('app')).toBe(body.choices[0].message.content);
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
    expect(log).toEqual(['app:end client_closed', 'provided:end client_closed']);
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
