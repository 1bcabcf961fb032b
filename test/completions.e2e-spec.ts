import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse, type SseExchange } from './support/sse-client.js';

const behaving = (behaviour: Record<string, unknown>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });
const textOf = (exchange: SseExchange) =>
  exchange
    .json()
    .map((chunk) => chunk.choices?.[0]?.text ?? '')
    .join('');
const isHeartbeat = (chunk: Record<string, any>) =>
  chunk.choices?.length === 1 && chunk.choices[0].text === '' && chunk.choices[0].finish_reason === null;

describe('completions on the stub', () => {
  let gateway: RunningGateway;
  let client: OpenAI;
  const url = () => `${gateway.url}/v1/completions`;

  beforeAll(async () => {
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 40 },
      models: [
        { name: 'stub', engine: 'stub' },
        { name: 'slow', engine: 'stub', prefillMs: 300, tokenIntervalMs: 60 },
        { name: 'chatter', engine: 'stub', apis: ['chat'] },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => gateway.close());

  it('answers a text_completion with the SDK, the stub echoing the prompt', async () => {
    const completion = await client.completions.create({ model: 'stub', prompt: 'def add(a, b):', max_tokens: 16 });
    expect(completion.object).toBe('text_completion');
    expect(completion.id).toMatch(/^cmpl-/);
    expect(completion.model).toBe('stub');
    expect(completion.choices).toEqual([{ index: 0, text: 'def add(a, b):', logprobs: null, finish_reason: 'stop' }]);
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
  });

  it('streams text_completion chunks with the SDK, usage when asked', async () => {
    const stream = await client.completions.create({
      model: 'stub',
      prompt: ['one two three'],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const ids = new Set<string>();
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three');
    expect(ids.size).toBe(1);
    expect(finish).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
  });

  it('sends empty-text keep-alive chunks during prefill, none after the first output; the SDK reads through them', async () => {
    const exchange = await postSse(url(), { model: 'slow', prompt: 'alpha beta gamma delta', stream: true });
    const chunks = exchange.json();
    const first = chunks.findIndex((chunk) => chunk.choices?.[0]?.text);
    expect(first).toBeGreaterThan(0);
    expect(chunks.slice(0, first).every(isHeartbeat)).toBe(true);
    expect(chunks.slice(first).filter(isHeartbeat)).toEqual([]);
    expect(chunks.every((chunk) => chunk.object === 'text_completion' && chunk.id === chunks[0].id)).toBe(true);
    expect(textOf(exchange)).toBe('alpha beta gamma delta');
    expect(exchange.frames.at(-1)).toMatchObject({ data: '[DONE]' });

    let text = '';
    for await (const chunk of await client.completions.create({ model: 'slow', prompt: 'through them', stream: true }))
      text += chunk.choices[0]?.text ?? '';
    expect(text).toBe('through them');
  });

  it('answers several prompts times n as choices in prompt order, each prompt counted once', async () => {
    const completion = await client.completions.create({ model: 'stub', prompt: ['one two', 'three'], n: 2 });
    expect(completion.choices.map(({ index, text, finish_reason }) => ({ index, text, finish_reason }))).toEqual([
      { index: 0, text: 'one two', finish_reason: 'stop' },
      { index: 1, text: 'one two', finish_reason: 'stop' },
      { index: 2, text: 'three', finish_reason: 'stop' },
      { index: 3, text: 'three', finish_reason: 'stop' },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 6, total_tokens: 9 });

    const texts: string[] = [];
    const finishes: Array<string | null> = [];
    let usage: OpenAI.CompletionUsage | undefined;
    const stream = await client.completions.create({
      model: 'slow',
      prompt: [[7, 8], [9]],
      n: 2,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        texts[choice.index] = (texts[choice.index] ?? '') + choice.text;
        if (choice.finish_reason !== null) finishes[choice.index] = choice.finish_reason;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(texts).toHaveLength(4);
    expect(finishes).toEqual(['stop', 'stop', 'stop', 'stop']);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('refuses what it cannot serve, and an API the model does not serve, with real statuses', async () => {
    await expect(client.completions.create({ model: 'stub', prompt: 'a', n: 129 })).rejects.toMatchObject({
      status: 400,
      param: 'n',
    });
    await expect(
      client.completions.create({ model: 'stub', prompt: Array.from({ length: 65 }, () => 'a'), n: 2 }),
    ).rejects.toMatchObject({ status: 400, param: 'prompt', message: expect.stringMatching(/at most 128/) });
    await expect(
      client.completions.create({ model: 'stub', prompt: ['a', [1, 2]] as unknown as string[], stream: true }),
    ).rejects.toMatchObject({ status: 400, param: 'prompt' });
    await expect(client.completions.create({ model: 'chatter', prompt: 'a', stream: true })).rejects.toMatchObject({
      status: 400,
      code: 'api_not_served',
    });
    await expect(client.completions.create({ model: 'nope', prompt: 'a' })).rejects.toMatchObject({ status: 404 });
  });
});

describe('completions on an upstream fleet', () => {
  let main: MockUpstream;
  let failing: MockUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    [main, failing] = await Promise.all([
      startMockUpstream({ servedModel: 'org/coder' }),
      startMockUpstream({ servedModel: 'org/coder', behaviour: { failure: 'status', failureStatus: 503 } }),
    ]);
    const upstream = { engine: 'http', upstreamModel: 'org/coder', healthCheckIntervalMs: 0, maxFailures: 100 };
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 40 },
      models: [
        { name: 'coder', ...upstream, upstreams: [failing.url, main.url] },
        { name: 'slow-coder', ...upstream, upstreams: [main.url], headers: behaving({ prefillMs: 60_000 }) },
        {
          name: 'refusing',
          ...upstream,
          upstreams: [main.url],
          headers: behaving({ failure: 'status', failureStatus: 400 }),
        },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([main.close(), failing.close()]);
  });

  it('passes prompt, suffix, echo, logprobs, sampling and unread fields on to /v1/completions', async () => {
    const completion = await client.completions.create({
      model: 'coder',
      prompt: 'def add(a, b):',
      suffix: '\n    return c',
      echo: false,
      logprobs: 2,
      max_tokens: 20,
      temperature: 0.2,
      seed: 7,
      stop: ['\n\n'],
      best_of: 1,
      // @ts-expect-error vLLM's own field, passed on unread
      min_tokens: 1,
    });
    expect(completion.model).toBe('coder');
    expect(completion.choices[0].text).toBe('def add(a, b):');
    const received = main.state.received.at(-1)!;
    expect(received.path).toBe('/v1/completions');
    expect(received.body).toMatchObject({
      model: 'org/coder',
      prompt: 'def add(a, b):',
      suffix: '\n    return c',
      echo: false,
      logprobs: 2,
      max_tokens: 20,
      temperature: 0.2,
      seed: 7,
      stop: ['\n\n'],
      best_of: 1,
      min_tokens: 1,
    });
    expect(received.body.messages).toBeUndefined();
  });

  it('streams, fails over before the first token, and reports usage', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      const stream = await client.completions.create({
        model: 'coder',
        prompt: [[1, 2, 3]],
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const chunk of stream) {
        text += chunk.choices[0]?.text ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe('Hello from the mock upstream');
      expect(usage?.completion_tokens).toBe(5);
    }
    expect(failing.state.received.some((request) => request.path === '/v1/completions')).toBe(true);
    expect(main.state.received.at(-1)!.body.prompt).toEqual([1, 2, 3]);
  });

  it('returns the upstream’s logprobs, streamed piece by piece and joined in one answer', async () => {
    const whole = await client.completions.create({ model: 'coder', prompt: 'a b c', logprobs: 1 });
    expect(whole.choices[0].logprobs).toEqual({
      tokens: ['a', ' b', ' c'],
      token_logprobs: [-0.1, -0.2, -0.3],
      top_logprobs: [{ a: -0.1 }, { ' b': -0.2 }, { ' c': -0.3 }],
      text_offset: [0, 1, 3],
    });
    const tokens: string[] = [];
    const offsets: number[] = [];
    for await (const chunk of await client.completions.create({
      model: 'coder',
      prompt: 'a b c',
      logprobs: 1,
      stream: true,
    })) {
      tokens.push(...(chunk.choices[0]?.logprobs?.tokens ?? []));
      offsets.push(...(chunk.choices[0]?.logprobs?.text_offset ?? []));
    }
    expect(tokens).toEqual(['a', ' b', ' c']);
    expect(offsets).toEqual([0, 1, 3]);
  });

  it('asks the fleet once per choice, seeds apart, and merges the answers', async () => {
    const before = main.state.received.length;
    const completion = await client.completions.create({ model: 'coder', prompt: 'x y', n: 3, seed: 10 });
    expect(completion.choices.map((choice) => choice.text)).toEqual(['x y', 'x y', 'x y']);
    const asked = main.state.received.slice(before).filter((request) => request.path === '/v1/completions');
    expect(asked.map((request) => request.body.seed as number).toSorted((a, b) => a - b)).toEqual([10, 11, 12]);
    expect(asked.every((request) => request.body.n === undefined && request.body.prompt === 'x y')).toBe(true);
  });

  it('answers an upstream’s refusal before output with its status, streaming or not', async () => {
    await expect(client.completions.create({ model: 'refusing', prompt: 'x', stream: true })).rejects.toMatchObject({
      status: 400,
    });
    const response = await fetch(`${gateway.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'refusing', prompt: 'x' }),
    });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error.type).toBe('invalid_request_error');
  });

  it('keeps a queued prefill alive and cancels the upstream when the client hangs up', async () => {
    const aborted = main.state.abortedRequests;
    const exchange = await postSse(
      `${gateway.url}/v1/completions`,
      { model: 'slow-coder', prompt: 'wait', stream: true },
      { onFrame: (_frame, frames) => frames.length >= 3 },
    );
    expect(exchange.status).toBe(200);
    expect(exchange.json().every(isHeartbeat)).toBe(true);
    expect(await eventually(() => main.state.abortedRequests === aborted + 1)).toBe(true);
  });
});
