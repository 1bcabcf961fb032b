import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startMockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { startCli, writeConfig } from './support/cli-process.js';
import { eventually, startGateway } from './support/gateway.js';
import { scrape } from './support/prometheus.js';

/** Tenants' token budgets over real gateways: reserved at admission, settled at the end. */

// .ci/run starts a redis-server and sets this; without it the Redis case is skipped.
const REDIS_URL = process.env.GANTRY_TEST_REDIS_URL;

const openaiFor = (url: string, key = 'sk-metered') => new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
/** A prompt of `count` five-letter words: the stub counts words, the gateway's estimate about a token per four characters. */
const prompt = (count: number) =>
  Array.from({ length: count }, (_, index) => `w${String(index).padStart(4, '0')}`).join(' ');

const meteredAuth = (limits: Record<string, number>, more: Record<string, unknown> = {}) => ({
  apiKeys: [{ name: 'metered', key: 'sk-metered', limits }],
  limits: more,
});

/** 16 concurrent answers of up to 40 tokens (40-word prompts, echoed), spread over `urls`: what was served and refused. */
async function burst(urls: string[]) {
  const outcomes = await Promise.all(
    Array.from({ length: 16 }, (_, index) =>
      openaiFor(urls[index % urls.length])
        .chat.completions.create({ model: 'echo', max_tokens: 40, messages: [{ role: 'user', content: prompt(40) }] })
        .catch((error: unknown) => error),
    ),
  );
  const served = outcomes.filter((outcome): outcome is OpenAI.ChatCompletion => !(outcome instanceof Error));
  const refused = outcomes.filter((outcome) => outcome instanceof OpenAI.RateLimitError);
  expect(served.length + refused.length).toBe(16);
  for (const error of refused) {
    expect(error.error).toMatchObject({ code: 'token_limit_exceeded' });
    expect(Number(error.headers.get('retry-after'))).toBeGreaterThan(0);
  }
  return { served: served.length, tokens: served.reduce((sum, answer) => sum + answer.usage!.total_tokens, 0) };
}

describe('token budgets reserved at admission', () => {
  // Each reserves its prompt's estimate (40 words of five letters: about 60) and its max_tokens (40): 4 fit in 400.
  const echo = { name: 'echo', engine: 'stub', tokenIntervalMs: 20 };

  it('holds tokensPerMinute under 16 concurrent streams: what is served fits the budget, the rest get 429', async () => {
    const gateway = await startGateway({
      responses: { store: 'off' },
      auth: meteredAuth({ tokensPerMinute: 400 }),
      models: [echo],
    });
    try {
      const { served, tokens } = await burst([gateway.url]);
      expect(served).toBe(4);
      expect(tokens).toBeLessThanOrEqual(400);
    } finally {
      await gateway.close();
    }
  });

  it.skipIf(REDIS_URL === undefined)('holds it across two replicas with store: redis', async () => {
    const limits = {
      store: 'redis',
      redis: { url: REDIS_URL, keyPrefix: `gantry-test:${Date.now()}:${Math.random()}:` },
    };
    const config = { responses: { store: 'off' }, auth: meteredAuth({ tokensPerMinute: 400 }, limits), models: [echo] };
    const replicas = await Promise.all([startGateway(config), startGateway(config)]);
    try {
      const { served, tokens } = await burst(replicas.map((replica) => replica.url));
      expect(served).toBe(4);
      expect(tokens).toBeLessThanOrEqual(400);
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
    }
  });

  it('holds it across the workers of one instance (the primary’s store)', async () => {
    const cli = startCli([
      '--config',
      writeConfig(`server: { workers: 2 }
responses: { store: 'off' }
auth:
  apiKeys:
    - { name: metered, key: sk-metered, limits: { tokensPerMinute: 400 } }
models:
  - { name: echo, engine: stub, tokenIntervalMs: 20 }
`),
      '--port',
      '0',
    ]);
    try {
      const url = await cli.listening;
      const { served, tokens } = await burst([url]);
      expect(served).toBe(4);
      expect(tokens).toBeLessThanOrEqual(400);
    } finally {
      cli.child.kill('SIGKILL');
    }
  }, 60_000);

  it('caps a request without max_tokens to what the budget leaves, and the engine stops there', async () => {
    const mock = await startMockUpstream({ behaviour: { tokens: 2_000 } });
    const gateway = await startGateway({
      responses: { store: 'off' },
      auth: meteredAuth({ tokensPerMinute: 300 }),
      models: [{ name: 'long', engine: 'http', upstreams: [mock.url] }],
    });
    try {
      const answer = await openaiFor(gateway.url).chat.completions.create({
        model: 'long',
        messages: [{ role: 'user', content: prompt(40) }],
      });
      expect(answer.choices[0].finish_reason).toBe('length');
      expect(answer.usage!.completion_tokens).toBeGreaterThan(200);
      expect(answer.usage!.completion_tokens).toBeLessThanOrEqual(300 - 40);
    } finally {
      await gateway.close();
      await mock.close();
    }
  });

  it('settles a hang-up at its prompt and what was produced, with an upstream that reports no usage as it streams', async () => {
    const mock = await startMockUpstream({ behaviour: { tokens: 1_000, tokenIntervalMs: 50 } });
    const gateway = await startGateway({
      responses: { store: 'off' },
      auth: meteredAuth({ tokensPerMinute: 3_000 }),
      models: [{ name: 'quiet-usage', engine: 'http', upstreams: [mock.url], continuousUsage: false }],
    });
    try {
      const client = openaiFor(gateway.url);
      const long = prompt(1_500);
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        { model: 'quiet-usage', stream: true, messages: [{ role: 'user', content: long }] },
        { signal: controller.signal },
      );
      let pieces = 0;
      try {
        for await (const chunk of stream) {
          if (chunk.choices[0]?.delta?.content) pieces += 1;
          if (pieces === 2) controller.abort();
        }
      } catch {
        // The abort ends the iteration.
      }
      // The gateway has ended it (and settled it) once its request is counted.
      expect(
        await eventually(async () =>
          (await scrape(gateway.url)).some(
            (sample) => sample.name === 'gantry_tenant_requests_total' && sample.labels.tenant === 'metered',
          ),
        ),
      ).toBe(true);
      // About 2,250 of the 3,000 are spent (the prompt estimated: the upstream counted none): the same prompt again does not fit.
      const again = await client.chat.completions
        .create({ model: 'quiet-usage', max_tokens: 5, messages: [{ role: 'user', content: long }] })
        .catch((error: unknown) => error);
      expect(again).toBeInstanceOf(OpenAI.RateLimitError);
      expect((again as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({
        code: 'token_limit_exceeded',
      });
    } finally {
      await gateway.close();
      await mock.close();
    }
  });
});
