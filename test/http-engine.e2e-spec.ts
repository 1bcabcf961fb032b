import { scrape, valueOf } from './support/prometheus.js';
import { plainToInstance } from 'class-transformer';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import type { MockBehaviour } from '../apps/mock-upstream/mock-behaviour.js';
import { HttpModelConfig } from '../src/engines/http/http-model-config.js';
import { HttpEngine } from '../src/engines/http/http-engine.js';
import { StoredResponses } from '../src/stored-responses/stored-responses.js';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { generationRequest } from './support/requests.js';
import { postSse, type SseExchange } from './support/sse-client.js';

const ask = (text: string) => [{ role: 'user' as const, content: text }];
const NO_THINKING = { chat_template_kwargs: { enable_thinking: false } };
const behaving = (behaviour: Partial<MockBehaviour>) => ({ 'x-mock-behaviour': JSON.stringify(behaviour) });
const isHeartbeat = (chunk: Record<string, any>) =>
  chunk.choices?.length === 1 &&
  Object.keys(chunk.choices[0].delta).length === 0 &&
  chunk.choices[0].finish_reason === null;
const contentOf = (exchange: SseExchange) =>
  exchange
    .json()
    .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
    .join('');
const errorOf = (exchange: SseExchange) => exchange.json().find((chunk) => chunk.error)?.error;

/** Ports where nothing listens: a mock that was started and closed. */
async function refusingUrl(): Promise<string> {
  const mock = await startMockUpstream();
  await mock.close();
  return mock.url;
}

describe('one upstream per model', () => {
  let main: MockUpstream;
  let faults: MockUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;
  const chatUrl = () => `${gateway.url}/v1/chat/completions`;

  beforeAll(async () => {
    [main, faults] = await Promise.all([startMockUpstream({ servedModel: 'org/served-model' }), startMockUpstream()]);
    const [refused, ...down] = await Promise.all([refusingUrl(), refusingUrl(), refusingUrl(), refusingUrl()]);
    const upstream = { engine: 'http', upstreams: [main.url], upstreamModel: 'org/served-model' };
    const faulty = (name: string, behaviour: Partial<MockBehaviour>, extra: Record<string, unknown> = {}) => ({
      name,
      engine: 'http',
      upstreams: [faults.url],
      headers: behaving(behaviour),
      healthCheckIntervalMs: 0,
      maxFailures: 100,
      ...extra,
    });
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 100 },
      models: [
        { name: 'fast', ...upstream, apiKey: 'sk-upstream', headers: { 'x-team': 'gantry' } },
        { name: 'fast-streamed', ...upstream, nonStreaming: 'stream' },
        { name: 'thinker', ...upstream, headers: behaving({ reasoning: 'first think', reasoningField: 'reasoning' }) },
        {
          name: 'thinker-llama',
          ...upstream,
          headers: behaving({ reasoning: 'first think', reasoningField: 'reasoning_content' }),
        },
        {
          name: 'thinker-hinted',
          ...upstream,
          headers: behaving({ reasoning: 'first think' }),
          disableReasoningWith: NO_THINKING,
        },
        { name: 'timed', ...upstream, headers: behaving({ prefillMs: 300, tokenIntervalMs: 50 }) },
        { name: 'silent-prefill', ...upstream, headers: behaving({ prefillMs: 2000 }) },
        { name: 'refused', engine: 'http', upstreams: [refused], healthCheckIntervalMs: 0 },
        { name: 'all-down', engine: 'http', upstreams: down, healthCheckIntervalMs: 100 },
        faulty('error-500', { failure: 'status', failureStatus: 500 }),
        // Faults after output began, as a client sees them when the answer is not continued elsewhere.
        faulty('malformed', { failure: 'malformed', failAfterTokens: 2 }, { midStreamFailover: { enabled: false } }),
        faulty('dropped', { failure: 'drop', failAfterTokens: 2 }, { midStreamFailover: { enabled: false } }),
        faulty(
          'stalled',
          { failure: 'stall', failAfterTokens: 2 },
          { bodyTimeoutMs: 500, midStreamFailover: { enabled: false } },
        ),
        faulty('in-band-error', { failure: 'error', failureStatus: 400, failAfterTokens: 1 }),
        faulty('long-prefill', { prefillMs: 10_000 }),
        faulty('drip', { tokenIntervalMs: 200 }),
        faulty('slow-whole', { prefillMs: 1500 }, { headersTimeoutMs: 200, maxFailures: 1 }),
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([main?.close(), faults?.close()]);
  });

  describe('through Chat Completions with the openai SDK', () => {
    it('streams text with finish reason and the upstream usage, and answers non-streaming alike', async () => {
      const stream = await client.chat.completions.create({
        model: 'fast',
        messages: ask('one two three'),
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      const finishes: string[] = [];
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe('one two three');
      expect(finishes).toEqual(['stop']);
      expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });

      const completion = await client.chat.completions.create({ model: 'fast', messages: ask('four five') });
      expect(completion.choices[0]).toMatchObject({
        finish_reason: 'stop',
        message: { role: 'assistant', content: 'four five' },
      });
      expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 2 });
    });

    it('sends the upstream a request under its own model name, with the configured headers: streamed for a stream, JSON for a whole answer', async () => {
      const request = {
        model: 'fast',
        messages: ask('a b c'),
        max_tokens: 9,
        stop: ['zz'],
        temperature: 0.5,
        tools: [{ type: 'function' as const, function: { name: 'noop', parameters: { type: 'object' } } }],
      };
      const expected = {
        model: 'org/served-model',
        max_tokens: 9,
        stop: ['zz'],
        temperature: 0.5,
        tool_choice: 'auto',
        tools: [{ type: 'function', function: { name: 'noop', parameters: { type: 'object' } } }],
      };
      for await (const _chunk of await client.chat.completions.create({ ...request, stream: true }));
      const streamed = main.state.received.at(-1)!;
      expect(streamed.body).toMatchObject({
        ...expected,
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      });
      expect(streamed.headers).toMatchObject({
        authorization: 'Bearer sk-upstream',
        'x-team': 'gantry',
        accept: 'text/event-stream',
      });

      await client.chat.completions.create(request);
      const whole = main.state.received.at(-1)!;
      expect(whole.body).toMatchObject({ ...expected, stream: false });
      expect(whole.body).not.toHaveProperty('stream_options');
      expect(whole.headers).toMatchObject({ authorization: 'Bearer sk-upstream', accept: 'application/json' });

      // `nonStreaming: stream` streams from the upstream and collects at the gateway.
      const collected = await client.chat.completions.create({ ...request, model: 'fast-streamed', tools: undefined });
      expect(collected.choices[0].message.content).toBe('a b c');
      expect(main.state.received.at(-1)!.body).toMatchObject({ stream: true });
    });

    it('answers non-streaming requests from one JSON answer: reasoning, tool calls, usage, finish reasons', async () => {
      const thought = await client.chat.completions.create({ model: 'thinker', messages: ask('the answer') });
      expect(thought.choices[0].message).toMatchObject({ content: 'the answer', reasoning_content: 'first think' });
      expect(thought.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: expect.any(Number) });
      const called = await client.chat.completions.create({
        model: 'fast',
        messages: ask('{"city":"Paris"}'),
        tool_choice: 'required',
        tools: [{ type: 'function', function: { name: 'get_forecast', parameters: { type: 'object' } } }],
      });
      expect(called.choices[0].finish_reason).toBe('tool_calls');
      expect(called.choices[0].message.tool_calls?.[0]).toMatchObject({
        type: 'function',
        function: { name: 'get_forecast', arguments: '{"city":"Paris"}' },
      });
      const thinking = await new Anthropic({ baseURL: gateway.url, apiKey: 'unused', maxRetries: 0 }).messages.create({
        model: 'thinker-llama',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: ask('the answer'),
      });
      expect(thinking.content.map((block) => block.type)).toEqual(['thinking', 'text']);
      expect(main.state.received.at(-1)!.body).toMatchObject({ stream: false });
    });

    it('streams upstream reasoning from either field name as reasoning_content', async () => {
      for (const model of ['thinker', 'thinker-llama']) {
        const stream = await client.chat.completions.create({ model, messages: ask('the answer'), stream: true });
        let reasoning = '';
        let content = '';
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
          expect(content !== '' && Boolean(delta?.reasoning_content)).toBe(false);
          reasoning += delta?.reasoning_content ?? '';
          content += delta?.content ?? '';
        }
        expect({ model, reasoning, content }).toEqual({ model, reasoning: 'first think', content: 'the answer' });
      }
    });

    it('streams tool calls that the SDK helper assembles', async () => {
      const runner = client.chat.completions.stream({
        model: 'fast',
        messages: ask('{"city":"Paris","days":3}'),
        tools: [{ type: 'function', function: { name: 'get_forecast', parameters: { type: 'object' } } }],
        tool_choice: 'required',
      });
      const final = await runner.finalChatCompletion();
      const call = final.choices[0].message.tool_calls?.[0];
      expect(final.choices[0].finish_reason).toBe('tool_calls');
      expect(call?.type === 'function' && call.function.name).toBe('get_forecast');
      expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', days: 3 });
    });

    it('finishes with length at max_tokens and with stop at a stop string', async () => {
      const limited = await client.chat.completions.create({
        model: 'fast',
        messages: ask('a b c d e'),
        max_tokens: 2,
      });
      expect(limited.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'a b' } });
      const stopped = await client.chat.completions.create({
        model: 'fast',
        messages: ask('alpha beta END gamma'),
        stop: ['END'],
      });
      expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'alpha beta ' } });
    });
  });

  describe('through Anthropic Messages and OpenAI Responses with their SDKs', () => {
    const anthropic = () => new Anthropic({ baseURL: gateway.url, apiKey: 'unused', maxRetries: 0 });
    const tools = { name: 'get_forecast', input_schema: { type: 'object' as const } };

    it('Messages: text with usage, reasoning from either field as thinking, tool use, max_tokens and stop_sequence', async () => {
      const text = await anthropic()
        .messages.stream({ model: 'fast', max_tokens: 50, messages: ask('one two three') })
        .finalMessage();
      expect(text).toMatchObject({
        content: [{ type: 'text', text: 'one two three' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 3, output_tokens: 3 },
      });
      for (const model of ['thinker', 'thinker-llama']) {
        const thought = await anthropic()
          .messages.stream({
            model,
            max_tokens: 2000,
            thinking: { type: 'enabled', budget_tokens: 1024 },
            messages: ask('the answer'),
          })
          .finalMessage();
        expect(
          thought.content.map((block) =>
            block.type === 'thinking' ? block.thinking : block.type === 'text' ? block.text : block.type,
          ),
        ).toEqual(['first think', 'the answer']);
      }
      const called = await anthropic()
        .messages.stream({
          model: 'fast',
          max_tokens: 50,
          tools: [tools],
          tool_choice: { type: 'any' },
          messages: ask('{"city":"Oslo"}'),
        })
        .finalMessage();
      expect(called.stop_reason).toBe('tool_use');
      expect(called.content.find((block) => block.type === 'tool_use')).toMatchObject({
        name: 'get_forecast',
        input: { city: 'Oslo' },
      });
      const limited = await anthropic().messages.create({ model: 'fast', max_tokens: 2, messages: ask('a b c d') });
      expect(limited).toMatchObject({ stop_reason: 'max_tokens', content: [{ type: 'text', text: 'a b' }] });
      const stopped = await anthropic().messages.create({
        model: 'fast',
        max_tokens: 50,
        stop_sequences: ['END'],
        messages: ask('alpha END beta'),
      });
      expect(stopped).toMatchObject({
        stop_reason: 'stop_sequence',
        stop_sequence: 'END',
        content: [{ type: 'text', text: 'alpha ' }],
      });
    });

    it('Messages without thinking: no thinking shown, and the upstream told not to reason where the model is configured so', async () => {
      const sent = () => main.state.received.at(-1)!.body as Record<string, unknown>;
      const whole = await anthropic().messages.create({
        model: 'thinker',
        max_tokens: 50,
        messages: ask('the answer'),
      });
      expect(sent()).not.toHaveProperty('chat_template_kwargs');
      const streamed = await anthropic()
        .messages.stream({ model: 'thinker', max_tokens: 50, messages: ask('the answer') })
        .finalMessage();
      for (const message of [whole, streamed]) {
        expect(message.content).toEqual([{ type: 'text', text: 'the answer' }]);
        // The reasoning was generated: its tokens count as output, as Anthropic counts them.
        expect(message.usage.output_tokens).toBe(4);
      }

      const hinted = await anthropic()
        .messages.stream({ model: 'thinker-hinted', max_tokens: 50, messages: ask('the answer') })
        .finalMessage();
      expect(sent()).toMatchObject(NO_THINKING);
      expect(hinted).toMatchObject({ content: [{ type: 'text', text: 'the answer' }], usage: { output_tokens: 2 } });
      await anthropic().messages.create({
        model: 'thinker-hinted',
        max_tokens: 50,
        thinking: { type: 'disabled' },
        messages: ask('the answer'),
      });
      expect(sent()).toMatchObject(NO_THINKING);

      const asked = await anthropic().messages.create({
        model: 'thinker-hinted',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: ask('the answer'),
      });
      expect(sent()).not.toHaveProperty('chat_template_kwargs');
      expect(asked.content.map((block) => block.type)).toEqual(['thinking', 'text']);
      // Chat Completions shows reasoning unless told not to reason.
      await client.chat.completions.create({ model: 'thinker-hinted', messages: ask('the answer') });
      expect(sent()).not.toHaveProperty('chat_template_kwargs');
      const off = await client.chat.completions.create({
        model: 'thinker-hinted',
        reasoning_effort: 'none',
        messages: ask('the answer'),
      });
      expect(sent()).toMatchObject(NO_THINKING);
      expect(off.choices[0].message).toEqual(expect.not.objectContaining({ reasoning_content: expect.anything() }));
    });

    it('Responses: text with usage, reasoning from either field as a reasoning item, function calls, incomplete at max_output_tokens', async () => {
      const text = await client.responses.stream({ model: 'fast', input: 'one two three' }).finalResponse();
      expect(text.output_text).toBe('one two three');
      expect(text.usage).toMatchObject({ input_tokens: 3, output_tokens: 3 });
      for (const model of ['thinker', 'thinker-llama']) {
        const thought = await client.responses.stream({ model, input: 'the answer' }).finalResponse();
        expect(thought.output[0]).toMatchObject({
          type: 'reasoning',
          content: [{ type: 'reasoning_text', text: 'first think' }],
        });
        expect(thought.output_text).toBe('the answer');
      }
      const called = await client.responses
        .stream({
          model: 'fast',
          input: '{"city":"Oslo"}',
          tools: [{ type: 'function', name: 'get_forecast', parameters: { type: 'object' }, strict: false }],
          tool_choice: 'required',
        })
        .finalResponse();
      expect(called.output.find((item) => item.type === 'function_call')).toMatchObject({
        name: 'get_forecast',
        arguments: '{"city":"Oslo"}',
      });
      const limited = await client.responses.create({ model: 'fast', input: 'a b c d', max_output_tokens: 2 });
      expect(limited).toMatchObject({ status: 'incomplete', output_text: 'a b' });
    });
  });

  describe('timings and keep-alives on the wire', () => {
    it('measures timings at the gateway for timings_per_token, with continuous usage', async () => {
      const exchange = await postSse(chatUrl(), {
        model: 'timed',
        messages: ask('w1 w2 w3 w4'),
        stream: true,
        timings_per_token: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      });
      const chunks = exchange.json();
      const firstContent = chunks.findIndex((chunk) => chunk.choices[0]?.delta.content);
      expect(chunks.slice(0, firstContent).filter(isHeartbeat).length).toBeGreaterThanOrEqual(1);
      expect(chunks[firstContent].timings).toMatchObject({ prompt_n: 4, predicted_n: 1 });
      expect(chunks[firstContent].timings.prompt_ms).toBeGreaterThanOrEqual(250);
      const last = chunks.at(-1)!;
      expect(last.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
      expect(last.timings.predicted_n).toBe(4);
      expect(last.timings.predicted_ms).toBeGreaterThanOrEqual(100);
      expect(last.timings.predicted_per_second).toBeCloseTo((1000 / last.timings.predicted_ms) * 4, 6);
    });

    it('keeps the client stream alive while the upstream is silent through a 2 s prefill', async () => {
      const exchange = await postSse(chatUrl(), {
        model: 'silent-prefill',
        messages: ask('finally here'),
        stream: true,
      });
      const chunks = exchange.json();
      const firstContent = chunks.findIndex((chunk) => chunk.choices[0]?.delta.content);
      expect(chunks.slice(1, firstContent).filter(isHeartbeat).length).toBeGreaterThanOrEqual(5);
      expect(contentOf(exchange)).toBe('finally here');
      expect(exchange.frames.at(-1)).toMatchObject({ data: '[DONE]' });
    });
  });

  describe('upstream faults end in a client-visible error, never a hung stream', () => {
    const streamFailure = async (model: string) => {
      const exchange = await postSse(chatUrl(), { model, messages: ask('a b c d e'), stream: true });
      expect(exchange.frames.at(-1)).toMatchObject({ data: '[DONE]' });
      expect(await eventually(() => faults.state.openRequests === 0, 1000)).toBe(true);
      return { exchange, error: errorOf(exchange) };
    };

    // Before any upstream took the request on, a stream is refused with the status, as a whole answer is.
    const refusedStream = async (model: string) => {
      const response = await fetch(chatUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: ask('a b c d e'), stream: true }),
      });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await readJson(response);
      expect(await eventually(() => faults.state.openRequests === 0, 1000)).toBe(true);
      return { status: response.status, error: body.error };
    };

    it('connection refused', async () => {
      const { status, error } = await refusedStream('refused');
      expect(status).toBe(502);
      expect(error).toMatchObject({ type: 'upstream_error', message: 'The upstream refused the connection.' });
      const failure = await client.chat.completions
        .create({ model: 'refused', messages: ask('x') })
        .catch((caught: unknown) => caught);
      expect(failure).toMatchObject({ status: 502, message: expect.stringMatching(/refused the connection/) });
    });

    it('500 before the stream', async () => {
      const { status, error } = await refusedStream('error-500');
      expect(status).toBe(502);
      // A 5xx's text may quote anything (the prompt, the headers): the client learns the status only.
      expect(error).toMatchObject({
        type: 'upstream_error',
        message: 'The upstream answered 500 Internal Server Error.',
      });
    });

    it('malformed SSE', async () => {
      const { exchange, error } = await streamFailure('malformed');
      expect(contentOf(exchange)).toBe('a b');
      expect(error).toMatchObject({ type: 'upstream_error', message: expect.stringMatching(/malformed stream event/) });
    });

    it('a connection dropped mid-stream', async () => {
      const { exchange, error } = await streamFailure('dropped');
      expect(contentOf(exchange)).toBe('a b');
      expect(error).toMatchObject({
        type: 'upstream_error',
        message: expect.stringMatching(/closed the connection before the answer was complete/),
      });
    });

    it('a stall past the configured body timeout', async () => {
      const started = performance.now();
      const { exchange, error } = await streamFailure('stalled');
      expect(performance.now() - started).toBeGreaterThanOrEqual(450);
      expect(contentOf(exchange)).toBe('a b');
      expect(error).toMatchObject({ type: 'timeout_error', message: 'The upstream sent nothing for 500 ms.' });
    });

    it('non-streaming requests get the same faults as HTTP errors in the protocol shape', async () => {
      const failureOf = (model: string) =>
        client.chat.completions.create({ model, messages: ask('a b c d e') }).catch((caught: unknown) => caught);
      expect(await failureOf('error-500')).toMatchObject({
        status: 502,
        message: expect.stringMatching(/The upstream answered 500/),
      });
      expect(await failureOf('malformed')).toMatchObject({
        status: 502,
        message: expect.stringMatching(/malformed JSON answer/),
      });
      expect(await failureOf('dropped')).toMatchObject({
        status: 502,
        message: expect.stringMatching(/closed the connection/),
      });
      expect(await failureOf('in-band-error')).toMatchObject({
        status: 400,
        message: expect.stringMatching(/The upstream answered 400: The mock upstream/),
      });
      expect(await eventually(() => faults.state.openRequests === 0, 1000)).toBe(true);
    });

    it('a whole answer slower than headersTimeoutMs: a timeout for the client, not a fault of the replica', async () => {
      const failureOf = () =>
        client.chat.completions
          .create({ model: 'slow-whole', messages: ask('a b') })
          .catch((caught: unknown) => caught);
      // maxFailures is 1: were a long generation counted against the replica, the second request would find it ejected (503).
      for (let attempt = 0; attempt < 2; attempt += 1) {
        expect(await failureOf()).toMatchObject({
          status: 504,
          message: expect.stringMatching(/did not finish the answer within 200 ms/),
        });
      }
      const engine = gateway.registry.resolve('slow-whole').engine as HttpEngine;
      expect(engine.replicaStates()[0]).toMatchObject({ consecutiveFailures: 0 });
    });

    it('an error frame from the upstream mid-stream, with its kind', async () => {
      const { exchange, error } = await streamFailure('in-band-error');
      expect(contentOf(exchange)).toBe('a');
      expect(error).toMatchObject({ type: 'invalid_request_error', message: 'The mock upstream failed mid-stream.' });
    });

    it('every replica down: 503 and a message that says so, and /ready reports it (ready while other models serve)', async () => {
      const engine = gateway.registry.resolve('all-down').engine as HttpEngine;
      expect(await eventually(() => !engine.isReady(), 2000)).toBe(true);
      const { status, error } = await refusedStream('all-down');
      expect(status).toBe(503);
      expect(error).toMatchObject({
        type: 'server_error',
        message: expect.stringMatching(/^All 3 replicas of model 'all-down' are down/),
      });
      const failure = await client.chat.completions
        .create({ model: 'all-down', messages: ask('x') })
        .catch((caught: unknown) => caught);
      expect(failure).toBeInstanceOf(OpenAI.InternalServerError);
      expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(503);

      const ready = await fetch(`${gateway.url}/ready`);
      expect(ready.status).toBe(200);
      const body = await readJson(ready);
      expect(body.status).toBe('ready');
      expect(body.models['all-down']).toMatchObject({ ready: false });
      expect(body.models['all-down'].replicas).toHaveLength(3);
      expect(body.models['all-down'].replicas[0]).toMatchObject({
        healthy: false,
        healthCheck: 'failing',
        outstanding: 0,
      });
      expect(body.models.fast).toMatchObject({ engine: 'http', ready: true });
    });
  });

  describe('client hang-ups close the upstream request', () => {
    it('during prefill', async () => {
      await postSse(
        chatUrl(),
        { model: 'long-prefill', messages: ask('never answered'), stream: true },
        {
          onFrame: (_frame, frames) => frames.length >= 2 && faults.state.openRequests === 1,
        },
      );
      // The upstream prefill alone lasts 10 s: only the gateway's abort closes it this soon.
      expect(await eventually(() => faults.state.openRequests === 0, 500)).toBe(true);
    });

    it('during decoding', async () => {
      const words = Array.from({ length: 50 }, (_, index) => `w${index + 1}`).join(' ');
      const before = faults.state.abortedRequests;
      const exchange = await postSse(
        chatUrl(),
        { model: 'drip', messages: ask(words), stream: true },
        {
          onFrame: (frame) => frame.kind === 'event' && frame.data.includes('"content":" w2"'),
        },
      );
      expect(contentOf(exchange)).toBe('w1 w2');
      expect(await eventually(() => faults.state.openRequests === 0, 500)).toBe(true);
      expect(faults.state.abortedRequests).toBe(before + 1);
    });

    it('a non-streaming request, asked of the upstream as one JSON answer', async () => {
      const hangUp = new AbortController();
      const failure = client.chat.completions
        .create({ model: 'long-prefill', messages: ask('never answered') }, { signal: hangUp.signal })
        .catch((caught: unknown) => caught);
      expect(await eventually(() => faults.state.openRequests === 1, 1000)).toBe(true);
      expect(faults.state.received.at(-1)!.body).toMatchObject({ stream: false });
      hangUp.abort();
      expect(await failure).toBeInstanceOf(OpenAI.APIUserAbortError);
      expect(await eventually(() => faults.state.openRequests === 0, 500)).toBe(true);
    });

    it('unsubscribing from the engine closes the upstream socket within 100 ms', async () => {
      const engine = gateway.registry.resolve('long-prefill').engine;
      const subscription = engine
        .generate(generationRequest({ model: 'long-prefill' }))
        .subscribe({ error: () => undefined });
      expect(await eventually(() => faults.state.openRequests === 1)).toBe(true);
      subscription.unsubscribe();
      expect(await eventually(() => faults.state.openRequests === 0, 100)).toBe(true);
    });
  });

  describe('the engine and the mock themselves', () => {
    it('stops its health checks when closed', async () => {
      const config = { name: 'probe', engine: 'http', upstreams: [faults.url], healthCheckIntervalMs: 20 };
      const engine = new HttpEngine(plainToInstance(HttpModelConfig, config, { exposeDefaultValues: true }));
      const before = faults.state.healthChecks;
      expect(await eventually(() => faults.state.healthChecks >= before + 2)).toBe(true);
      await engine.close();
      const after = faults.state.healthChecks;
      // Five intervals of quiet; a check already on the wire at close may still land.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(faults.state.healthChecks).toBeLessThanOrEqual(after + 1);
    });

    it('reasoning the client is not shown leaves its counters as acks, before the answer’s first text', async () => {
      const config = {
        name: 'hidden',
        engine: 'http',
        upstreams: [main.url],
        upstreamModel: 'org/served-model',
        healthCheckIntervalMs: 0,
        headers: behaving({ reasoning: 'first think' }),
      };
      const engine = new HttpEngine(plainToInstance(HttpModelConfig, config, { exposeDefaultValues: true }));
      try {
        const events = await lastValueFrom(
          engine
            .generate(generationRequest({ model: 'hidden', stream: true, reasoningOutput: 'hide' }))
            .pipe(toArray()),
        );
        expect(events.some((event) => event.type === 'reasoning')).toBe(false);
        const firstText = events.findIndex((event) => event.type === 'text');
        const acks = events.slice(0, firstText).filter((event) => event.type === 'ack');
        expect(acks.at(-1)).toMatchObject({ type: 'ack', usage: { reasoningTokens: 2, completionTokens: 2 } });
      } finally {
        await engine.close();
      }
    });

    it('the mock serves models, metrics, health and non-streaming answers as vLLM does', async () => {
      const models = await readJson(await fetch(`${main.url}/models`));
      expect(models.data[0]).toMatchObject({ id: 'org/served-model', object: 'model', owned_by: 'vllm' });

      const hangUp = new AbortController();
      const waiting = await fetch(`${faults.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...behaving({ prefillMs: 10_000 }) },
        body: JSON.stringify({ model: 'm', messages: ask('x'), stream: true }),
        signal: hangUp.signal,
      });
      expect(waiting.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(faults.state.waitingRequests).toBe(1);
      const metrics = await (await fetch(faults.url.replace(/\/v1$/, '/metrics'))).text();
      expect(metrics).toContain('vllm:num_requests_waiting{model_name="mock-model"} 1.0');
      expect(metrics).toContain('vllm:num_requests_running{model_name="mock-model"} 0.0');
      hangUp.abort();
      expect(await eventually(() => faults.state.openRequests === 0)).toBe(true);

      faults.setBehaviour({ unhealthy: true });
      expect((await fetch(faults.url.replace(/\/v1$/, '/health'))).status).toBe(503);
      faults.resetBehaviour();

      const response = await fetch(`${main.url}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...behaving({ reasoning: 'hm', reasoningField: 'reasoning_content' }),
        },
        body: JSON.stringify({ model: 'org/served-model', messages: ask('plain answer') }),
      });
      expect(await readJson(response)).toMatchObject({
        object: 'chat.completion',
        choices: [{ message: { content: 'plain answer', reasoning_content: 'hm' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 2, completion_tokens: 3 },
      });
    });
  });
});

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

describe('a fleet of three replicas behind one model', () => {
  let replicas: MockUpstream[];
  let gateway: RunningGateway;
  let client: OpenAI;
  const engine = (model = 'fleet') => gateway.registry.resolve(model).engine as HttpEngine;
  const served = () => replicas.map((replica) => replica.state.chatRequests);

  beforeAll(async () => {
    replicas = await Promise.all([0, 1, 2].map(() => startMockUpstream()));
    const fleet = {
      engine: 'http',
      upstreams: replicas.map((replica) => replica.url),
      healthCheckIntervalMs: 100,
      maxFailures: 1,
      ejectionBaseMs: 300,
      ejectionMaxMs: 1000,
    };
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 100 },
      models: [
        { name: 'fleet', ...fleet },
        { name: 'fleet-slow', ...fleet, headers: behaving({ prefillMs: 10_000 }) },
        {
          name: 'fleet-drop',
          ...fleet,
          headers: behaving({ failure: 'drop', failAfterTokens: 1 }),
          midStreamFailover: { enabled: false },
        },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all(replicas.map((replica) => replica.close()));
  });

  it('reports each replica on /ready', async () => {
    const response = await fetch(`${gateway.url}/ready`);
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body.status).toBe('ready');
    expect(body.models.fleet.replicas).toEqual(
      replicas.map((replica) => ({
        url: replica.url,
        healthy: true,
        outstanding: 0,
        consecutiveFailures: 0,
        healthCheck: 'passing',
      })),
    );
  });

  it('spreads concurrent requests by outstanding count', async () => {
    const release = { now: false };
    const streams = Array.from({ length: 6 }, () =>
      postSse(
        `${gateway.url}/v1/chat/completions`,
        { model: 'fleet-slow', messages: ask('wait'), stream: true },
        { onFrame: () => release.now },
      ),
    );
    expect(await eventually(() => replicas.every((replica) => replica.state.openRequests === 2), 2000)).toBe(true);
    expect(
      engine('fleet-slow')
        .replicaStates()
        .map((state) => state.outstanding),
    ).toEqual([2, 2, 2]);
    release.now = true;
    await Promise.all(streams);
    expect(await eventually(() => replicas.every((replica) => replica.state.openRequests === 0), 1000)).toBe(true);
    expect(
      engine('fleet-slow')
        .replicaStates()
        .map((state) => state.outstanding),
    ).toEqual([0, 0, 0]);
  });

  it('sends new requests away from a replica that still holds outstanding ones', async () => {
    const [slow] = replicas;
    slow.setBehaviour({ prefillMs: 10_000 });
    const release = { now: false };
    const held: Array<Promise<SseExchange>> = [];
    try {
      // Equally loaded replicas take turns: within three requests one lands on the slow replica.
      for (let attempt = 0; attempt < 3 && slow.state.openRequests === 0; attempt += 1) {
        const exchange = postSse(
          `${gateway.url}/v1/chat/completions`,
          { model: 'fleet', messages: ask('hold'), stream: true },
          {
            onFrame: () => release.now,
          },
        );
        held.push(exchange);
        await Promise.race([exchange, eventually(() => slow.state.openRequests === 1, 1000)]);
      }
      expect(slow.state.openRequests).toBe(1);
      const slowServed = slow.state.chatRequests;
      for (let round = 0; round < 6; round += 1)
        await client.chat.completions.create({ model: 'fleet', messages: ask('quick') });
      expect(slow.state.chatRequests).toBe(slowServed);
    } finally {
      slow.resetBehaviour();
      release.now = true;
      await Promise.all(held);
    }
    expect(await eventually(() => slow.state.openRequests === 0, 1000)).toBe(true);
  });

  it('ejects a killed replica, moves its traffic without client errors, and takes it back once it recovers', async () => {
    const [, killed] = replicas;
    await killed.refuseConnections();
    const before = served();
    for (let round = 0; round < 6; round += 1) {
      const completion = await client.chat.completions.create({ model: 'fleet', messages: ask(`round ${round}`) });
      expect(completion.choices[0].message.content).toBe(`round ${round}`);
    }
    const during = served();
    expect(during[1]).toBe(before[1]);
    expect(during[0] - before[0] + during[2] - before[2]).toBe(6);
    expect(engine().replicaStates()[1].healthy).toBe(false);
    expect(engine().isReady()).toBe(true);

    await killed.acceptConnections();
    expect(await eventually(() => engine().replicaStates()[1].healthy, 3000)).toBe(true);
    for (let round = 0; round < 6; round += 1)
      await client.chat.completions.create({ model: 'fleet', messages: ask('back') });
    expect(served()[1]).toBeGreaterThanOrEqual(during[1] + 1);
  });

  it('does not retry once the engine emitted output: with mid-stream failover off, a mid-stream drop reaches the client', async () => {
    const before = served().reduce((sum, count) => sum + count, 0);
    const exchange = await postSse(`${gateway.url}/v1/chat/completions`, {
      model: 'fleet-drop',
      messages: ask('x y z'),
      stream: true,
    });
    expect(contentOf(exchange)).toBe('x');
    expect(errorOf(exchange)).toMatchObject({ type: 'upstream_error' });
    expect(served().reduce((sum, count) => sum + count, 0)).toBe(before + 1);
  });
});
