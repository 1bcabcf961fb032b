import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { captureLogs } from './support/log-capture.js';
import { scrape, valueOf } from './support/prometheus.js';
import { admissionOrder } from './support/tenant-streams.js';

/** Tenants over a real gateway: named keys, model access, fair queues, token limits, per-tenant metrics. */

const MODELS = [
  { name: 'llama-small', engine: 'stub' },
  { name: 'llama-large', engine: 'stub' },
  { name: 'qwen', engine: 'stub' },
];

const openaiFor = (url: string, key: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
const anthropicFor = (url: string, key: string) => new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });

// First in the file: the process's one root logger is made by its first gateway (logging.module.ts).
describe('per-tenant usage: metrics, request logs and spans', () => {
  it('counts tokens and requests by tenant (default for keys without a name), the queue wait, and refusals by limit; logs and spans name the tenant, never the key', async () => {
    const logs = captureLogs();
    const spans = new InMemorySpanExporter();
    const gateway = await startGateway(
      {
        responses: { store: 'off' },
        observability: { logging: { level: 'info' }, tracing: { exporter: 'console' } },
        auth: {
          apiKeys: [
            'sk-plain-secret',
            { name: 'team-a', key: 'sk-team-a-secret', models: ['echo'], limits: { requestsPerMinute: 2 } },
          ],
        },
        models: [
          { name: 'echo', engine: 'stub', maxConcurrency: 4 },
          { name: 'other', engine: 'stub' },
        ],
      },
      { observability: { logDestination: logs.destination, spanExporter: spans } },
    );
    try {
      const teamA = openaiFor(gateway.url, 'sk-team-a-secret');
      await teamA.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one two three' }] });
      expect(
        await teamA.chat.completions
          .create({ model: 'other', messages: [{ role: 'user', content: 'x' }] })
          .catch((error: unknown) => error),
      ).toBeInstanceOf(OpenAI.NotFoundError);
      expect(
        await teamA.chat.completions
          .create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] })
          .catch((error: unknown) => error),
      ).toBeInstanceOf(OpenAI.RateLimitError);
      await openaiFor(gateway.url, 'sk-plain-secret').chat.completions.create({
        model: 'other',
        messages: [{ role: 'user', content: 'four five' }],
      });

      const samples = await scrape(gateway.url);
      const tokens = (tenant: string, model: string, kind: string) =>
        valueOf(samples, 'gantry_tenant_tokens_total', { tenant, model, kind });
      expect(tokens('team-a', 'echo', 'completion')).toBe(3);
      expect(tokens('team-a', 'echo', 'prompt')).toBeGreaterThan(0);
      expect(tokens('default', 'other', 'completion')).toBe(2);
      expect(
        valueOf(samples, 'gantry_tenant_requests_total', { tenant: 'team-a', model: 'echo', outcome: 'completed' }),
      ).toBe(1);
      // The model it may not use is counted as an unknown one is: under model="".
      expect(
        valueOf(samples, 'gantry_tenant_requests_total', { tenant: 'team-a', model: '', outcome: 'rejected' }),
      ).toBe(1);
      expect(
        valueOf(samples, 'gantry_tenant_requests_total', { tenant: 'default', model: 'other', outcome: 'completed' }),
      ).toBe(1);
      expect(valueOf(samples, 'gantry_tenant_queue_time_seconds_count', { tenant: 'team-a', model: 'echo' })).toBe(1);
      expect(valueOf(samples, 'gantry_tenant_limited_total', { tenant: 'team-a', limit: 'requests_per_minute' })).toBe(
        1,
      );

      expect(await eventually(() => logs.lines.filter((line) => line.context === 'Request').length === 3)).toBe(true);
      const requestLines = logs.lines.filter((line) => line.context === 'Request');
      expect(requestLines.map((line) => [line.tenant, line.model, line.outcome])).toEqual([
        ['team-a', 'echo', 'completed'],
        ['team-a', 'other', 'rejected'],
        ['default', 'other', 'completed'],
      ]);
      expect(logs.raw.join('\n')).not.toContain('secret');
      const requestSpans = spans.getFinishedSpans().filter((span) => span.name.startsWith('chat'));
      const tenantsOfSpans = requestSpans.map((span) => span.attributes['gantry.tenant']);
      expect(tenantsOfSpans).toEqual(['team-a', 'team-a', 'default']);
      expect(JSON.stringify(spans.getFinishedSpans().map((span) => span.attributes))).not.toContain('secret');
    } finally {
      await gateway.close();
    }
  });
});

describe('model access of a named key', () => {
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      responses: { store: 'off' },
      auth: { apiKeys: ['sk-plain', { name: 'team-llama', key: 'sk-llama', models: ['llama-*'] }] },
      models: MODELS,
    });
  });
  afterAll(() => gateway.close());

  it('answers a model the key may not use with 404 in each protocol’s shape, as an unknown one', async () => {
    const openai = openaiFor(gateway.url, 'sk-llama');
    const anthropic = anthropicFor(gateway.url, 'sk-llama');
    const chat = await openai.chat.completions
      .create({ model: 'qwen', messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(chat).toBeInstanceOf(OpenAI.NotFoundError);
    expect((chat as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
    const unknown = await openai.chat.completions
      .create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect((unknown as Error).message.replace('nope', 'qwen')).toBe((chat as Error).message);
    const responses = await openai.responses.create({ model: 'qwen', input: 'x' }).catch((error: unknown) => error);
    expect(responses).toBeInstanceOf(OpenAI.NotFoundError);
    const messages = await anthropic.messages
      .create({ model: 'qwen', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(messages).toBeInstanceOf(Anthropic.NotFoundError);
    expect((messages as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error' },
    });
    const counted = await anthropic.messages
      .countTokens({ model: 'qwen', messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(counted).toBeInstanceOf(Anthropic.NotFoundError);
    const inputTokens = await openai.responses.inputTokens
      .count({ model: 'qwen', input: 'x' })
      .catch((error: unknown) => error);
    expect(inputTokens).toBeInstanceOf(OpenAI.NotFoundError);
    expect((inputTokens as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
    // Its own models answer.
    const answer = await openai.chat.completions.create({
      model: 'llama-small',
      messages: [{ role: 'user', content: 'mine' }],
    });
    expect(answer.choices[0].message.content).toBe('mine');
  });

  it('lists and retrieves only the key’s models in both shapes; a key without `models` sees them all', async () => {
    const listed = async (key: string) => {
      const openai: string[] = [];
      for await (const model of openaiFor(gateway.url, key).models.list()) openai.push(model.id);
      const anthropic: string[] = [];
      for await (const model of anthropicFor(gateway.url, key).models.list({ limit: 1 })) anthropic.push(model.id);
      return { openai, anthropic };
    };
    expect(await listed('sk-llama')).toEqual({
      openai: ['llama-small', 'llama-large'],
      anthropic: ['llama-small', 'llama-large'],
    });
    expect(await listed('sk-plain')).toEqual({
      openai: ['llama-small', 'llama-large', 'qwen'],
      anthropic: ['llama-small', 'llama-large', 'qwen'],
    });
    expect(await openaiFor(gateway.url, 'sk-llama').models.retrieve('llama-large')).toMatchObject({
      id: 'llama-large',
    });
    expect(
      await openaiFor(gateway.url, 'sk-llama')
        .models.retrieve('qwen')
        .catch((error: unknown) => error),
    ).toBeInstanceOf(OpenAI.NotFoundError);
    const hidden = await anthropicFor(gateway.url, 'sk-llama')
      .models.retrieve('qwen')
      .catch((error: unknown) => error);
    expect((hidden as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      error: { type: 'not_found_error' },
    });
    const page = await readJson(
      await fetch(`${gateway.url}/v1/models?limit=1`, {
        headers: { 'x-api-key': 'sk-llama', 'anthropic-version': '2023-06-01' },
      }),
    );
    expect(page).toMatchObject({ has_more: true, first_id: 'llama-small', last_id: 'llama-small' });
  });
});

describe('fair queueing of a contended model', () => {
  let mock: MockUpstream;
  let gateway: RunningGateway;
  const contended = { maxConcurrency: 1, maxQueue: 20 };

  beforeAll(async () => {
    mock = await startMockUpstream({ behaviour: { tokenIntervalMs: 25 } });
    gateway = await startGateway({
      responses: { store: 'off' },
      keepalive: { intervalMs: 100 },
      auth: {
        apiKeys: [
          { name: 'noisy', key: 'sk-noisy' },
          { name: 'quiet', key: 'sk-quiet' },
          { name: 'urgent', key: 'sk-urgent', priority: 1 },
        ],
      },
      models: [
        { name: 'stub-fair', engine: 'stub', tokenIntervalMs: 25, ...contended },
        { name: 'stub-fifo', engine: 'stub', tokenIntervalMs: 25, queueOrder: 'fifo', ...contended },
        { name: 'http-fair', engine: 'http', upstreams: [mock.url], ...contended },
      ],
    });
  });
  afterAll(async () => {
    await gateway.close();
    await mock.close();
  });

  it('admits a quiet tenant next, ahead of the noisy tenant’s queue, over the stub and HTTP engines; FIFO keeps it last', async () => {
    const noisy = Array.from({ length: 5 }, (_, index) => ({ name: `noisy-${index}`, key: 'sk-noisy' }));
    const quiet = { name: 'quiet', key: 'sk-quiet' };
    for (const model of ['stub-fair', 'http-fair']) {
      const order = await admissionOrder(gateway.url, model, noisy, [quiet]);
      // Right after the running request (or the one after it, on a machine slow enough that it ended first).
      expect(order.indexOf('quiet'), `${model}: ${order.join(' ')}`).toBeLessThanOrEqual(2);
      expect(order.filter((name) => name.startsWith('noisy'))).toEqual(noisy.map((request) => request.name));
    }
    const fifo = await admissionOrder(gateway.url, 'stub-fifo', noisy, [quiet]);
    expect(fifo).toEqual([...noisy.map((request) => request.name), 'quiet']);
  });

  it('admits a waiting request of a higher priority first', async () => {
    const order = await admissionOrder(
      gateway.url,
      'stub-fair',
      Array.from({ length: 3 }, (_, index) => ({ name: `quiet-${index}`, key: 'sk-quiet' })),
      [{ name: 'urgent', key: 'sk-urgent' }],
    );
    expect(order.indexOf('urgent')).toBeLessThanOrEqual(2);
    expect(order.slice(-1)).not.toEqual(['urgent']);
  });
});

// .ci/run starts a redis-server and sets this; without it the Redis case is skipped.
const REDIS_URL = process.env.GANTRY_TEST_REDIS_URL;

describe('token limits', () => {
  const tenants = (extra: Record<string, unknown> = {}, tokensPerMinute = 60) => ({
    responses: { store: 'off' },
    auth: {
      apiKeys: ['sk-plain', { name: 'metered', key: 'sk-metered', limits: { tokensPerMinute } }],
      limits: { tokensPerDay: 1_000_000, ...extra },
    },
    models: [{ name: 'echo', engine: 'stub' }],
  });
  const chat = (url: string, key: string) =>
    openaiFor(url, key).chat.completions.create({
      model: 'echo',
      messages: [
        {
          role: 'user',
          content:
            'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty',
        },
      ],
    });

  it('settles the tokens the engine reported and refuses the next request that does not fit in each protocol’s shape, with Retry-After, until the window slides', async () => {
    const gateway = await startGateway(tenants());
    try {
      const first = await chat(gateway.url, 'sk-metered');
      // 20 words of prompt echoed: 40 used; the next one's prompt (about 32 tokens) does not fit in the 20 left.
      expect(first.usage!.prompt_tokens + first.usage!.completion_tokens).toBe(40);
      const refused = await chat(gateway.url, 'sk-metered').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      expect((refused as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({
        type: 'rate_limit_error',
        code: 'token_limit_exceeded',
      });
      const retryAfter = Number((refused as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(55);
      expect(retryAfter).toBeLessThanOrEqual(61);
      const messages = await anthropicFor(gateway.url, 'sk-metered')
        .messages.create({ model: 'echo', max_tokens: 30, messages: [{ role: 'user', content: 'x' }] })
        .catch((error: unknown) => error);
      expect(messages).toBeInstanceOf(Anthropic.RateLimitError);
      expect((messages as InstanceType<typeof Anthropic.RateLimitError>).error).toMatchObject({
        type: 'error',
        error: { type: 'rate_limit_error' },
      });
      // What spends no tokens still passes: the models a spent tenant may use.
      expect((await openaiFor(gateway.url, 'sk-metered').models.list()).data.map((model) => model.id)).toContain(
        'echo',
      );
      // Another tenant's budget is its own.
      expect((await chat(gateway.url, 'sk-plain')).choices[0].message.content).toContain('twenty');
    } finally {
      await gateway.close();
    }
  });

  it.skipIf(REDIS_URL === undefined)('with store: redis, counts one budget for every replica', async () => {
    const shared = {
      store: 'redis',
      redis: { url: REDIS_URL, keyPrefix: `gantry-test:${Date.now()}:${Math.random()}:` },
    };
    const replicas = await Promise.all([startGateway(tenants(shared, 300)), startGateway(tenants(shared, 300))]);
    try {
      // The replicas take turns until both refuse.
      let served = 0;
      let charged = 0;
      const refusedBy = new Set<number>();
      for (let turn = 0; refusedBy.size < 2 && turn < 40; turn += 1) {
        const answer = await chat(replicas[turn % 2].url, 'sk-metered').catch((error: unknown) => error);
        if (answer instanceof OpenAI.RateLimitError) {
          expect(answer.error).toMatchObject({ code: 'token_limit_exceeded' });
          refusedBy.add(turn % 2);
        } else {
          served += 1;
          charged += (answer as OpenAI.ChatCompletion).usage!.total_tokens;
        }
      }
      expect(refusedBy.size).toBe(2);
      // One budget of 300 for both (40 a request; the last ones cut to what was left), never past it.
      expect(served).toBeGreaterThanOrEqual(7);
      expect(charged).toBeLessThanOrEqual(300);
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
    }
  });
});
