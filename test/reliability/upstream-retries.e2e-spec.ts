import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import { eventually, readJson, startGateway, type RunningGateway } from '../support/gateway.js';
import { postSse } from '../support/sse-client.js';

const ask = (text: string) => [{ role: 'user' as const, content: text }];
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Ports where nothing listens: a mock that was started and closed. */
async function refusingUrl(): Promise<string> {
  const mock = await startMockUpstream();
  await mock.close();
  return mock.url;
}

describe('retries before the first visible output, with continuous usage', () => {
  let dropping: MockUpstream;
  let healthy: MockUpstream;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [dropping, healthy] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    // The role chunk, which carries usage under continuous_usage_stats, then the connection drops.
    dropping.setBehaviour({ failure: 'drop', failAfterTokens: 0 });
    const pair = {
      engine: 'http',
      upstreams: [dropping.url, healthy.url],
      healthCheckIntervalMs: 0,
      maxFailures: 1000,
    };
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 10_000 },
      models: [
        { name: 'pair', ...pair },
        { name: 'pair-collected', ...pair, nonStreaming: 'stream' },
      ],
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([dropping?.close(), healthy?.close()]);
  });

  it('the dropping replica sends its role chunk with usage before it drops', async () => {
    const response = await post(`${dropping.url}/chat/completions`, {
      model: 'm',
      messages: ask('a b'),
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    // Read until the drop: the body errors, but what arrived before stays.
    let text = '';
    const decoder = new TextDecoder();
    try {
      for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>)
        text += decoder.decode(piece, { stream: true });
    } catch {
      // The drop itself.
    }
    expect(text).toContain('"role":"assistant"');
    expect(text).toContain('"usage":{"prompt_tokens":2');
    expect(text).not.toContain('[DONE]');
  });

  it('every one of 10 streams succeeds on the other replica, with its counters only', async () => {
    const droppedBefore = dropping.state.chatRequests;
    for (let round = 0; round < 10; round += 1) {
      const exchange = await postSse(`${gateway.url}/v1/chat/completions`, {
        model: 'pair',
        messages: ask(`round ${round} of ten`),
        stream: true,
        timings_per_token: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      });
      const chunks = exchange.json();
      expect(chunks.find((chunk) => chunk.error)).toBeUndefined();
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(`round ${round} of ten`);
      // Counters never run backwards: nothing the dropped attempt counted was sent.
      const completions = chunks.map((chunk) => chunk.usage?.completion_tokens ?? 0);
      expect(completions).toEqual([...completions].sort((a, b) => a - b));
      expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
      expect(chunks.at(-1)!.timings).toMatchObject({ prompt_n: 4, predicted_n: 4 });
    }
    // Each request tried the dropping replica first (ties take turns, and it was just skipped).
    expect(dropping.state.chatRequests - droppedBefore).toBeGreaterThanOrEqual(5);
  });

  it('non-streaming requests collected from a stream are retried too', async () => {
    for (let round = 0; round < 4; round += 1) {
      const response = await post(`${gateway.url}/v1/chat/completions`, {
        model: 'pair-collected',
        messages: ask(`whole ${round}`),
      });
      expect(response.status).toBe(200);
      expect(await readJson(response)).toMatchObject({
        choices: [{ message: { content: `whole ${round}` } }],
        usage: { prompt_tokens: 2, completion_tokens: 2 },
      });
    }
  });
});

describe('upstreams without GET /health', () => {
  let ollama: MockUpstream;
  let bare: MockUpstream;
  let tagged: MockUpstream;
  let unhealthy: MockUpstream;
  let gateway: RunningGateway;
  const probed = { healthCheckIntervalMs: 50, healthCheckTimeoutMs: 1000 };
  const replicaOf = async (model: string) => (await readJson(await fetch(`${gateway.url}/ready`))).models[model];

  beforeAll(async () => {
    [ollama, bare, tagged, unhealthy] = await Promise.all([
      startMockUpstream({ healthRoute: false }),
      startMockUpstream({ healthRoute: false, modelsRoute: false }),
      startMockUpstream({ healthRoute: false, modelsRoute: false, tagsRoute: true }),
      startMockUpstream({ behaviour: { unhealthy: true } }),
    ]);
    gateway = await startGateway({
      models: [
        { name: 'ollama', engine: 'http', upstreams: [ollama.url], ...probed },
        { name: 'bare', engine: 'http', upstreams: [bare.url], ...probed },
        { name: 'tagged', engine: 'http', upstreams: [tagged.url], healthCheckPath: '/api/tags', ...probed },
        { name: 'unhealthy', engine: 'http', upstreams: [unhealthy.url], ...probed },
      ],
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([ollama, bare, tagged, unhealthy].map((mock) => mock?.close()));
  });

  it('falls back to GET /v1/models when /health answers 404, and serves', async () => {
    expect(await eventually(() => (ollama.state.gets['/v1/models'] ?? 0) >= 2)).toBe(true);
    expect(ollama.state.gets['/health']).toBeGreaterThanOrEqual(1);
    expect((await replicaOf('ollama')).replicas[0]).toMatchObject({ healthy: true, healthCheck: 'passing' });
    const response = await post(`${gateway.url}/v1/chat/completions`, {
      model: 'ollama',
      messages: ask('no health route'),
    });
    expect(response.status).toBe(200);
    expect(await readJson(response)).toMatchObject({ choices: [{ message: { content: 'no health route' } }] });
  });

  it('a replica with no probe route at all is not marked down: unknown, and served', async () => {
    expect(await eventually(() => (bare.state.gets['/v1/models'] ?? 0) >= 2)).toBe(true);
    expect(await replicaOf('bare')).toMatchObject({
      ready: true,
      replicas: [{ healthy: true, healthCheck: 'unknown' }],
    });
    const response = await post(`${gateway.url}/v1/chat/completions`, { model: 'bare', messages: ask('still served') });
    expect(response.status).toBe(200);
  });

  it('probes an explicit healthCheckPath, and only it', async () => {
    expect(await eventually(() => (tagged.state.gets['/api/tags'] ?? 0) >= 2)).toBe(true);
    expect(tagged.state.gets['/health']).toBeUndefined();
    expect(tagged.state.gets['/v1/models']).toBeUndefined();
    expect((await replicaOf('tagged')).replicas[0]).toMatchObject({ healthy: true, healthCheck: 'passing' });
  });

  it('a /health that answers 503 still marks the replica down (no fallback)', async () => {
    expect(await eventually(() => (unhealthy.state.gets['/health'] ?? 0) >= 2)).toBe(true);
    expect(await replicaOf('unhealthy')).toMatchObject({
      ready: false,
      replicas: [{ healthy: false, healthCheck: 'failing' }],
    });
    expect(unhealthy.state.gets['/v1/models']).toBeUndefined();
  });
});

describe('/ready with one dead model and one live', () => {
  let live: MockUpstream;
  let any: RunningGateway;
  let all: RunningGateway;

  beforeAll(async () => {
    live = await startMockUpstream();
    const models = [
      { name: 'live', engine: 'http', upstreams: [live.url], healthCheckIntervalMs: 50 },
      { name: 'dead', engine: 'http', upstreams: [await refusingUrl()], healthCheckIntervalMs: 50 },
    ];
    [any, all] = await Promise.all([
      startGateway({ models }),
      startGateway({ server: { readinessRequires: 'all' }, models }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([any?.close(), all?.close()]);
    await live?.close();
  });

  const readiness = async (gateway: RunningGateway) => {
    expect(await eventually(() => !gateway.registry.resolve('dead').engine.isReady())).toBe(true);
    const response = await fetch(`${gateway.url}/ready`);
    return { status: response.status, body: await readJson(response) };
  };

  it('readinessRequires any (the default): 200, and the body shows the dead model', async () => {
    const { status, body } = await readiness(any);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'ready',
      models: { live: { ready: true }, dead: { ready: false, replicas: [{ healthy: false }] } },
    });
  });

  it('readinessRequires all: 503', async () => {
    const { status, body } = await readiness(all);
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: 'not_ready', models: { live: { ready: true }, dead: { ready: false } } });
  });
});
