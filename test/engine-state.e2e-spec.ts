import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { outsideTraffic } from './support/outside-traffic.js';
import { scrape, type Sample } from './support/prometheus.js';
import { postSse } from './support/sse-client.js';

const figure = (samples: Sample[], name: string, model: string, replica: string) =>
  samples.find((sample) => sample.name === name && sample.labels.model === model && sample.labels.replica === replica)
    ?.value;

describe('engine state: each replica read from its /metrics', () => {
  let mocks: MockUpstream[];
  let broken: MockUpstream[];
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    mocks = await Promise.all([0, 1, 2].map(() => startMockUpstream({ behaviour: { maxRunning: 4, tokens: 3 } })));
    broken = await Promise.all(
      (['slow', 'missing', 'garbage'] as const).map((metricsFailure) =>
        startMockUpstream({ behaviour: { tokens: 3, tokenIntervalMs: 100, metricsFailure } }),
      ),
    );
    const fleet = { engine: 'http', healthCheckIntervalMs: 0 };
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 100 },
      models: [
        {
          name: 'aware',
          ...fleet,
          upstreams: mocks.map((mock) => mock.url),
          routing: 'load-aware',
          engineMetrics: { path: '/metrics', intervalMs: 40 },
        },
        {
          name: 'blind',
          ...fleet,
          upstreams: broken.map((mock) => mock.url),
          routing: 'load-aware',
          saturation: { waitingRequests: 1 },
          engineMetrics: { path: '/metrics', intervalMs: 40 },
        },
        {
          name: 'held',
          ...fleet,
          upstreams: [mocks[2].url],
          saturation: { waitingRequests: 1 },
          engineMetrics: { path: '/metrics', intervalMs: 40 },
        },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([...(mocks ?? []), ...(broken ?? [])].map((mock) => mock.close()));
  });

  const ask = async (model: string) => {
    const stream = await client.chat.completions.create({
      model,
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    return text;
  };

  it("shows each replica's figures in Gantry's metrics and routes around the one swamped from outside", async () => {
    const swamped = mocks[0];
    const outside = outsideTraffic(swamped, 12);
    await outside.started;
    try {
      // 12 outside requests on a replica running 4: 8 wait there, which Gantry's own counts never saw.
      // (Far past the prefix bonus of 2, so the swamped replica loses even for the prompts it owns.)
      const label = swamped.url;
      expect(
        await eventually(async () => {
          const samples = await scrape(gateway.url);
          return figure(samples, 'gantry_engine_waiting_requests', 'aware', label) === 8;
        }),
      ).toBe(true);
      const samples = await scrape(gateway.url);
      expect(figure(samples, 'gantry_engine_running_requests', 'aware', label)).toBe(4);
      expect(figure(samples, 'gantry_engine_kv_cache_usage', 'aware', label)).toBe(1);
      expect(figure(samples, 'gantry_engine_waiting_requests', 'aware', mocks[1].url)).toBe(0);

      const before = swamped.state.chatRequests;
      const answers = await Promise.all(Array.from({ length: 8 }, () => ask('aware')));
      expect(answers.every((text) => text.length > 0)).toBe(true);
      expect(swamped.state.chatRequests).toBe(before);
      expect(mocks[1].state.chatRequests + mocks[2].state.chatRequests).toBeGreaterThanOrEqual(8);
    } finally {
      outside.stop();
    }
  });

  it('keeps routing when replicas answer /metrics slowly, not at all, or with garbage: each is judged by Gantry’s own counts', async () => {
    const answers = await Promise.all(Array.from({ length: 9 }, () => ask('blind')));
    expect(answers.every((text) => text.length > 0)).toBe(true);
    // Not held (no evidence of saturation), and spread by Gantry's own counts: the prefix holder took
    // a few more (its bonus is worth two requests), the others their share.
    expect(broken.every((mock) => mock.state.chatRequests > 0)).toBe(true);
    expect(broken.reduce((sum, mock) => sum + mock.state.chatRequests, 0)).toBe(9);
    expect(
      await eventually(async () => {
        const samples = await scrape(gateway.url);
        return broken.every(
          (mock) => (figure(samples, 'gantry_engine_metrics_scrape_failures_total', 'blind', mock.url) ?? 0) > 0,
        );
      }, 4_000),
    ).toBe(true);
    const samples = await scrape(gateway.url);
    expect(
      samples.filter((sample) => sample.name === 'gantry_engine_waiting_requests' && sample.labels.model === 'blind'),
    ).toEqual([]);
  });

  it('holds a request in Gantry while the replica is saturated, with keep-alives, and releases it when room appears', async () => {
    const replica = mocks[2];
    // Running 4, waiting 1: at the threshold (waitingRequests: 1).
    const outside = outsideTraffic(replica, 5);
    await outside.started;
    expect(await eventually(() => replica.state.waitingRequests === 1)).toBe(true);
    const gateway$ = gateway;
    expect(
      await eventually(async () => {
        const samples = await scrape(gateway$.url);
        return figure(samples, 'gantry_engine_waiting_requests', 'held', replica.url) === 1;
      }),
    ).toBe(true);
    const before = replica.state.chatRequests;
    let released = false;
    let sentWhileHeld: number | undefined;
    const exchange = postSse(
      `${gateway.url}/v1/chat/completions`,
      { model: 'held', stream: true, messages: [{ role: 'user', content: 'hello' }] },
      {
        onFrame: (frame, frames) => {
          // Three keep-alives while held, then the room is made.
          const heartbeats = frames.filter((seen) => seen.kind === 'event' && seen.data.includes('"delta":{}')).length;
          if (!released && heartbeats >= 3) {
            sentWhileHeld = replica.state.chatRequests - before;
            released = true;
            outside.stop();
          }
          return false;
        },
      },
    );
    const answer = await exchange;
    expect(answer.status).toBe(200);
    expect(released).toBe(true);
    expect(sentWhileHeld).toBe(0);
    expect(replica.state.chatRequests).toBe(before + 1);
    const text = answer
      .json()
      .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toContain('token');
  });
});
