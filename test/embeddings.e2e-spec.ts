import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { scrape, valueOf } from './support/prometheus.js';
import { LifecycleService } from '../src/lifecycle/lifecycle.service.js';

const behaving = (behaviour: Record<string, unknown>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const norm = (vector: number[]) => Math.hypot(...vector);

describe('embeddings on the stub', () => {
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway({
      auth: {
        apiKeys: [
          { name: 'open', key: 'sk-open' },
          { name: 'chat-only', key: 'sk-chat-only', models: ['stub'] },
          { name: 'budgeted', key: 'sk-budget', limits: { tokensPerMinute: 10 } },
        ],
      },
      models: [
        { name: 'stub', engine: 'stub' },
        { name: 'embedder', engine: 'stub', apis: ['embeddings'] },
        { name: 'chatter', engine: 'stub', apis: ['chat'] },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-open', maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  it('answers the SDK on its default base64 encoding: the same text, the same vector', async () => {
    const first = await client.embeddings.create({ model: 'embedder', input: ['the cat sat', 'a dog ran'] });
    const again = await client.embeddings.create({ model: 'embedder', input: 'the cat sat' });
    expect(first.object).toBe('list');
    expect(first.model).toBe('embedder');
    expect(first.data.map((item) => item.index)).toEqual([0, 1]);
    expect(first.data[0].embedding).toHaveLength(32);
    expect(norm(first.data[0].embedding)).toBeCloseTo(1, 5);
    expect(again.data[0].embedding).toEqual(first.data[0].embedding);
    expect(first.data[1].embedding).not.toEqual(first.data[0].embedding);
    expect(first.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
  });

  it('answers floats, base64 and dimensions alike', async () => {
    const floats = await readJson(
      await post(
        `${gateway.url}/v1/embeddings`,
        { model: 'stub', input: 'hello', encoding_format: 'float', dimensions: 4 },
        { authorization: 'Bearer sk-open' },
      ),
    );
    const base64 = await readJson(
      await post(
        `${gateway.url}/v1/embeddings`,
        { model: 'stub', input: 'hello', encoding_format: 'base64', dimensions: 4 },
        { authorization: 'Bearer sk-open' },
      ),
    );
    expect(floats.data[0].embedding).toHaveLength(4);
    expect(typeof base64.data[0].embedding).toBe('string');
    const bytes = Buffer.from(base64.data[0].embedding, 'base64');
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    expect(decoded).toEqual(floats.data[0].embedding);
  });

  it('takes token ids, one list or several', async () => {
    const one = await client.embeddings.create({ model: 'stub', input: [1, 2, 3] });
    const several = await client.embeddings.create({ model: 'stub', input: [[1, 2, 3], [4]] });
    expect(one.data).toHaveLength(1);
    expect(several.data[0].embedding).toEqual(one.data[0].embedding);
    expect(several.usage.prompt_tokens).toBe(4);
  });

  it('refuses bad input in OpenAI’s shape', async () => {
    for (const input of ['', [], [''], [[1, -2]], [['a']], [1, 'a']]) {
      const response = await post(
        `${gateway.url}/v1/embeddings`,
        { model: 'stub', input },
        { authorization: 'Bearer sk-open' },
      );
      expect(response.status, JSON.stringify(input)).toBe(400);
      expect((await readJson(response)).error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
    }
    const format = await post(
      `${gateway.url}/v1/embeddings`,
      { model: 'stub', input: 'a', encoding_format: 'int8' },
      { authorization: 'Bearer sk-open' },
    );
    expect(format.status).toBe(400);
  });

  it('answers an API the model does not serve with a 400 in that API’s shape', async () => {
    const embeddings = await post(
      `${gateway.url}/v1/embeddings`,
      { model: 'chatter', input: 'a' },
      { authorization: 'Bearer sk-open' },
    );
    expect(embeddings.status).toBe(400);
    expect((await readJson(embeddings)).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'api_not_served',
      param: 'model',
      message: "The model 'chatter' does not serve the embeddings API; it serves: chat.",
    });
    const messages = await post(
      `${gateway.url}/v1/messages`,
      { model: 'embedder', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-api-key': 'sk-open', 'anthropic-version': '2023-06-01' },
    );
    expect(messages.status).toBe(400);
    expect(await readJson(messages)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    await expect(
      client.chat.completions.create({ model: 'embedder', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 400, code: 'api_not_served' });
  });

  it('lists what each model serves on /v1/models', async () => {
    const models = await readJson(
      await fetch(`${gateway.url}/v1/models`, { headers: { authorization: 'Bearer sk-open' } }),
    );
    const apis = Object.fromEntries(models.data.map((model: { id: string; apis: string[] }) => [model.id, model.apis]));
    expect(apis).toEqual({
      stub: ['chat', 'responses', 'messages', 'completions', 'embeddings'],
      embedder: ['embeddings'],
      chatter: ['chat'],
    });
  });

  it('keeps API keys and model access: no key is a 401, a model the key may not use a 404', async () => {
    expect((await post(`${gateway.url}/v1/embeddings`, { model: 'stub', input: 'a' })).status).toBe(401);
    const hidden = await post(
      `${gateway.url}/v1/embeddings`,
      { model: 'embedder', input: 'a' },
      { authorization: 'Bearer sk-chat-only' },
    );
    expect(hidden.status).toBe(404);
    expect((await readJson(hidden)).error.code).toBe('model_not_found');
  });

  it('counts an embedding’s tokens against the tenant’s tokensPerMinute', async () => {
    const budgeted = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-budget', maxRetries: 0 });
    await budgeted.embeddings.create({ model: 'stub', input: 'one two three four five six' });
    // Six tokens spent: five more do not fit in ten, though alone they would.
    await expect(
      budgeted.embeddings.create({ model: 'stub', input: 'seven eight nine ten eleven' }),
    ).rejects.toMatchObject({ status: 429 });
  });

  it('labels metrics and the request id by API', async () => {
    const response = await post(
      `${gateway.url}/v1/embeddings`,
      { model: 'stub', input: 'count me' },
      { authorization: 'Bearer sk-open', 'x-request-id': 'embed-req-1' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('embed-req-1');
    const metrics = await scrape(gateway.url);
    expect(
      valueOf(metrics, 'gantry_requests_total', {
        api: 'embeddings',
        model: 'stub',
        outcome: 'completed',
        status: '200',
      }),
    ).toBeGreaterThan(0);
    expect(valueOf(metrics, 'gantry_prompt_tokens_total', { api: 'embeddings', model: 'stub' })).toBeGreaterThan(0);
  });
});

describe('pooling APIs on an upstream fleet', () => {
  let main: MockUpstream;
  let failing: MockUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    [main, failing] = await Promise.all([
      startMockUpstream({ servedModel: 'org/embedder' }),
      startMockUpstream({
        servedModel: 'org/embedder',
        behaviour: { failure: 'status', failureStatus: 503, failureQuotes: 'headers' },
      }),
    ]);
    gateway = await startGateway({
      models: [
        {
          name: 'embedder',
          engine: 'http',
          upstreams: [failing.url, main.url],
          upstreamModel: 'org/embedder',
          apiKey: 'sk-upstream-secret',
          healthCheckIntervalMs: 0,
          maxFailures: 100,
          apis: ['embeddings', 'rerank', 'score'],
        },
        {
          name: 'solo',
          engine: 'http',
          upstreams: [failing.url],
          upstreamModel: 'org/embedder',
          apiKey: 'sk-upstream-secret',
          healthCheckIntervalMs: 0,
          maxFailures: 100,
          headers: behaving({ failureStatus: 400 }),
        },
        {
          name: 'one-at-a-time',
          engine: 'http',
          upstreams: [main.url],
          upstreamModel: 'org/embedder',
          healthCheckIntervalMs: 0,
          headers: behaving({ prefillMs: 60_000 }),
          maxConcurrency: 1,
          maxQueue: 0,
        },
        {
          name: 'slow',
          engine: 'http',
          upstreams: [main.url],
          upstreamModel: 'org/embedder',
          healthCheckIntervalMs: 0,
          headers: behaving({ prefillMs: 60_000 }),
        },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([main.close(), failing.close()]);
  });

  const lastReceived = (mock: MockUpstream) => mock.state.received.at(-1)!;

  it('passes embeddings on, fields it does not read included, and answers under the client’s model name', async () => {
    const answer = await client.embeddings.create({
      model: 'embedder',
      input: ['alpha beta', 'gamma'],
      dimensions: 6,
      user: 'someone',
      // @ts-expect-error vLLM's own field, passed on unread
      truncate_prompt_tokens: 12,
    });
    expect(answer.model).toBe('embedder');
    expect(answer.data[0].embedding).toHaveLength(6);
    expect(answer.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const received = lastReceived(main);
    expect(received.path).toBe('/v1/embeddings');
    expect(received.body).toEqual({
      model: 'org/embedder',
      input: ['alpha beta', 'gamma'],
      encoding_format: 'base64',
      dimensions: 6,
      user: 'someone',
      truncate_prompt_tokens: 12,
    });
    expect(received.headers.authorization).toBe('Bearer sk-upstream-secret');
  });

  it('retries a failed replica on another before the answer', async () => {
    const before = failing.state.received.length;
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const answer = await client.embeddings.create({ model: 'embedder', input: 'again', encoding_format: 'float' });
      expect(answer.data[0].embedding).toHaveLength(8);
    }
    expect(failing.state.received.length).toBeGreaterThan(before);
  });

  it('answers an upstream’s refusal with its status, the upstream’s secrets redacted', async () => {
    const response = await post(`${gateway.url}/v1/embeddings`, { model: 'solo', input: 'x' });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).toContain('The upstream answered 400');
    expect(text).toContain('authorization');
    expect(text).not.toContain('sk-upstream-secret');
  });

  it('cancels the upstream request when the client hangs up', async () => {
    const aborted = main.state.abortedRequests;
    const controller = new AbortController();
    const pending = fetch(`${gateway.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', input: 'wait' }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    expect(await eventually(() => main.state.openRequests > 0)).toBe(true);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    expect(await eventually(() => main.state.abortedRequests === aborted + 1 && main.state.openRequests === 0)).toBe(
      true,
    );
  });

  it('takes a place in the model’s queue: a full one is a 429 before anything is sent upstream', async () => {
    const controller = new AbortController();
    const holding = fetch(`${gateway.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'one-at-a-time', input: 'hold' }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    expect(await eventually(() => main.state.openRequests === 1)).toBe(true);
    const received = main.state.received.length;
    const refused = await post(`${gateway.url}/v1/embeddings`, { model: 'one-at-a-time', input: 'wait' });
    expect(refused.status).toBe(429);
    expect((await readJson(refused)).error.code).toBe('queue_full');
    expect(main.state.received.length).toBe(received);
    controller.abort();
    await holding;
    expect(await eventually(() => main.state.openRequests === 0)).toBe(true);
  });

  it('reranks on /v1/rerank and vLLM’s aliases, and scores on /v1/score', async () => {
    const request = {
      model: 'embedder',
      query: 'red apple',
      documents: ['a green pear', 'a red apple', 'red wine'],
      top_n: 2,
      priority: 3,
    };
    for (const path of ['/v1/rerank', '/rerank', '/v2/rerank']) {
      const response = await post(`${gateway.url}${path}`, request);
      expect(response.status, path).toBe(200);
      const body = await readJson(response);
      expect(body.model).toBe('embedder');
      expect(body.results.map((result: { index: number }) => result.index)).toEqual([1, 2]);
      expect(body.results[0].document).toEqual({ text: 'a red apple' });
      expect(lastReceived(main).body).toEqual({ ...request, model: 'org/embedder' });
      expect(lastReceived(main).path).toBe('/v1/rerank');
    }
    const score = await readJson(
      await post(`${gateway.url}/v1/score`, { model: 'embedder', text_1: 'red apple', text_2: ['red apple', 'pear'] }),
    );
    expect(score.model).toBe('embedder');
    expect(score.data.map((item: { score: number }) => item.score)).toEqual([1, 0]);
    const bad = await post(`${gateway.url}/v1/rerank`, { model: 'embedder', query: 'q', documents: [] });
    expect(bad.status).toBe(400);
    expect((await readJson(bad)).error.param).toBe('documents');
  });

  it('refuses rerank on a model whose engine cannot (the stub), and every pooling API while draining', async () => {
    const stubbed = await startGateway({ models: [{ name: 'stub', engine: 'stub' }] });
    try {
      const response = await post(`${stubbed.url}/v1/rerank`, { model: 'stub', query: 'q', documents: ['d'] });
      expect(response.status).toBe(400);
      expect((await readJson(response)).error.code).toBe('api_not_served');
      stubbed.app.get(LifecycleService).beginDrain();
      for (const path of ['/v1/embeddings', '/v1/rerank', '/v1/score', '/v1/completions']) {
        const drained = await post(`${stubbed.url}${path}`, { model: 'stub', input: 'x' });
        expect(drained.status, path).toBe(503);
        expect((await readJson(drained)).error.code).toBe('shutting_down');
      }
    } finally {
      await stubbed.close();
    }
  });
});
