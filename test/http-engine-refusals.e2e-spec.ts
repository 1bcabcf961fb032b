import { scrape, valueOf } from './support/prometheus.js';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import type { MockBehaviour } from '../apps/mock-upstream/mock-behaviour.js';
import { StoredResponses } from '../src/stored-responses/stored-responses.js';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse } from './support/sse-client.js';
import { ask, behaving, contentOf } from './support/one-upstream-gateway.js';

describe('a refusal before the upstream took the request on is the stream’s HTTP status', () => {
  let upstream: MockUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;
  const longPrompt = 'one two three four five six seven eight nine ten';

  beforeAll(async () => {
    upstream = await startMockUpstream();
    const model = (name: string, behaviour: Partial<MockBehaviour>) => ({
      name,
      engine: 'http',
      upstreams: [upstream.url],
      headers: behaving(behaviour),
      healthCheckIntervalMs: 0,
    });
    // No keep-alive is due before the upstream answers, however slow this machine: the refusal comes first.
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 60_000 },
      models: [
        model('short-context', { maxModelLen: 8 }),
        model('unprocessable', { failure: 'status', failureStatus: 422 }),
        { ...model('one-slot', { prefillMs: 10_000 }), maxConcurrency: 1 },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const streamed = (path: string, body: Record<string, unknown>) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
  const everyApi = (model: string, text: string) => [
    { path: '/v1/chat/completions', body: { model, messages: ask(text) } },
    { path: '/v1/responses', body: { model, input: text } },
    { path: '/v1/messages', body: { model, max_tokens: 20, messages: ask(text) } },
  ];

  it('the mock refuses a prompt over its context as vLLM does, and the gateway streams a short one', async () => {
    const refused = await fetch(`${upstream.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...behaving({ maxModelLen: 8 }) },
      body: JSON.stringify({ model: 'm', messages: ask(longPrompt), stream: true }),
    });
    expect(refused.status).toBe(400);
    expect((await readJson(refused)).error.message).toMatch(
      /^This model's maximum context length is 8 tokens\. However, your request has 10 input tokens\./,
    );
    const exchange = await postSse(`${gateway.url}/v1/chat/completions`, {
      model: 'short-context',
      messages: ask('a b c'),
      stream: true,
    });
    expect(exchange.status).toBe(200);
    expect(contentOf(exchange)).toBe('a b c');
  });

  it('a prompt over the upstream’s context: 400 and the protocol’s error body, on all three APIs', async () => {
    const [chat, responses, messages] = await Promise.all(
      everyApi('short-context', longPrompt).map(({ path, body }) => streamed(path, body)),
    );
    for (const response of [chat, responses, messages]) {
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    }
    const openaiError = {
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      param: 'messages',
      message: expect.stringContaining('10 tokens'),
    };
    expect((await readJson(chat)).error).toMatchObject(openaiError);
    expect((await readJson(responses)).error).toMatchObject(openaiError);
    expect(await readJson(messages)).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 10 tokens > 8 maximum' },
    });
    expect(await eventually(() => upstream.state.openRequests === 0, 1000)).toBe(true);
    // Metrics say what the client saw: refused with 400, not a stream that failed after a 200.
    const samples = await scrape(gateway.url);
    for (const api of ['chat', 'responses', 'messages']) {
      expect(
        valueOf(samples, 'gantry_requests_total', { model: 'short-context', api, outcome: 'rejected', status: '400' }),
        api,
      ).toBe(1);
      expect(valueOf(samples, 'gantry_requests_total', { model: 'short-context', api, outcome: 'failed' }), api).toBe(
        0,
      );
    }
  });

  it('another 4xx (422): 400 and the upstream’s message, on all three APIs', async () => {
    const answers = await Promise.all(everyApi('unprocessable', 'a b c').map(({ path, body }) => streamed(path, body)));
    expect(answers.map((response) => response.status)).toEqual([400, 400, 400]);
    const [chat, responses, messages] = await Promise.all(answers.map((response) => readJson(response)));
    const message = 'The upstream answered 422: The mock upstream was told to fail.';
    expect(chat.error).toMatchObject({ type: 'invalid_request_error', message });
    expect(responses.error).toMatchObject({ type: 'invalid_request_error', message });
    expect(messages).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message } });
  });

  it('the official SDKs raise BadRequestError (400) from create({stream: true})', async () => {
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: 'unused', maxRetries: 0 });
    const caught = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: unknown) => error,
      );
    for (const model of ['short-context', 'unprocessable']) {
      const prompt = model === 'short-context' ? longPrompt : 'a b c';
      const chat = await caught(client.chat.completions.create({ model, messages: ask(prompt), stream: true }));
      expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
      expect(chat).toMatchObject({ status: 400 });
      const responses = await caught(client.responses.create({ model, input: prompt, stream: true }));
      expect(responses).toBeInstanceOf(OpenAI.BadRequestError);
      expect(responses).toMatchObject({ status: 400 });
      const messages = await caught(
        anthropic.messages.create({ model, max_tokens: 20, messages: ask(prompt), stream: true }),
      );
      expect(messages).toBeInstanceOf(Anthropic.BadRequestError);
      expect(messages).toMatchObject({
        status: 400,
        error: { type: 'error', error: { type: 'invalid_request_error' } },
      });
    }
  });

  it('a client that hangs up while its head is held (queued, no keep-alive due yet) leaves the queue at once', async () => {
    const admission = gateway.registry.resolve('one-slot').admission;
    const post = (text: string, signal: AbortSignal) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'one-slot', messages: ask(text), stream: true }),
        signal,
      });
    const holder = new AbortController();
    // The upstream answers its headers at once: the holder's stream opens.
    expect((await post('hold', holder.signal)).status).toBe(200);
    const waiter = new AbortController();
    const waiting = post('wait', waiter.signal).catch((error: unknown) => error);
    expect(await eventually(() => admission.queued === 1)).toBe(true);
    waiter.abort();
    expect(await waiting).toMatchObject({ name: 'AbortError' });
    expect(await eventually(() => admission.queued === 0, 1000)).toBe(true);
    expect(admission.running).toBe(1);
    holder.abort();
    expect(await eventually(() => admission.running === 0 && upstream.state.openRequests === 0, 1000)).toBe(true);
  });

  it('a stored Responses stream it refuses keeps nothing; a background one, answered already, ends failed', async () => {
    const keep = vi.spyOn(gateway.app.get(StoredResponses), 'keep');
    const refused = await client.responses
      .create({ model: 'short-context', input: longPrompt, stream: true, store: true })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toMatchObject({ status: 400, error: { code: 'context_length_exceeded' } });
    expect(keep).not.toHaveBeenCalled();
    keep.mockRestore();

    const created = await client.responses.create({ model: 'short-context', input: longPrompt, background: true });
    expect(created.status).toBe('queued');
    let polled = await client.responses.retrieve(created.id);
    const deadline = Date.now() + 10_000;
    while (polled.status !== 'failed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      polled = await client.responses.retrieve(created.id);
    }
    expect(polled).toMatchObject({ status: 'failed', error: { code: 'context_length_exceeded' } });
  });
});
