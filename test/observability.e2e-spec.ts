import OpenAI from 'openai';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GenerationRequest } from '../src/engine/generation-request.js';
import type { StubEngine } from '../src/engines/stub/stub-engine.js';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { scrape, valueOf } from './support/prometheus.js';
import { postSse } from './support/sse-client.js';

const ask = (text: string) => [{ role: 'user' as const, content: text }];

describe('GET /metrics after a scripted mix of requests', () => {
  let gateway: RunningGateway;
  let samples: Awaited<ReturnType<typeof scrape>>;
  let pingsSeen = 0;
  let slowContentChunks = 0;
  const queueFullStatuses: number[] = [];

  beforeAll(async () => {
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 100 },
      models: [
        { name: 'stub', engine: 'stub' },
        { name: 'slow', engine: 'stub', prefillMs: 600, tokenIntervalMs: 20 },
        { name: 'flaky', engine: 'stub', failAfterTokens: 1 },
        { name: 'single', engine: 'stub', prefillMs: 400, maxConcurrency: 1 },
        { name: 'full', engine: 'stub', prefillMs: 400, maxConcurrency: 1, maxQueue: 0 },
      ],
    });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    // Two successes: 3 + 3 prompt words, 3 + 3 completion tokens.
    await client.chat.completions.create({ model: 'stub', messages: ask('a b c') });
    await client.chat.completions.create({ model: 'stub', messages: ask('d e f') });
    // A streamed Messages answer after a 600 ms prefill: its pings are counted on both sides.
    const messages = await postSse(`${gateway.url}/v1/messages`, {
      model: 'slow',
      max_tokens: 50,
      stream: true,
      messages: ask('w x y z'),
    });
    pingsSeen = messages.frames.filter((frame) => frame.kind === 'event' && frame.event === 'ping').length;
    slowContentChunks = messages.frames.filter(
      (frame) => frame.kind === 'event' && frame.data.includes('text_delta'),
    ).length;
    // A hang-up during prefill.
    await postSse(
      `${gateway.url}/v1/chat/completions`,
      { model: 'slow', stream: true, messages: ask('bye') },
      { onFrame: (_frame, frames) => frames.length >= 2 },
    );
    // An engine failure after the stream opened.
    await postSse(`${gateway.url}/v1/responses`, { model: 'flaky', stream: true, input: 'p q r' });
    // Two requests on a one-slot model: the second waits for the first.
    await Promise.all([
      client.chat.completions.create({ model: 'single', messages: ask('first') }),
      client.chat.completions.create({ model: 'single', messages: ask('second') }),
    ]);
    // One request holds the only slot of a model without a queue: two more are refused as queue_full.
    const holder = client.chat.completions.create({ model: 'full', messages: ask('holder') });
    await eventually(() => gateway.registry.resolve('full').admission.running === 1);
    queueFullStatuses.push(
      (await postSse(`${gateway.url}/v1/chat/completions`, { model: 'full', stream: true, messages: ask('x') })).status,
    );
    queueFullStatuses.push(
      (await postSse(`${gateway.url}/v1/messages`, { model: 'full', max_tokens: 8, messages: ask('x') })).status,
    );
    await holder;
    // A request refused before its stream opened.
    await client.chat.completions.create({ model: 'missing', messages: ask('x') }).catch(() => undefined);
    await eventually(() => gateway.registry.list().every((model) => model.admission.running === 0));
    samples = await scrape(gateway.url);
  });
  afterAll(() => gateway?.close());

  const value = (name: string, labels: Record<string, string> = {}) => valueOf(samples, name, labels);

  it('counts requests by outcome and status', () => {
    expect(value('gantry_requests_total', { model: 'stub', api: 'chat', outcome: 'completed', status: '200' })).toBe(2);
    expect(
      value('gantry_requests_total', { model: 'slow', api: 'messages', outcome: 'completed', status: '200' }),
    ).toBe(1);
    expect(
      value('gantry_requests_total', { model: 'slow', api: 'chat', outcome: 'client_closed', status: '499' }),
    ).toBe(1);
    expect(value('gantry_requests_total', { model: 'flaky', api: 'responses', outcome: 'failed', status: '200' })).toBe(
      1,
    );
    expect(value('gantry_requests_total', { model: 'single', outcome: 'completed' })).toBe(2);
    expect(value('gantry_requests_total', { outcome: 'rejected', status: '404' })).toBe(1);
  });

  it("counts a request refused by its model's full queue under its model, API and engine", () => {
    expect(queueFullStatuses).toEqual([429, 529]);
    expect(
      value('gantry_requests_total', {
        model: 'full',
        api: 'chat',
        engine: 'stub',
        outcome: 'rejected',
        status: '429',
      }),
    ).toBe(1);
    expect(
      value('gantry_requests_total', {
        model: 'full',
        api: 'messages',
        engine: 'stub',
        outcome: 'rejected',
        status: '529',
      }),
    ).toBe(1);
    expect(value('gantry_requests_total', { model: '', outcome: 'rejected', status: '429' })).toBe(0);
    expect(value('gantry_requests_total', { model: 'full', api: 'chat', engine: 'stub', outcome: 'completed' })).toBe(
      1,
    );
  });

  it('counts tokens, hang-ups by phase and engine errors by kind', () => {
    expect(value('gantry_prompt_tokens_total', { model: 'stub', api: 'chat' })).toBe(6);
    expect(value('gantry_completion_tokens_total', { model: 'stub', api: 'chat' })).toBe(6);
    expect(value('gantry_completion_tokens_total', { model: 'slow', api: 'messages' })).toBe(4);
    expect(value('gantry_client_hangups_total', { model: 'slow', api: 'chat', phase: 'prefill' })).toBe(1);
    expect(value('gantry_engine_errors_total', { model: 'flaky', api: 'responses', kind: 'internal' })).toBe(1);
  });

  it('counts exactly the heartbeats the client received, by API', () => {
    expect(pingsSeen).toBeGreaterThanOrEqual(4);
    expect(value('gantry_heartbeats_total', { model: 'slow', api: 'messages' })).toBe(pingsSeen);
    expect(value('gantry_heartbeats_total', { model: 'slow', api: 'chat' })).toBeGreaterThanOrEqual(1);
  });

  it('observes time to first token from arrival, inter-token gaps and durations', () => {
    expect(value('gantry_time_to_first_token_seconds_count', { model: 'stub', api: 'chat' })).toBe(2);
    expect(value('gantry_time_to_first_token_seconds_count', { model: 'slow', api: 'messages' })).toBe(1);
    expect(value('gantry_time_to_first_token_seconds_sum', { model: 'slow', api: 'messages' })).toBeGreaterThanOrEqual(
      0.6,
    );
    expect(value('gantry_inter_token_latency_seconds_count', { model: 'slow', api: 'messages' })).toBe(
      slowContentChunks - 1,
    );
    // The two stub answers were read whole (not streamed): their gaps are nobody's latency.
    expect(value('gantry_inter_token_latency_seconds_count', { model: 'stub', api: 'chat' })).toBe(0);
    expect(value('gantry_request_duration_seconds_count', { model: 'stub', api: 'chat' })).toBe(2);
  });

  it('observes the queue time of the request that waited', () => {
    expect(value('gantry_queue_time_seconds_count', { model: 'single' })).toBe(2);
    expect(value('gantry_queue_time_seconds_sum', { model: 'single' })).toBeGreaterThanOrEqual(0.35);
    expect(value('gantry_queue_time_seconds_bucket', { model: 'single', le: '0.1' })).toBe(1);
  });

  it('reports gauges back at zero once everything ended, and the process metrics', () => {
    expect(
      samples.filter((sample) => sample.name === 'gantry_active_requests').every((sample) => sample.value === 0),
    ).toBe(true);
    expect(value('gantry_queued_requests', { model: 'single' })).toBe(0);
    expect(value('gantry_running_requests', { model: 'single' })).toBe(0);
    expect(samples.some((sample) => sample.name === 'gantry_process_cpu_user_seconds_total')).toBe(true);
  });
});

describe('tracing with an in-memory span exporter', () => {
  const exporter = new InMemorySpanExporter();
  let gateway: RunningGateway;
  let upstream: MockUpstream;

  beforeAll(async () => {
    upstream = await startMockUpstream();
    gateway = await startGateway(
      {
        keepalive: { mode: 'chunks', intervalMs: 100 },
        models: [
          { name: 'slow', engine: 'stub', prefillMs: 300, tokenIntervalMs: 10 },
          { name: 'remote', engine: 'http', upstreams: [upstream.url], healthCheckIntervalMs: 0 },
        ],
      },
      { observability: { spanExporter: exporter } },
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('propagates the W3C traceparent to the HTTP upstream, continuing the caller trace', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await postSse(
      `${gateway.url}/v1/chat/completions`,
      { model: 'remote', stream: true, messages: ask('traced words') },
      { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } },
    );
    const received = upstream.state.received.find((request) => request.path.endsWith('/chat/completions'));
    const traceparent = String(received?.headers.traceparent);
    expect(traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    await eventually(() => exporter.getFinishedSpans().some((span) => span.name === 'chat remote'));
    const root = exporter.getFinishedSpans().find((span) => span.name === 'chat remote')!;
    expect(traceparent.split('-')[2]).toBe(root.spanContext().spanId);
  });

  it('records one span per request with GenAI attributes, a first-token event and child spans, under the caller trace', async () => {
    const engine = gateway.registry.resolve('slow').engine as StubEngine;
    const seen: GenerationRequest[] = [];
    const generate = engine.generate.bind(engine);
    vi.spyOn(engine, 'generate').mockImplementation((request) => {
      seen.push(request);
      return generate(request);
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    await postSse(
      `${gateway.url}/v1/chat/completions`,
      { model: 'slow', stream: true, max_tokens: 10, messages: ask('alpha beta gamma') },
      { headers: { traceparent: `00-${traceId}-${callerSpan}-01` } },
    );
    await eventually(() => exporter.getFinishedSpans().some((span) => span.name === 'chat slow'));
    const spans = exporter.getFinishedSpans();
    const root = spans.find((span) => span.name === 'chat slow')!;
    expect(root.spanContext().traceId).toBe(traceId);
    expect(root.parentSpanContext?.spanId).toBe(callerSpan);
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'slow',
      'gen_ai.request.max_tokens': 10,
      'gen_ai.usage.input_tokens': 3,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    const firstToken = root.events.find((event) => event.name === 'gen_ai.first_token');
    expect(firstToken?.attributes?.['gantry.time_to_first_token_ms']).toBeGreaterThanOrEqual(290);

    const children = spans
      .filter((span) => span.parentSpanContext?.spanId === root.spanContext().spanId)
      .map((span) => span.name);
    expect(children.sort()).toEqual(['gantry.engine stub', 'gantry.queue']);
    // The engine is handed the trace context to forward upstream.
    expect(seen[0].traceHeaders?.traceparent).toBe(`00-${traceId}-${root.spanContext().spanId}-01`);
  });
});
