import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { LifecycleService } from '../src/lifecycle/lifecycle.service.js';
import { ResponseScope } from '../src/stored-responses/response-scope.js';
import { StoredResponses } from '../src/stored-responses/stored-responses.js';
import { startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { SENTENCE, sharedStoreScenarios, textOf } from './support/shared-store-scenarios.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';
import { hasProtocolErrorShape } from './support/protocol-errors.js';
import { pythonSdkRequest, rawExchange } from './support/raw-http.js';

// Stateful Responses through the official SDK, on the default store (memory): kept responses,
// their input items, chains by previous_response_id, item references, background runs that
// are polled, followed, resumed and cancelled; in one process, and across two workers.
type Item = Record<string, any>;

describe('stored Responses (responses.store: memory)', () => {
  let upstream: MockUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startMockUpstream();
    gateway = await startGateway({
      keepalive: { mode: 'chunks', intervalMs: 50 },
      responses: { maxResolvedInputBytes: 1024 * 1024 },
      models: [
        { name: 'stub', engine: 'stub' },
        { name: 'thinker', engine: 'stub', reasoning: 'think first' },
        { name: 'slow', engine: 'stub', tokenIntervalMs: 20 },
        { name: 'stuck', engine: 'stub', prefillMs: 600_000, maxConcurrency: 1 },
        { name: 'upstream', engine: 'http', upstreams: [upstream.url] },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('keeps a response by default: retrieve returns it, input_items lists its input with ids', async () => {
    const created = await client.responses.create({ model: 'stub', input: 'hello there' });
    expect(created).toMatchObject({ status: 'completed', store: true, background: false, previous_response_id: null });

    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved).toMatchObject({ id: created.id, status: 'completed', output: created.output });
    expect(textOf(retrieved)).toBe('hello there');

    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'user',
        status: 'completed',
        content: [{ type: 'input_text', text: 'hello there' }],
      },
    ]);
  });

  it('keeps a streamed response before its last event leaves', async () => {
    const stream = await client.responses.create({ model: 'stub', input: 'streamed and kept', stream: true });
    let id = '';
    for await (const event of stream) {
      if (event.type === 'response.created') id = event.response.id;
      if (event.type === 'response.completed') {
        // The client has the last event: the response is already there for it.
        const retrieved = await client.responses.retrieve(id);
        expect(retrieved.status).toBe('completed');
        expect(textOf(retrieved)).toBe('streamed and kept');
      }
    }
    expect(id).toMatch(/^resp_/);
  });

  it('keeps nothing with store: false', async () => {
    const created = await client.responses.create({ model: 'stub', input: 'forget me', store: false });
    expect(created).toMatchObject({ store: false });
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('pages input_items like OpenAI (order, limit, after)', async () => {
    const input = ['a', 'b', 'c', 'd', 'e'].map((text) => ({ role: 'user' as const, content: text }));
    const created = await client.responses.create({ model: 'stub', input });
    const first = await client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' });
    expect(first.data.map((item: Item) => item.content[0].text)).toEqual(['a', 'b']);
    expect(first.has_more).toBe(true);
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2 }))
      all.push((item as Item).content[0].text);
    expect(all).toEqual(['e', 'd', 'c', 'b', 'a']);
    await expect(client.responses.inputItems.list(created.id, { limit: 500 })).rejects.toMatchObject({
      status: 400,
      error: { param: 'limit' },
    });
  });

  it('continues a chain with previous_response_id: the engine gets the whole conversation', async () => {
    const first = await client.responses.create({
      model: 'upstream',
      input: 'my name is Ada',
      instructions: 'Be brief.',
    });
    const second = await client.responses.create({
      model: 'upstream',
      input: 'what is my name',
      previous_response_id: first.id,
    });
    expect(second.previous_response_id).toBe(first.id);
    const third = await client.responses.create({
      model: 'upstream',
      input: [{ role: 'user', content: 'and again' }],
      previous_response_id: second.id,
    });
    expect(third.status).toBe('completed');

    const messages = upstream.state.received.at(-1)!.body.messages as Item[];
    expect(
      messages.map((message) => [
        message.role,
        typeof message.content === 'string' ? message.content : message.content.map((part: Item) => part.text).join(''),
      ]),
    ).toEqual([
      ['user', 'my name is Ada'],
      ['assistant', textOf(first)],
      ['user', 'what is my name'],
      ['assistant', textOf(second)],
      ['user', 'and again'],
    ]);
    // Instructions belong to the request that gave them (OpenAI does not carry them over).
    expect(messages.some((message) => message.role === 'system')).toBe(false);
  });

  it('refuses an unknown previous_response_id with a 400 naming it', async () => {
    await expect(
      client.responses.create({ model: 'stub', input: 'hi', previous_response_id: 'resp_nope' }),
    ).rejects.toMatchObject({
      status: 400,
      error: { param: 'previous_response_id', message: expect.stringContaining('resp_nope') },
    });
  });

  it('resolves item_reference input items to the stored items (reasoning included)', async () => {
    const first = await client.responses.create({ model: 'thinker', input: 'tell me' });
    const reasoning = (first.output as Item[]).find((item) => item.type === 'reasoning')!;
    const message = (first.output as Item[]).find((item) => item.type === 'message')!;
    expect(reasoning.id).toMatch(/^rs_/);

    const input = [
      { role: 'user' as const, content: 'tell me' },
      { type: 'item_reference' as const, id: reasoning.id },
      { type: 'item_reference' as const, id: message.id },
      { role: 'user' as const, content: 'and now' },
    ];
    const second = await client.responses.create({ model: 'stub', input });
    expect(textOf(second)).toBe('and now');
    const items = (await client.responses.inputItems.list(second.id, { order: 'asc' })).data as Item[];
    expect(items.map((item) => [item.type, item.id])).toEqual([
      ['message', expect.stringMatching(/^msg_/)],
      ['reasoning', expect.stringMatching(/^rs_/)],
      ['message', expect.stringMatching(/^msg_/)],
      ['message', expect.stringMatching(/^msg_/)],
    ]);
    expect(items[1]!.content).toEqual([{ type: 'reasoning_text', text: 'think first' }]);
    // Kept as copies under ids of their own: the referenced items stay their first response's.
    expect(items[1]!.id).not.toBe(reasoning.id);
    await client.responses.delete(second.id);
    const third = await client.responses.create({
      model: 'stub',
      input: [
        { type: 'item_reference', id: message.id },
        { role: 'user', content: 'still there' },
      ],
    });
    expect(third.status).toBe('completed');

    await expect(
      client.responses.create({ model: 'stub', input: [{ type: 'item_reference', id: 'msg_unknown' }] }),
    ).rejects.toMatchObject({
      status: 400,
      error: { param: 'input[0].id', message: expect.stringContaining('msg_unknown') },
    });
  });

  it('refuses, before anything is sent upstream, an input that its item references and previous responses make larger than maxResolvedInputBytes', async () => {
    const large = 'word '.repeat(60 * 1024);
    const kept = await client.responses.create({ model: 'stub', input: large, max_output_tokens: 1 });
    const [item] = (await client.responses.inputItems.list(kept.id)).data as Item[];
    const sent = upstream.state.received.length;
    // A small request naming one 300 KB item four times: 1.2 MB once resolved.
    const references = Array.from({ length: 4 }, () => ({ type: 'item_reference' as const, id: item!.id }));
    await expect(client.responses.create({ model: 'upstream', input: references })).rejects.toMatchObject({
      status: 400,
      error: {
        code: 'input_too_large',
        param: 'input[3].id',
        message: expect.stringContaining('responses.maxResolvedInputBytes (1048576 bytes)'),
      },
    });
    // Whatever path brings the bytes in: here, a chain of previous responses.
    let previous = kept.id;
    for (let turn = 0; turn < 2; turn += 1)
      previous = (
        await client.responses.create({
          model: 'stub',
          input: large,
          previous_response_id: previous,
          max_output_tokens: 1,
        })
      ).id;
    await expect(
      client.responses.create({ model: 'upstream', input: large, previous_response_id: previous }),
    ).rejects.toMatchObject({
      status: 400,
      error: { code: 'input_too_large', param: 'previous_response_id' },
    });
    expect(upstream.state.received.length).toBe(sent);
    // Within the bound, references resolve as before.
    const within = await client.responses.create({ model: 'upstream', input: references.slice(0, 3) });
    expect(within.status).toBe('completed');
  });

  it('never lets an id sent in input take over a stored item', async () => {
    const first = await client.responses.create({ model: 'stub', input: 'the real words' });
    const message = (first.output as Item[]).find((item) => item.type === 'message')!;
    await client.responses.create({
      model: 'stub',
      input: [
        { type: 'message', id: message.id, role: 'assistant', content: 'forged words' },
        { role: 'user', content: 'hi' },
      ] as never,
    });
    const referring = await client.responses.create({
      model: 'upstream',
      input: [
        { type: 'item_reference', id: message.id },
        { role: 'user', content: 'go on' },
      ],
    });
    expect(referring.status).toBe('completed');
    const messages = upstream.state.received.at(-1)!.body.messages as Item[];
    expect(messages[0]).toMatchObject({ role: 'assistant', content: 'the real words' });
  });

  it('stops a running background response that is deleted, and forgets it', async () => {
    const created = await client.responses.create({ model: 'stuck', input: 'wait', background: true });
    const stuck = gateway.registry.resolve('stuck').admission;
    expect(await eventually(() => stuck.running === 1, 10_000)).toBe(true);
    await client.responses.delete(created.id);
    expect(await eventually(() => stuck.running === 0, 10_000)).toBe(true);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('deletes a response: then it is a 404, its items too', async () => {
    const created = await client.responses.create({ model: 'stub', input: 'short lived' });
    const item = (created.output as Item[])[0]!;
    await client.responses.delete(created.id);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: 'stub', input: [{ type: 'item_reference', id: item.id }] }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('runs a background response with nobody connected; polling sees it finish', async () => {
    const created = await client.responses.create({ model: 'slow', input: SENTENCE, background: true });
    expect(created).toMatchObject({ status: 'queued', background: true, store: true, output: [] });
    let polled = await client.responses.retrieve(created.id);
    expect(['queued', 'in_progress', 'completed']).toContain(polled.status);
    const deadline = Date.now() + 30_000;
    while (polled.status !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      polled = await client.responses.retrieve(created.id);
    }
    expect(polled.status).toBe('completed');
    expect(textOf(polled)).toBe(SENTENCE);
  });

  it('counts a background request in the metrics when its run ends, with its outcome and tokens', async () => {
    const completed = () =>
      fetch(`${gateway.url}/metrics`).then(async (response) =>
        valueOf(parsePrometheus(await response.text()), 'gantry_requests_total', {
          api: 'responses',
          model: 'slow',
          outcome: 'completed',
        }),
      );
    const before = await completed();
    const created = await client.responses.create({ model: 'slow', input: SENTENCE, background: true });
    const deadline = Date.now() + 30_000;
    while ((await client.responses.retrieve(created.id)).status !== 'completed' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    let after = await completed();
    while (after === before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await completed();
    }
    expect(after).toBe(before + 1);
  });

  it('resumes a background stream after a lost connection with starting_after: gapless, nothing missed', async () => {
    const stream = await client.responses.create({ model: 'slow', input: SENTENCE, background: true, stream: true });
    const seen: ResponseStreamEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.type === 'response.output_text.delta') break; // the connection is lost here
    }
    const id = (seen[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>).response.id;
    const last = seen.at(-1)!.sequence_number;

    const resumed = await client.responses.retrieve(id, { stream: true, starting_after: last });
    for await (const event of resumed) seen.push(event);

    expect(seen.filter((event) => event.type === 'error')).toEqual([]);
    expect(seen.map((event) => `${event.sequence_number} ${event.type}`)).toEqual(
      seen.map((event, index) => `${index} ${event.type}`),
    );
    expect(seen.at(-1)!.type).toBe('response.completed');
    const text = seen.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
    expect(text).toBe(SENTENCE);
  });

  it('keeps the keep-alives of a background run in its log while it waits', async () => {
    const created = await client.responses.create({ model: 'stuck', input: 'never mind', background: true });
    const beats: ResponseStreamEvent[] = [];
    const followed = await client.responses.retrieve(created.id, { stream: true });
    for await (const event of followed) {
      beats.push(event);
      if (beats.filter((beat) => beat.type === 'response.in_progress').length >= 3) break;
    }
    await client.responses.cancel(created.id);
    expect(beats.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.in_progress',
      'response.in_progress',
    ]);
  });

  it('stops a run whose response was ended while it could not write: that end stands, and ends its log', async () => {
    const stream = await client.responses.create({ model: 'stuck', input: 'outlived', background: true, stream: true });
    const seen: ResponseStreamEvent[] = [];
    const following = (async () => {
      for await (const event of stream) seen.push(event);
    })();
    const stuck = gateway.registry.resolve('stuck').admission;
    expect(await eventually(() => stuck.running === 1 && seen.length > 0, 10_000)).toBe(true);
    const id = (seen[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>).response.id;
    // What a replica that read it as left writes (its run could not renew for a while).
    const stored = gateway.app.get(StoredResponses);
    const running = (await stored.retrieve(ResponseScope.OPEN, id)).response;
    const left = { ...running, status: 'failed', error: { code: 'server_error', message: 'left' } };
    expect(await stored.update(ResponseScope.OPEN, left, false)).toBe('written');

    // Its next renewal is refused: it stops, and its followers get the end that stands.
    await following;
    expect(stuck.running).toBe(0);
    expect(seen.at(-1)).toMatchObject({
      type: 'response.failed',
      response: { id, status: 'failed', error: { message: 'left' } },
    });
    expect(await client.responses.retrieve(id)).toMatchObject({ status: 'failed', error: { message: 'left' } });
    expect(await stored.update(ResponseScope.OPEN, { ...running, status: 'completed' }, false)).toBe('refused');
  });

  it('cancels a background response: the engine work stops, the response says cancelled', async () => {
    const created = await client.responses.create({ model: 'stuck', input: 'wait forever', background: true });
    const stuck = gateway.registry.resolve('stuck').admission;
    expect(await eventually(() => stuck.running === 1, 10_000)).toBe(true);

    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled' });
    expect(stuck.running).toBe(0);
    expect((await client.responses.retrieve(created.id)).status).toBe('cancelled');
    // Cancelling again answers the same; a foreground response cannot be cancelled.
    expect((await client.responses.cancel(created.id)).status).toBe('cancelled');
    const foreground = await client.responses.create({ model: 'stub', input: 'done already' });
    await expect(client.responses.cancel(foreground.id)).rejects.toMatchObject({ status: 400 });
  });

  it('refuses a background response with store: false, and answers 404 for unknown ids', async () => {
    await expect(
      client.responses.create({ model: 'stub', input: 'x', background: true, store: false }),
    ).rejects.toMatchObject({
      status: 400,
      error: { param: 'background' },
    });
    await expect(client.responses.retrieve('resp_unknown')).rejects.toMatchObject({
      status: 404,
      error: { message: expect.stringContaining('resp_unknown') },
    });
    const background = await client.responses.create({ model: 'stub', input: 'x', background: true });
    for (const past of ['9007199254740993', '1e300', '-2']) {
      const resumed = await fetch(`${gateway.url}/v1/responses/${background.id}?stream=true&starting_after=${past}`);
      expect({ status: resumed.status, param: ((await resumed.json()) as Item).error.param }).toEqual({
        status: 400,
        param: 'starting_after',
      });
    }
    await expect(client.responses.inputItems.list('resp_unknown')).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.cancel('resp_unknown')).rejects.toMatchObject({ status: 404 });
  });
});

describe('bodiless requests as the OpenAI Python SDK sends them (content-type: application/json, no body)', () => {
  let gateway: RunningGateway;
  let client: OpenAI;
  let port: number;
  beforeAll(async () => {
    gateway = await startGateway({
      models: [
        { name: 'stub', engine: 'stub' },
        { name: 'stuck', engine: 'stub', prefillMs: 600_000 },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    port = Number(new URL(gateway.url).port);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('cancels and deletes a response', async () => {
    const running = await client.responses.create({ model: 'stuck', input: 'wait', background: true });
    const cancelled = await rawExchange(port, pythonSdkRequest('POST', `/v1/responses/${running.id}/cancel`, port));
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json).toMatchObject({ id: running.id, object: 'response', status: 'cancelled' });

    const deleted = await rawExchange(port, pythonSdkRequest('DELETE', `/v1/responses/${running.id}`, port));
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.json).toEqual({ id: running.id, object: 'response', deleted: true });
    await expect(client.responses.retrieve(running.id)).rejects.toMatchObject({ status: 404 });
  });

  it('still refuses an empty body where the route needs one, with a 400 in its protocol shape', async () => {
    for (const path of [
      '/v1/responses',
      '/v1/responses/input_tokens',
      '/v1/chat/completions',
      '/v1/messages',
      '/v1/messages/count_tokens',
    ]) {
      const refused = await rawExchange(port, pythonSdkRequest('POST', path, port));
      expect(refused.status, path).toBe(400);
      expect(hasProtocolErrorShape(path, refused.json), `${path}: ${refused.text}`).toBe(true);
      expect(JSON.stringify(refused.json)).toContain('The request body is empty');
    }
  });
});

describe("background runs at a shutdown's drain deadline", () => {
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway({
      keepalive: { intervalMs: 50 },
      models: [{ name: 'stuck', engine: 'stub', prefillMs: 600_000 }],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  it("ends their followers with the run's own end (response.failed), not a cut connection", async () => {
    const created = await client.responses.create({ model: 'stuck', input: 'wait', background: true });
    const streams = [
      await client.responses.create({ model: 'stuck', input: 'wait too', background: true, stream: true }),
      await client.responses.retrieve(created.id, { stream: true }),
    ];
    const followers = streams.map(async (stream) => {
      const seen: ResponseStreamEvent[] = [];
      for await (const event of stream) seen.push(event);
      return seen;
    });
    const stuck = gateway.registry.resolve('stuck').admission;
    expect(await eventually(() => stuck.running === 2, 10_000)).toBe(true);

    gateway.app.get(LifecycleService).endStreamsNow();
    for (const seen of await Promise.all(followers)) {
      expect(seen.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed' } });
      expect(seen.map((event) => event.sequence_number)).toEqual(seen.map((_, index) => index));
    }
    // The gateway refuses requests while it drains: read the store itself.
    expect((await gateway.app.get(StoredResponses).retrieve(ResponseScope.OPEN, created.id)).response.status).toBe(
      'failed',
    );
  });
});

describe('responses.store: off', () => {
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway({ responses: { store: 'off' }, models: [{ name: 'stub', engine: 'stub' }] });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  it('keeps nothing and refuses the stateful fields as a stateless gateway', async () => {
    const created = await client.responses.create({ model: 'stub', input: 'hello' });
    expect(created).toMatchObject({ store: false });
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: 'stub', input: 'x', previous_response_id: created.id }),
    ).rejects.toMatchObject({
      status: 400,
      error: { param: 'previous_response_id' },
    });
    await expect(client.responses.create({ model: 'stub', input: 'x', background: true })).rejects.toMatchObject({
      status: 400,
      error: { param: 'background' },
    });
    await expect(
      client.responses.create({ model: 'stub', input: [{ type: 'item_reference', id: 'msg_1' }] }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe('stored Responses behind API keys', () => {
  const KEY_A = 'sk-gantry-key-a-0123456789abcdef';
  const KEY_B = 'sk-gantry-key-b-0123456789abcdef';
  let gateway: RunningGateway;
  let a: OpenAI;
  let b: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway({
      auth: { apiKeys: [KEY_A, KEY_B], limits: { concurrentStreams: 1 } },
      models: [
        { name: 'stub', engine: 'stub' },
        { name: 'thinker', engine: 'stub', reasoning: 'think first' },
        { name: 'stuck', engine: 'stub', prefillMs: 600_000 },
      ],
    });
    a = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
    b = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: KEY_B, maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  it("keeps each key's responses to itself: another key can neither read, continue, reference, cancel nor delete them", async () => {
    const created = await a.responses.create({ model: 'stub', input: 'for key A only' });
    const item = (created.output as Item[])[0]!;
    expect((await a.responses.retrieve(created.id)).id).toBe(created.id);

    const notFound = { status: 404 };
    await expect(b.responses.retrieve(created.id)).rejects.toMatchObject(notFound);
    await expect(b.responses.inputItems.list(created.id)).rejects.toMatchObject(notFound);
    await expect(b.responses.delete(created.id)).rejects.toMatchObject(notFound);
    await expect(b.responses.cancel(created.id)).rejects.toMatchObject(notFound);
    await expect(
      b.responses.create({ model: 'stub', input: 'x', previous_response_id: created.id }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      b.responses.create({ model: 'stub', input: [{ type: 'item_reference', id: item.id }] }),
    ).rejects.toMatchObject({ status: 400 });
    // Still whole for its own key.
    expect(
      (await a.responses.create({ model: 'stub', input: 'and then', previous_response_id: created.id })).status,
    ).toBe('completed');
  });

  it('opens sealed reasoning (encrypted_content) only for the key it was sealed for', async () => {
    const sealed = await a.responses.create({
      model: 'thinker',
      input: 'think',
      store: false,
      include: ['reasoning.encrypted_content'],
    });
    const reasoning = (sealed.output as Item[]).find((item) => item.type === 'reasoning')!;
    const input = [
      { type: 'reasoning', id: reasoning.id, summary: [], encrypted_content: reasoning.encrypted_content },
      { role: 'user', content: 'go on' },
    ] as never;
    await expect(b.responses.create({ model: 'stub', input, store: false })).rejects.toMatchObject({
      status: 400,
      error: { param: 'input[0].encrypted_content', code: 'invalid_encrypted_content' },
    });
    expect((await a.responses.create({ model: 'stub', input, store: false })).status).toBe('completed');
  });

  it("holds the key's stream slot for the whole background run, not just its answer", async () => {
    const running = await a.responses.create({ model: 'stuck', input: 'hold the slot', background: true });
    // concurrentStreams: 1, and the run still holds it after its answer was sent.
    await expect(a.responses.create({ model: 'stub', input: 'a second one', background: true })).rejects.toMatchObject({
      status: 429,
    });
    await expect(a.responses.create({ model: 'stub', input: 'a foreground one' })).rejects.toMatchObject({
      status: 429,
    });
    expect((await b.responses.create({ model: 'stub', input: 'another key is not held back' })).status).toBe(
      'completed',
    );
    // Its own key can still poll it, and count tokens on either API: only a generation holds a stream slot.
    expect(['queued', 'in_progress']).toContain((await a.responses.retrieve(running.id)).status);
    expect((await a.responses.inputTokens.count({ model: 'stub', input: 'one two' })).input_tokens).toBeGreaterThan(0);
    const counted = await fetch(`${gateway.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY_A, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'stub', messages: [{ role: 'user', content: 'one two' }] }),
    });
    expect(counted.status).toBe(200);

    await a.responses.cancel(running.id);
    // The slot comes back when the run has ended.
    const deadline = Date.now() + 10_000;
    let after: { status?: string } | undefined;
    while (after === undefined && Date.now() < deadline) {
      after = await a.responses.create({ model: 'stub', input: 'free again' }).catch(() => undefined);
    }
    expect(after?.status).toBe('completed');
  });
});

/**
 * An OpenAI client whose requests all go on one kept-alive connection, so to one worker of a
 * cluster; a request answered by another worker fails the test. `worker` is its pid.
 */
async function clientOnOneWorker(url: string): Promise<{ client: OpenAI; worker: number; close: () => Promise<void> }> {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
  let worker: number | undefined;
  const pinned = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await undiciFetch(input as string, { ...(init as object), dispatcher: agent });
    const answered = Number(response.headers.get('x-gantry-worker'));
    if (worker !== undefined && answered !== worker) throw new Error(`answered by worker ${answered}, not ${worker}`);
    worker = answered;
    return response as unknown as Response;
  };
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, fetch: pinned });
  await client.models.list();
  return { client, worker: worker!, close: () => agent.close() };
}

describe('stored Responses with two workers (responses.store: memory, kept by the primary)', () => {
  let cli: CliProcess;
  let url: string;
  let a: OpenAI;
  let b: OpenAI;
  const clients: Array<{ close: () => Promise<void> }> = [];

  beforeAll(async () => {
    const file = writeConfig(
      'server: { workers: 2 }\nkeepalive: { intervalMs: 100 }\nmodels:\n  - { name: stub, engine: stub }\n' +
        '  - { name: slow, engine: stub, tokenIntervalMs: 20 }\n  - { name: stuck, engine: stub, prefillMs: 600000 }\n',
    );
    cli = startCli(['--config', file, '--port', '0']);
    url = await cli.listening;
  }, 60_000);
  // A client on each worker for each test (one that hangs up mid-stream loses its connection).
  beforeEach(async () => {
    const byWorker = new Map<number, OpenAI>();
    while (byWorker.size < 2 && clients.length < 100) {
      const pinned = await clientOnOneWorker(url);
      clients.push(pinned);
      // New connections go to the workers in turn.
      if (!byWorker.has(pinned.worker)) byWorker.set(pinned.worker, pinned.client);
    }
    [a, b] = [...byWorker.values()];
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    cli?.child.kill('SIGTERM');
    await cli?.exited;
  });

  sharedStoreScenarios('worker', () => ({
    a,
    b,
    runningOnA: async (model) =>
      valueOf(parsePrometheus(await (await fetch(`${url}/metrics`)).text()), 'gantry_running_requests', { model }),
  }));
});
