import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { startMemoryStoreGateway, type MemoryStoreGateway } from './support/memory-store-gateway.js';
import { textOf } from './support/shared-store-scenarios.js';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { hasProtocolErrorShape } from './support/protocol-errors.js';
import { pythonSdkRequest, rawExchange } from './support/raw-http.js';

// Stateful Responses through the official SDK, on the default store (memory): kept responses,
// their input items, chains by previous_response_id and item references; requests without a
// body; and a gateway without a store. Background runs: stored-responses-background.e2e-spec.ts;
// API keys and workers: stored-responses-scopes.e2e-spec.ts.
type Item = Record<string, any>;

describe('stored Responses (responses.store: memory)', () => {
  let upstream: MockUpstream;
  let client: OpenAI;
  let running: MemoryStoreGateway | undefined;

  beforeAll(async () => {
    running = await startMemoryStoreGateway();
    ({ upstream, client } = running);
  });
  afterAll(async () => {
    await running?.close();
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
