import { type CanActivate, type ExecutionContext, Injectable, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import OpenAI from 'openai';
import { of } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenerationHook, type ObservedRequest } from '../src/observability/generation-hook.js';
import type { GenerationTelemetry } from '../src/observability/generation-telemetry.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { captureLogs } from './support/log-capture.js';
import { scrape, valueOf } from './support/prometheus.js';
import { hasProtocolErrorShape } from './support/protocol-errors.js';

/**
 * A plugin's hook that throws in every method, for the requests that carry `x-throw` (marked in
 * `onStart`, which throws too): the others go through it untouched.
 */
@Injectable()
class ThrowingHook extends GenerationHook {
  private readonly marked = new WeakSet<GenerationTelemetry>();

  private fail(telemetry: GenerationTelemetry, where: string): void {
    if (this.marked.has(telemetry)) throw new Error(`plugin bug in ${where}`);
  }
  protected override onStart(telemetry: GenerationTelemetry, request: ObservedRequest): void {
    if (request.headers['x-throw'] !== undefined) this.marked.add(telemetry);
    this.fail(telemetry, 'onStart');
  }
  protected override onAccepted(telemetry: GenerationTelemetry): void {
    this.fail(telemetry, 'onAccepted');
  }
  protected override onAdmitted(telemetry: GenerationTelemetry): void {
    this.fail(telemetry, 'onAdmitted');
  }
  protected override onEvent(telemetry: GenerationTelemetry): void {
    this.fail(telemetry, 'onEvent');
  }
  protected override onEnd(telemetry: GenerationTelemetry): void {
    this.fail(telemetry, 'onEnd');
  }
}

@Module({ providers: [ThrowingHook] })
class ThrowingPluginModule {}

const logs = captureLogs();
const warningsOf = (pattern: RegExp) =>
  logs.lines.filter((line) => (line.level as number) >= 40 && pattern.test(String(line.msg)));

describe('plugins cannot hurt the gateway', () => {
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway(
      {
        models: [
          { name: 'stub', engine: 'stub' },
          { name: 'slow', engine: 'stub', tokenIntervalMs: 40 },
        ],
        observability: { logging: { level: 'warn' } },
      },
      { plugins: [ThrowingPluginModule], observability: { logDestination: logs.destination } },
    );
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  const streamText = async (model: string, prompt: string, headers: Record<string, string> = {}) => {
    const stream = await client.chat.completions.create(
      { model, stream: true, messages: [{ role: 'user', content: prompt }] },
      { headers },
    );
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    return { text: text.replace(/\s+/g, ' ').trim(), finish };
  };

  it('a hook that throws in every method: its request and a concurrent stream both finish, /health answers, each throw is counted and the hook is named once in the log', async () => {
    const words = 'a b c d e f g h i j k l';
    const concurrent = streamText('slow', words);
    // Started while the other stream runs: each of its events throws in the hook.
    const throwing = await streamText('stub', 'one two three', { 'x-throw': '1' });
    const json = await client.chat.completions.create(
      { model: 'stub', messages: [{ role: 'user', content: 'four five' }] },
      { headers: { 'x-throw': '1' } },
    );

    expect(throwing).toEqual({ text: 'one two three', finish: 'stop' });
    expect(json.choices[0].message.content?.trim()).toBe('four five');
    expect(await concurrent).toEqual({ text: words, finish: 'stop' });
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);

    const samples = await scrape(gateway.url);
    const count = (method: string) => valueOf(samples, 'gantry_hook_errors_total', { hook: 'ThrowingHook', method });
    for (const method of ['onStart', 'onAccepted', 'onAdmitted', 'onEnd']) expect(count(method)).toBe(2);
    // The stream's and the JSON answer's events: at least their text pieces and `done`s.
    expect(count('onEvent')).toBeGreaterThanOrEqual(7);
    const warnings = warningsOf(/GenerationHook ThrowingHook threw/);
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    // At most one per interval (10 s): far fewer than the throws.
    expect(warnings.length).toBeLessThan(count('onEvent'));
    expect(String(warnings[0].msg)).toMatch(/^The GenerationHook ThrowingHook threw in onStart \(Error: plugin bug/);
  });

  it('an error RxJS can deliver to no one (a subscriber that throws) is logged and counted, and the process goes on', async () => {
    of('value').subscribe({
      next: () => {
        throw new Error('a subscriber bug');
      },
    });
    expect(
      await eventually(async () => valueOf(await scrape(gateway.url), 'gantry_unhandled_stream_errors_total') === 1),
    ).toBe(true);
    expect(warningsOf(/a subscriber bug/).map((line) => line.msg)).toEqual([
      "A stream's subscriber threw and no one could take the error (Error: a subscriber bug); the process goes on, and gantry_unhandled_stream_errors_total counts each.",
    ]);
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  });
});

/** A plugin's guard that never decides when asked with `x-policy: hang` (a policy service that does not answer). */
@Injectable()
class HangingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    return request.headers['x-policy'] === 'hang' ? new Promise<boolean>(() => undefined) : true;
  }
}

@Module({ providers: [{ provide: APP_GUARD, useClass: HangingGuard }] })
class HangingGuardModule {}

const KEY = 'guard-test-key';
const APIS = [
  { path: '/v1/chat/completions', body: { model: 'stub', stream: true, messages: [{ role: 'user', content: 'hi' }] } },
  { path: '/v1/responses', body: { model: 'stub', stream: true, input: 'hi' } },
  {
    path: '/v1/messages',
    body: { model: 'stub', stream: true, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
  },
] as const;

describe('a guard has a deadline (server.guardTimeoutMs)', () => {
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway(
      {
        server: { guardTimeoutMs: 200 },
        auth: { apiKeys: [KEY], limits: { concurrentStreams: 1 } },
        models: [{ name: 'stub', engine: 'stub' }],
        observability: { logging: { level: 'warn' } },
      },
      { plugins: [HangingGuardModule], observability: { logDestination: logs.destination } },
    );
  });
  afterAll(() => gateway?.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
      body: JSON.stringify(body),
      // Fails the test rather than hanging it when no deadline answers.
      signal: AbortSignal.timeout(10_000),
    });

  it('refuses a request whose guard does not decide in time with 503 in the protocol’s shape, and gives its concurrentStreams slot back', async () => {
    for (const { path, body } of APIS) {
      const refused = await post(path, body, { 'x-policy': 'hang' });
      const error = await refused.json();
      expect(refused.status).toBe(503);
      expect(hasProtocolErrorShape(path, error)).toBe(true);
      expect(JSON.stringify(error)).toMatch(/a guard did not decide within 200 ms/);
      // The key's one stream slot came back: the next request is served.
      expect(
        await eventually(async () => {
          const served = await post(path, body);
          await served.text();
          return served.status === 200;
        }),
      ).toBe(true);
    }
    expect(warningsOf(/did not decide within 200 ms \(server\.guardTimeoutMs\)/).length).toBeGreaterThanOrEqual(1);
  });
});
