import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { parseWithBuiltInKinds as parseConfig } from './support/config-problems.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { scrape, valueOf, type Sample } from './support/prometheus.js';
import { postSse, type SseExchange } from './support/sse-client.js';

type Message = OpenAI.ChatCompletionMessageParam;
const SYSTEM = `You are the support desk's assistant. ${'Follow the house rules on tone and refunds. '.repeat(20)}`;
const opening = (index: number): Message[] => [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: `Case ${index}: ${'the parcel arrived damaged and late '.repeat(8)}` },
];
const CONVERSATIONS = Array.from({ length: 8 }, (_, index) => index);
const sumOf = (samples: Sample[], name: string, model: string) =>
  samples
    .filter((sample) => sample.name === name && sample.labels.model === model)
    .reduce((sum, sample) => sum + sample.value, 0);

describe('prefix-affinity routing over four engines with a prefix cache', () => {
  let mocks: MockUpstream[];
  let gateway: RunningGateway;
  let client: OpenAI;
  /** Each conversation's history so far, per model. */
  const histories = new Map<string, Message[]>();

  /** Sends the conversation's next turn (the whole history) and tells which mock took it and what it had cached. */
  async function turn(model: string, conversation: number, text: string, via: OpenAI = client) {
    const key = `${model}/${conversation}`;
    const messages = histories.get(key) ?? opening(conversation);
    if (histories.has(key)) messages.push({ role: 'user', content: text });
    histories.set(key, messages);
    const before = mocks.map((mock) => mock.state.chatRequests);
    const stream = await via.chat.completions.create({
      model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let answer = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      answer += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    messages.push({ role: 'assistant', content: answer });
    const served = mocks.findIndex((mock, index) => mock.state.chatRequests > before[index]);
    return {
      served,
      promptTokens: usage?.prompt_tokens ?? 0,
      cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    };
  }

  beforeAll(async () => {
    mocks = await Promise.all([0, 1, 2, 3].map(() => startMockUpstream({ behaviour: { prefixCacheTokens: 100_000 } })));
    const fleet = {
      engine: 'http',
      upstreams: mocks.map((mock) => mock.url),
      healthCheckIntervalMs: 100,
      maxFailures: 1,
      ejectionBaseMs: 200,
    };
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 100 },
      models: [
        { name: 'affinity', ...fleet, upstreamModel: 'affinity', routing: 'prefix-affinity' },
        { name: 'balanced', ...fleet, upstreamModel: 'balanced' },
        {
          name: 'affinity-held',
          ...fleet,
          upstreamModel: 'held',
          routing: 'prefix-affinity',
          routingLoadFactor: 1.25,
          headers: { 'x-mock-behaviour': JSON.stringify({ prefillMs: 10_000 }) },
        },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all(mocks.map((mock) => mock.close()));
  });

  it('sends every turn of a conversation to the replica of its first turn, where its prefix is cached', async () => {
    const owners: number[] = [];
    for (const conversation of CONVERSATIONS) {
      const first = await turn('affinity', conversation, '');
      owners.push(first.served);
      let previous = first.promptTokens;
      for (const question of ['And the refund?', 'Put it in writing.']) {
        const next = await turn('affinity', conversation, question);
        expect(next.served).toBe(first.served);
        // Everything the previous turn sent was cached, but for a part-filled last block of 16 tokens.
        expect(next.cachedTokens).toBeGreaterThan(previous - 16);
        previous = next.promptTokens;
      }
    }
    // Different conversations behind one system prompt still spread over the fleet.
    expect(new Set(owners).size).toBeGreaterThan(1);
  });

  it('(least-outstanding, for contrast, scatters the turns, which then prefill their conversation again)', async () => {
    let scattered = 0;
    for (const conversation of CONVERSATIONS) {
      const first = await turn('balanced', conversation, '');
      const second = await turn('balanced', conversation, 'And the refund?');
      if (second.served === first.served) continue;
      scattered += 1;
      // Only the shared system prompt was there, not the conversation's own first turn.
      expect(second.cachedTokens).toBeLessThan(first.promptTokens - 16);
    }
    expect(scattered).toBeGreaterThan(0);
  });

  it('makes the same choice on another gateway with the same fleet, listed in another order', async () => {
    const other = await startGateway({
      models: [
        {
          name: 'affinity',
          engine: 'http',
          upstreams: mocks.map((mock) => `${mock.url}/`).reverse(),
          upstreamModel: 'affinity',
          routing: 'prefix-affinity',
        },
      ],
    });
    try {
      const otherClient = new OpenAI({ baseURL: `${other.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      for (const conversation of CONVERSATIONS) {
        histories.delete(`affinity/${conversation}`);
        const here = await turn('affinity', conversation, '');
        histories.delete(`affinity/${conversation}`);
        const there = await turn('affinity', conversation, '', otherClient);
        expect(there.served).toBe(here.served);
      }
    } finally {
      await other.close();
    }
  });

  it('moves only the conversations of a replica that goes down, without client errors, and takes them back when it returns', async () => {
    const owners = new Map<number, number>();
    for (const conversation of CONVERSATIONS)
      owners.set(conversation, (await turn('affinity', conversation, 'Status?')).served);
    const counts = [0, 1, 2, 3].map((index) => [...owners.values()].filter((owner) => owner === index).length);
    const down = counts.indexOf(Math.max(...counts));
    await mocks[down].refuseConnections();
    try {
      for (const conversation of CONVERSATIONS) {
        const { served } = await turn('affinity', conversation, 'Any news?');
        if (owners.get(conversation) === down) expect(served).not.toBe(down);
        else expect(served).toBe(owners.get(conversation));
      }
    } finally {
      await mocks[down].acceptConnections();
    }
    const ready = async () =>
      (await (await fetch(`${gateway.url}/ready`)).json()) as {
        models: Record<string, { replicas: Array<{ healthy: boolean }> }>;
      };
    let healthy = false;
    for (let attempt = 0; attempt < 100 && !healthy; attempt += 1) {
      healthy = (await ready()).models.affinity.replicas.every((replica) => replica.healthy);
      if (!healthy) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(healthy).toBe(true);
    for (const conversation of CONVERSATIONS) {
      const back = await turn('affinity', conversation, 'Thanks.');
      expect(back.served).toBe(owners.get(conversation));
      // Its cache survived the outage: at least the turns before it are still there.
      expect(back.cachedTokens).toBeGreaterThan(0);
    }
  });

  it('bounds the load of a popular prefix: the overflow goes on along the ring, counted on /metrics', async () => {
    const release = { now: false };
    const held: Array<Promise<SseExchange>> = [];
    const open = () => mocks.map((mock) => mock.state.openRequests);
    try {
      for (let index = 0; index < 8; index += 1) {
        held.push(
          postSse(
            `${gateway.url}/v1/chat/completions`,
            { model: 'affinity-held', messages: opening(99), stream: true },
            { onFrame: () => release.now },
          ),
        );
        // One at a time, so each placement sees the loads the earlier ones left.
        expect(await eventually(() => open().reduce((sum, count) => sum + count, 0) === index + 1, 3000)).toBe(true);
      }
      const loads = open();
      // Bound ceil(1.25 * 8 / 4) = 3: no replica holds more, so the popular prefix took several.
      expect(Math.max(...loads)).toBeLessThanOrEqual(3);
      expect(loads.filter((count) => count > 0).length).toBeGreaterThan(1);
      const samples = await scrape(gateway.url);
      expect(sumOf(samples, 'gantry_upstream_requests_total', 'affinity-held')).toBe(8);
      expect(sumOf(samples, 'gantry_upstream_affinity_overrides_total', 'affinity-held')).toBeGreaterThan(0);
      // Per replica, as the replica health gauge is labelled.
      const busiest = loads.indexOf(Math.max(...loads));
      expect(
        valueOf(samples, 'gantry_upstream_requests_total', { model: 'affinity-held', replica: mocks[busiest].url }),
      ).toBe(loads[busiest]);
      // Least-outstanding models count their requests too, and have no override series.
      expect(sumOf(samples, 'gantry_upstream_requests_total', 'balanced')).toBeGreaterThan(0);
      expect(
        samples.some(
          (sample) => sample.name === 'gantry_upstream_affinity_overrides_total' && sample.labels.model === 'balanced',
        ),
      ).toBe(false);
    } finally {
      release.now = true;
      await Promise.all(held);
    }
    expect(await eventually(() => open().every((count) => count === 0), 3000)).toBe(true);
  });

  it('is configured per model: routing and routingLoadFactor are checked, least-outstanding by default', async () => {
    const model = (extra: Record<string, unknown>) => ({
      models: [{ name: 'm', engine: 'http', upstreams: ['http://127.0.0.1:9/v1'], ...extra }],
    });
    expect(parseConfig(model({})).models[0]).toMatchObject({ routing: 'least-outstanding', routingLoadFactor: 1.25 });
    expect(parseConfig(model({ routing: 'prefix-affinity', routingLoadFactor: 2 })).models[0]).toMatchObject({
      routing: 'prefix-affinity',
      routingLoadFactor: 2,
    });
    expect(() => parseConfig(model({ routing: 'round-robin' }))).toThrow(
      /routing must be one of: least-outstanding, prefix-affinity/,
    );
    expect(() => parseConfig(model({ routingLoadFactor: 0.5 }))).toThrow(
      /routingLoadFactor must be a number from 1 to 100/,
    );
    expect(() => parseConfig(model({ routingLoadFactor: 'high' }))).toThrow(
      /routingLoadFactor must be a number from 1 to 100/,
    );
  });
});
