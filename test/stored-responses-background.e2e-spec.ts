import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMemoryStoreGateway, type MemoryStoreGateway } from './support/memory-store-gateway.js';
import { LifecycleService } from '../src/lifecycle/lifecycle.service.js';
import { ResponseScope } from '../src/stored-responses/response-scope.js';
import { StoredResponses } from '../src/stored-responses/stored-responses.js';
import { SENTENCE, textOf } from './support/shared-store-scenarios.js';
import { eventually, startGateway, type RunningGateway } from './support/gateway.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';

// Background Responses on the memory store: runs with nobody connected that are polled,
// followed, resumed, cancelled and deleted, and their end at a shutdown's drain deadline.
type Item = Record<string, any>;

describe('background Responses (responses.store: memory)', () => {
  let gateway: RunningGateway;
  let client: OpenAI;
  let running: MemoryStoreGateway | undefined;

  beforeAll(async () => {
    running = await startMemoryStoreGateway();
    ({ gateway, client } = running);
  });
  afterAll(async () => {
    await running?.close();
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
