import { plainToInstance } from 'class-transformer';
import OpenAI from 'openai';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { HttpModelConfig } from '../src/engines/http/http-model-config.js';
import { HttpEngine } from '../src/engines/http/http-engine.js';
import { eventually, readJson, type RunningGateway } from './support/gateway.js';
import { generationRequest } from './support/requests.js';
import { postSse } from './support/sse-client.js';
import { ask, behaving, contentOf, errorOf, useOneUpstreamGateway } from './support/one-upstream-gateway.js';

describe('one upstream per model', () => {
  let main: MockUpstream;
  let faults: MockUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;
  const chatUrl = () => `${gateway.url}/v1/chat/completions`;

  useOneUpstreamGateway((running) => ({ main, faults, gateway, client } = running));

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
