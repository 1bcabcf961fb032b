import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StubEngine } from '../src/engines/stub/stub-engine.js';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse, type WireFrame } from './support/sse-client.js';
import { ask, isHeartbeat, useStubChatGateway } from './support/stub-chat-gateway.js';

let gateway: RunningGateway;
let client: OpenAI;

useStubChatGateway((running) => ({ gateway, client } = running));

const chatUrl = () => `${gateway.url}/v1/chat/completions`;
const stubOf = (name: string) => gateway.registry.resolve(name).engine as StubEngine;

describe('client hang-ups cancel the engine work', () => {
  it('during prefill: the stub clears its timers', async () => {
    const engine = stubOf('long');
    await postSse(
      chatUrl(),
      { model: 'long', messages: ask('never seen'), stream: true },
      {
        onFrame: (_frame, frames) => frames.length >= 3,
      },
    );
    // The prefill alone lasts 10 s: only a cancellation empties the engine this soon.
    expect(await eventually(() => engine.activeGenerations === 0 && engine.pendingTimers === 0, 1000)).toBe(true);
  });

  it('during decoding: no more tokens are produced', async () => {
    const engine = stubOf('drip');
    const words = Array.from({ length: 50 }, (_, index) => `w${index + 1}`).join(' ');
    const exchange = await postSse(
      chatUrl(),
      { model: 'drip', messages: ask(words), stream: true },
      {
        onFrame: (frame) => frame.kind === 'event' && frame.data.includes('"content":"w1"'),
      },
    );
    expect(exchange.json().at(-1)!.choices[0].delta.content).toBe('w1');
    // 50 tokens at 200 ms would take 10 s: the engine is empty this soon only if it was cancelled.
    expect(await eventually(() => engine.activeGenerations === 0 && engine.pendingTimers === 0, 1000)).toBe(true);
  });

  it('while queued: the request leaves the queue at once and the running one keeps its slot', async () => {
    const model = gateway.registry.resolve('single');
    let queuedWasAborted = false;
    const holder = postSse(
      chatUrl(),
      { model: 'single', messages: ask('holder'), stream: true },
      {
        onFrame: () => model.admission.queued === 0 && model.admission.running === 1 && queuedWasAborted,
      },
    );
    await eventually(() => model.admission.running === 1);
    const queued = await postSse(
      chatUrl(),
      { model: 'single', messages: ask('waiter'), stream: true },
      {
        onFrame: (_frame, frames) => frames.length >= 2 && model.admission.queued === 1,
      },
    );
    expect(queued.json()[0].choices[0].delta.role).toBe('assistant');
    expect(await eventually(() => model.admission.queued === 0)).toBe(true);
    expect(model.admission.running).toBe(1);
    queuedWasAborted = true;
    await holder;
    expect(await eventually(() => model.admission.running === 0 && stubOf('single').pendingTimers === 0)).toBe(true);
  });

  it('refuses a request with 429 and Retry-After when the queue is full', async () => {
    const model = gateway.registry.resolve('single');
    const hangUp = { now: false };
    const holders = [0, 1].map(() =>
      postSse(chatUrl(), { model: 'single', messages: ask('hold'), stream: true }, { onFrame: () => hangUp.now }),
    );
    expect(await eventually(() => model.admission.running === 1 && model.admission.queued === 1)).toBe(true);
    const response = await fetch(chatUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'single', messages: ask('refused'), stream: true }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await readJson(response)).toMatchObject({ error: { type: 'rate_limit_error', code: 'queue_full' } });
    hangUp.now = true;
    await Promise.all(holders);
    expect(await eventually(() => model.admission.running === 0 && model.admission.queued === 0)).toBe(true);
  });
});

describe('a stream waiting in the queue', () => {
  it('hears its opening frame, then its first heartbeat, while still queued, on all three APIs', async () => {
    const admission = gateway.registry.resolve('one-slot').admission;
    let release = false;
    const holder = postSse(
      chatUrl(),
      { model: 'one-slot', messages: ask('hold the slot'), stream: true },
      { onFrame: () => release },
    );
    expect(await eventually(() => admission.running === 1)).toBe(true);
    const queuedAtFirstBeat: number[] = [];
    const waitForFirstBeat = (isHeartbeat: (frame: WireFrame) => boolean) => (frame: WireFrame) => {
      if (!isHeartbeat(frame)) return false;
      queuedAtFirstBeat.push(admission.queued);
      return true;
    };
    const data = (frame: WireFrame) => (frame.kind === 'event' ? JSON.parse(frame.data) : {});
    const chat = await postSse(
      chatUrl(),
      { model: 'one-slot', messages: ask('waiting'), stream: true },
      { onFrame: waitForFirstBeat((frame) => isHeartbeat(data(frame))) },
    );
    const messages = await postSse(
      `${gateway.url}/v1/messages`,
      { model: 'one-slot', max_tokens: 10, messages: ask('waiting'), stream: true },
      {
        onFrame: waitForFirstBeat((frame) => frame.kind === 'event' && frame.event === 'ping'),
      },
    );
    const responses = await postSse(
      `${gateway.url}/v1/responses`,
      { model: 'one-slot', input: 'waiting', stream: true },
      {
        onFrame: waitForFirstBeat(
          (frame) =>
            frame.kind === 'event' && frame.event === 'response.in_progress' && data(frame).sequence_number === 2,
        ),
      },
    );
    release = true;
    await holder;

    expect([chat.status, messages.status, responses.status]).toEqual([200, 200, 200]);
    expect(queuedAtFirstBeat).toEqual([1, 1, 1]);
    expect(
      chat
        .json()
        .map((chunk) =>
          chunk.choices[0].delta.role === 'assistant' ? 'role' : isHeartbeat(chunk) ? 'heartbeat' : 'other',
        ),
    ).toEqual(['role', 'heartbeat']);
    expect(messages.frames.map((frame) => (frame.kind === 'event' ? frame.event : frame.kind))).toEqual([
      'message_start',
      'ping',
    ]);
    expect(responses.frames.map((frame) => (frame.kind === 'event' ? frame.event : frame.kind))).toEqual([
      'response.created',
      'response.in_progress',
      'response.in_progress',
    ]);
    expect(await eventually(() => admission.running === 0 && admission.queued === 0)).toBe(true);
  });
});

describe('errors before the stream opens', () => {
  const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(chatUrl(), { method: 'POST', headers, body });

  it('answers malformed JSON with 400 in OpenAI shape', async () => {
    const response = await post('{"model": "stub", "messages": [');
    expect(response.status).toBe(400);
    const body = await readJson(response);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: null, code: null });
    expect(body.error.message).toMatch(/JSON/);
  });

  it('answers failed validation with 400 naming the field, through the SDK too', async () => {
    const response = await post(JSON.stringify({ model: 'stub', messages: [{ role: 'user', content: 42 }] }));
    expect(response.status).toBe(400);
    expect((await readJson(response)).error).toMatchObject({
      param: 'messages[0].content',
      message: expect.stringMatching(/^messages\[0\]\.content /),
    });

    const failure = await client.chat.completions
      .create({ model: 'stub', messages: ask('x'), temperature: 7 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failure as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');
  });

  it('answers an unknown model with 404 model_not_found, an invalid_request_error as OpenAI has it', async () => {
    const failure = await client.chat.completions
      .create({ model: 'gpt-9', messages: ask('x') })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
    expect((failure as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
    expect((failure as InstanceType<typeof OpenAI.NotFoundError>).type).toBe('invalid_request_error');
  });

  it('answers a body over the limit with 413', async () => {
    const response = await post(JSON.stringify({ model: 'stub', messages: ask('x'.repeat(100 * 1024)) }));
    expect(response.status).toBe(413);
    expect((await readJson(response)).error.message).toMatch(/larger than/);
  });

  it('answers an unknown path with 404 and a wrong method with 405', async () => {
    const unknown = await fetch(`${gateway.url}/v1/nowhere`);
    expect(unknown.status).toBe(404);
    expect((await readJson(unknown)).error.type).toBe('invalid_request_error');
    const wrongMethod = await fetch(chatUrl());
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
  });

  it('answers a body that is not JSON with 415', async () => {
    const response = await post('hello', { 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    expect((await readJson(response)).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringMatching(/must be JSON/),
    });
  });

  it('answers a missing or non-JSON body with 400, never a 500', async () => {
    for (const response of [
      await post('', {}),
      await post('hello', { 'content-type': 'text/plain' }),
      await post('[]'),
      await post('null'),
    ]) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect((await readJson(response)).error.message).toEqual(expect.any(String));
    }
  });

  it('serves /health', async () => {
    const response = await fetch(`${gateway.url}/health`);
    expect(response.status).toBe(200);
    expect(await readJson(response)).toEqual({ status: 'ok' });
  });
});

describe('keep-alive modes', () => {
  let comments: RunningGateway;
  let off: RunningGateway;
  const slowOnly = [{ name: 'slow', engine: 'stub', prefillMs: 500, tokenIntervalMs: 250 }];

  beforeAll(async () => {
    comments = await startGateway({ keepalive: { mode: 'comments', intervalMs: 100 }, models: slowOnly });
    off = await startGateway({ keepalive: { mode: 'off', intervalMs: 100 }, models: slowOnly });
  });
  afterAll(async () => {
    await Promise.all([comments?.close(), off?.close()]);
  });

  it('comments: `: keep-alive` comments for the whole stream and no heartbeat chunks', async () => {
    const exchange = await postSse(`${comments.url}/v1/chat/completions`, {
      model: 'slow',
      messages: ask('a b c'),
      stream: true,
    });
    const kinds = exchange.frames.map((frame) => frame.kind);
    const firstContent = exchange.frames.findIndex(
      (frame) => frame.kind === 'event' && frame.data.includes('"content":"a"'),
    );
    expect(kinds.slice(0, firstContent).filter((kind) => kind === 'comment').length).toBeGreaterThanOrEqual(3);
    expect(kinds.slice(firstContent).filter((kind) => kind === 'comment').length).toBeGreaterThanOrEqual(1);
    expect(
      exchange.frames
        .filter((frame) => frame.kind === 'comment')
        .every((frame) => frame.kind === 'comment' && frame.comment === 'keep-alive'),
    ).toBe(true);
    expect(exchange.json().filter(isHeartbeat)).toEqual([]);
  });

  it('off: neither heartbeats nor comments', async () => {
    const exchange = await postSse(`${off.url}/v1/chat/completions`, {
      model: 'slow',
      messages: ask('a b c'),
      stream: true,
    });
    expect(exchange.frames.some((frame) => frame.kind === 'comment')).toBe(false);
    expect(exchange.json().filter(isHeartbeat)).toEqual([]);
    expect(
      exchange
        .json()
        .map((chunk) => chunk.choices[0]?.delta.content ?? '')
        .join(''),
    ).toBe('a b c');
  });
});
