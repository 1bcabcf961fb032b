import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogs } from './support/log-capture.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse } from './support/sse-client.js';

// A file of its own: nestjs-pino keeps one root logger per process, made by the first gateway.
const ask = (text: string) => [{ role: 'user' as const, content: text }];

describe('request logs', () => {
  const { destination, raw, lines } = captureLogs();
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway(
      {
        keepalive: { mode: 'chunks', intervalMs: 100 },
        observability: { logging: { level: 'info' } },
        models: [
          { name: 'stub', engine: 'stub' },
          { name: 'slow', engine: 'stub', prefillMs: 2000 },
          { name: 'full', engine: 'stub', prefillMs: 10_000, maxConcurrency: 1, maxQueue: 0 },
        ],
      },
      { observability: { logDestination: destination } },
    );
  });
  afterAll(() => gateway?.close());

  it('labels embeddings and completions by API, with no input or prompt text', async () => {
    const send = (path: string, body: unknown, requestId: string) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify(body),
      }).then((response) => response.json());
    await send('/v1/embeddings', { model: 'stub', input: 'TOP-SECRET-EMBEDDING three words' }, 'req-embed');
    await send('/v1/completions', { model: 'stub', prompt: 'TOP-SECRET-COMPLETION two' }, 'req-complete');
    expect(await eventually(() => lines.some((line) => line.requestId === 'req-complete'))).toBe(true);
    expect(lines.find((line) => line.requestId === 'req-embed')).toMatchObject({
      api: 'embeddings',
      model: 'stub',
      status: 200,
      outcome: 'completed',
      promptTokens: 3,
      completionTokens: 0,
    });
    expect(lines.find((line) => line.requestId === 'req-complete')).toMatchObject({
      api: 'completions',
      status: 200,
      outcome: 'completed',
      completionTokens: 2,
    });
    expect(raw.join('\n')).not.toMatch(/TOP-SECRET/);
  });

  it('writes one line per request with its fields, and no prompt, output or key', async () => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-very-secret-key',
        'x-request-id': 'req-42',
      },
      body: JSON.stringify({ model: 'stub', messages: ask('TOP-SECRET-PROMPT words') }),
    });
    expect(response.headers.get('x-request-id')).toBe('req-42');
    await response.json();
    expect(await eventually(() => lines.some((line) => line.requestId === 'req-42'))).toBe(true);
    const line = lines.find((candidate) => candidate.requestId === 'req-42')!;
    expect(line).toMatchObject({
      level: 30,
      api: 'chat',
      model: 'stub',
      status: 200,
      outcome: 'completed',
      promptTokens: 2,
      completionTokens: 2,
      finishReason: 'stop',
      msg: 'request completed',
      context: 'Request',
    });
    expect(line.ttftMs).toEqual(expect.any(Number));
    expect(line.durationMs).toEqual(expect.any(Number));
    expect(lines.filter((candidate) => candidate.requestId === 'req-42')).toHaveLength(1);
    expect(raw.join('\n')).not.toMatch(/TOP-SECRET|sk-very-secret-key/);
  });

  it('logs a client hang-up as such, at info level, with a generated request id returned to the client', async () => {
    let returnedId: string | null = null;
    const exchange = await postSse(
      `${gateway.url}/v1/chat/completions`,
      { model: 'slow', stream: true, messages: ask('x') },
      { onFrame: () => true },
    );
    returnedId = exchange.headers.get('x-request-id');
    expect(returnedId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await eventually(() => lines.some((line) => line.requestId === returnedId))).toBe(true);
    expect(lines.find((line) => line.requestId === returnedId)).toMatchObject({
      level: 30,
      outcome: 'client_closed',
      phase: 'prefill',
      status: 499,
    });
  });

  it('names the model and `stream` of a request refused before its stream opened, from its body', async () => {
    const post = (path: string, body: unknown, requestId: string) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify(body),
      });
    const lineOf = async (requestId: string) => {
      expect(await eventually(() => lines.some((line) => line.requestId === requestId))).toBe(true);
      return lines.find((line) => line.requestId === requestId)!;
    };

    expect(
      (
        await post(
          '/v1/chat/completions',
          { model: 'stub', stream: true, temperature: 7, messages: ask('x') },
          'refused-400',
        )
      ).status,
    ).toBe(400);
    expect(await lineOf('refused-400')).toMatchObject({
      api: 'chat',
      model: 'stub',
      stream: true,
      status: 400,
      outcome: 'rejected',
    });

    expect(
      (await post('/v1/messages', { model: 'nope', max_tokens: 5, messages: ask('x') }, 'refused-404')).status,
    ).toBe(404);
    expect(await lineOf('refused-404')).toMatchObject({
      api: 'messages',
      model: 'nope',
      stream: false,
      status: 404,
      outcome: 'rejected',
    });

    const release = { now: false };
    const holder = postSse(
      `${gateway.url}/v1/chat/completions`,
      { model: 'full', stream: true, messages: ask('hold') },
      { onFrame: () => release.now },
    );
    expect(await eventually(() => gateway.registry.resolve('full').admission.running === 1)).toBe(true);
    expect(
      (await post('/v1/messages', { model: 'full', stream: true, max_tokens: 5, messages: ask('x') }, 'refused-529'))
        .status,
    ).toBe(529);
    expect(await lineOf('refused-529')).toMatchObject({
      api: 'messages',
      model: 'full',
      engine: 'stub',
      stream: true,
      status: 529,
      outcome: 'rejected',
    });
    release.now = true;
    await holder;

    // Fields of the wrong type name nothing.
    expect(
      (await post('/v1/chat/completions', { model: 42, stream: 'yes', messages: ask('x') }, 'refused-types')).status,
    ).toBe(400);
    const mistyped = await lineOf('refused-types');
    expect(mistyped).toMatchObject({ status: 400, outcome: 'rejected', stream: false });
    expect(mistyped.model).toBeUndefined();
  });
});
