import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../apps/bench/loopback.js';
import { startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';

// Two gateway processes sharing one real redis-server (`responses.store: redis`): what one
// creates, the other reads, continues, resumes, cancels and deletes.
const REDIS_URL = process.env.GANTRY_TEST_REDIS_URL;
if (REDIS_URL === undefined && process.env.CI) throw new Error('GANTRY_TEST_REDIS_URL must be set in CI (.ci/run starts redis-server and sets it)');

type Item = Record<string, any>;
const SENTENCE = 'one two three four five six seven eight nine ten eleven twelve';
const textOf = (response: { output: unknown[] }) =>
  (response.output as Item[]).filter((item) => item.type === 'message').flatMap((item) => item.content.map((part: Item) => part.text)).join('');

function configText(prefix: string): string {
  return [
    'responses:',
    '  store: redis',
    `  redisUrl: ${REDIS_URL}`,
    `  redisKeyPrefix: "${prefix}"`,
    '  maxResolvedInputBytes: 1048576',
    'keepalive:',
    '  intervalMs: 100',
    'models:',
    '  - { name: stub, engine: stub }',
    '  - { name: slow, engine: stub, tokenIntervalMs: 20 }',
    '  - { name: stuck, engine: stub, prefillMs: 600000 }',
    '',
  ].join('\n');
}

/** The running requests of `model` that a gateway reports. */
async function running(baseUrl: string, model: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return valueOf(parsePrometheus(text), 'gantry_running_requests', { model });
}

describe.skipIf(REDIS_URL === undefined)('two gateway processes on one Redis (responses.store: redis)', () => {
  let first: CliProcess;
  let second: CliProcess;
  let a: OpenAI;
  let b: OpenAI;
  let urlA = '';
  let config = '';

  beforeAll(async () => {
    config = writeConfig(configText(`gantry-test:${process.pid}:${Date.now()}:`));
    const [portA, portB] = [await freePort(), await freePort()];
    first = startCli(['--config', config, '--port', String(portA)]);
    second = startCli(['--config', config, '--port', String(portB)]);
    const [baseA, baseB] = await Promise.all([first.listening, second.listening]);
    urlA = baseA;
    a = new OpenAI({ baseURL: `${baseA}/v1`, apiKey: 'unused', maxRetries: 0 });
    b = new OpenAI({ baseURL: `${baseB}/v1`, apiKey: 'unused', maxRetries: 0 });
  }, 30_000);
  afterAll(async () => {
    for (const cli of [first, second]) cli?.child.kill('SIGTERM');
    await Promise.all([first?.exited, second?.exited]);
  });

  it('creates on one and reads, lists and continues on the other', async () => {
    const created = await a.responses.create({ model: 'stub', input: 'remember the lighthouse' });
    const read = await b.responses.retrieve(created.id);
    expect(read).toMatchObject({ id: created.id, status: 'completed', store: true });
    expect(textOf(read)).toBe('remember the lighthouse');
    expect((await b.responses.inputItems.list(created.id)).data).toMatchObject([{ type: 'message', content: [{ type: 'input_text', text: 'remember the lighthouse' }] }]);

    const continued = await b.responses.create({ model: 'stub', input: 'what did I say', previous_response_id: created.id });
    expect(textOf(continued)).toBe('what did I say');
    // The stub counts every word of its prompt: the first turn's input and output reached it.
    expect(continued.usage!.input_tokens).toBe(3 + 3 + 4);
    // And back on the first replica, a third turn on the second one's answer.
    const third = await a.responses.create({ model: 'stub', input: 'again', previous_response_id: continued.id });
    expect(third.usage!.input_tokens).toBe(3 + 3 + 4 + 4 + 1);
  });

  it('resumes on one replica a background stream that runs on the other: gapless, nothing missed', async () => {
    const stream = await a.responses.create({ model: 'slow', input: SENTENCE, background: true, stream: true });
    const seen: ResponseStreamEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.type === 'response.output_text.delta') break;
    }
    const id = (seen[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>).response.id;
    const resumed = await b.responses.retrieve(id, { stream: true, starting_after: seen.at(-1)!.sequence_number });
    for await (const event of resumed) seen.push(event);

    expect(seen.map((event) => `${event.sequence_number} ${event.type}`)).toEqual(seen.map((event, index) => `${index} ${event.type}`));
    expect(seen.at(-1)!.type).toBe('response.completed');
    expect(seen.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('')).toBe(SENTENCE);
    expect(textOf(await b.responses.retrieve(id))).toBe(SENTENCE);
    // A resume point past 2^53 is a 400 naming it, not a store failure.
    await expect(b.responses.retrieve(id, { stream: true, starting_after: 2 ** 53 + 2 })).rejects.toMatchObject({ status: 400, error: { param: 'starting_after' } });
  });

  it('cancels on one replica a background response that runs on the other: its engine work stops', async () => {
    const created = await a.responses.create({ model: 'stuck', input: 'wait', background: true });
    const deadline = Date.now() + 10_000;
    while ((await running(urlA, 'stuck')) !== 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await running(urlA, 'stuck')).toBe(1);

    const cancelled = await b.responses.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled' });
    expect(await running(urlA, 'stuck')).toBe(0);
    expect((await a.responses.retrieve(created.id)).status).toBe('cancelled');
  });

  it('tells, on the other replicas, a background run whose replica died: failed, and its followers end', async () => {
    const doomed = startCli(['--config', config, '--port', String(await freePort())]);
    const c = new OpenAI({ baseURL: `${await doomed.listening}/v1`, apiKey: 'unused', maxRetries: 0 });
    const created = await c.responses.create({ model: 'stuck', input: 'wait', background: true });
    const followed = await b.responses.retrieve(created.id, { stream: true });
    const seen: ResponseStreamEvent[] = [];
    const following = (async () => {
      for await (const event of followed) seen.push(event);
    })();
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    // Its lease runs out within a few renewals (keep-alive interval, at least 1 s, times three).
    await following;
    expect(seen.at(-1)).toMatchObject({ type: 'error', code: 'response_abandoned', sequence_number: seen.length - 1 });
    const read = await b.responses.retrieve(created.id);
    expect(read).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(read).not.toHaveProperty('gantry_lease_until');
    // Continuing from it is allowed now that it has ended.
    expect((await a.responses.create({ model: 'stub', input: 'then', previous_response_id: created.id })).status).toBe('completed');
  }, 30_000);

  it('refuses an input that repeated item references make larger than maxResolvedInputBytes, on any replica', async () => {
    const kept = await a.responses.create({ model: 'stub', input: 'word '.repeat(60 * 1024), max_output_tokens: 1 });
    const [item] = (await a.responses.inputItems.list(kept.id)).data as Item[];
    const references = Array.from({ length: 4 }, () => ({ type: 'item_reference' as const, id: item!.id }));
    await expect(b.responses.create({ model: 'stub', input: references, max_output_tokens: 1 })).rejects.toMatchObject({
      status: 400,
      error: { code: 'input_too_large', param: 'input[3].id' },
    });
    // Within the bound they resolve (the answer is cut at its one token).
    expect((await b.responses.create({ model: 'stub', input: references.slice(0, 3), max_output_tokens: 1 })).status).toBe('incomplete');
  });

  it('deletes on one replica: the other no longer finds it', async () => {
    const created = await a.responses.create({ model: 'stub', input: 'to be deleted' });
    await b.responses.delete(created.id);
    await expect(a.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(a.responses.create({ model: 'stub', input: 'x', previous_response_id: created.id })).rejects.toMatchObject({ status: 400 });
  });
});

describe('a Redis store that cannot be reached', () => {
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    // A port where nothing listens.
    const port = await freePort();
    gateway = await startGateway({
      responses: { store: 'redis', redisUrl: `redis://127.0.0.1:${port}`, redisTimeoutMs: 200 },
      models: [{ name: 'stub', engine: 'stub' }],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  it('fails the requests that need the store with a clear 503, and answers the others', async () => {
    const answered = await client.responses.create({ model: 'stub', input: 'still served' });
    expect(textOf(answered)).toBe('still served');
    const unavailable = { status: 503, error: { code: 'response_store_unavailable' } };
    await expect(client.responses.create({ model: 'stub', input: 'x', previous_response_id: answered.id })).rejects.toMatchObject(unavailable);
    await expect(client.responses.create({ model: 'stub', input: 'x', background: true })).rejects.toMatchObject(unavailable);
    await expect(client.responses.retrieve(answered.id)).rejects.toMatchObject(unavailable);
    await expect(client.responses.create({ model: 'stub', input: 'x', store: false })).resolves.toMatchObject({ status: 'completed' });
    // The background request was refused, before anything ran: counted so, with its status.
    const samples = parsePrometheus(await (await fetch(`${gateway.url}/metrics`)).text());
    expect(valueOf(samples, 'gantry_requests_total', { api: 'responses', model: 'stub', outcome: 'rejected', status: '503' })).toBe(1);
    expect(valueOf(samples, 'gantry_requests_total', { api: 'responses', model: 'stub', outcome: 'failed', status: '200' })).toBe(0);
  });
});
