import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../apps/bench/loopback.js';
import { startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';
import { sharedStoreScenarios, textOf } from './support/shared-store-scenarios.js';
import { TEST_REDIS_URL } from './support/test-redis-url.js';

// Two gateway processes sharing one real redis-server (`responses.store: redis`): what one
// creates, the other reads, continues, resumes, cancels and deletes.
const REDIS_URL = TEST_REDIS_URL;

type Item = Record<string, any>;

function configText(prefix: string): string {
  return [
    'redis:',
    `  url: ${REDIS_URL}`,
    `  keyPrefix: "${prefix}"`,
    'responses:',
    '  store: redis',
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

  sharedStoreScenarios('replica', () => ({ a, b, runningOnA: (model) => running(urlA, model) }));

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
    expect((await a.responses.create({ model: 'stub', input: 'then', previous_response_id: created.id })).status).toBe(
      'completed',
    );
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
    expect(
      (await b.responses.create({ model: 'stub', input: references.slice(0, 3), max_output_tokens: 1 })).status,
    ).toBe('incomplete');
  });
});

describe('a Redis store that cannot be reached', () => {
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    // A port where nothing listens.
    const port = await freePort();
    gateway = await startGateway({
      redis: { url: `redis://127.0.0.1:${port}`, timeoutMs: 200 },
      responses: { store: 'redis' },
      models: [{ name: 'stub', engine: 'stub' }],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  it('fails the requests that need the store with a clear 503, and answers the others', async () => {
    const answered = await client.responses.create({ model: 'stub', input: 'still served' });
    expect(textOf(answered)).toBe('still served');
    const unavailable = { status: 503, error: { code: 'response_store_unavailable' } };
    await expect(
      client.responses.create({ model: 'stub', input: 'x', previous_response_id: answered.id }),
    ).rejects.toMatchObject(unavailable);
    await expect(client.responses.create({ model: 'stub', input: 'x', background: true })).rejects.toMatchObject(
      unavailable,
    );
    await expect(client.responses.retrieve(answered.id)).rejects.toMatchObject(unavailable);
    await expect(client.responses.create({ model: 'stub', input: 'x', store: false })).resolves.toMatchObject({
      status: 'completed',
    });
    // The background request was refused, before anything ran: counted so, with its status.
    const samples = parsePrometheus(await (await fetch(`${gateway.url}/metrics`)).text());
    expect(
      valueOf(samples, 'gantry_requests_total', {
        api: 'responses',
        model: 'stub',
        outcome: 'rejected',
        status: '503',
      }),
    ).toBe(1);
    expect(
      valueOf(samples, 'gantry_requests_total', { api: 'responses', model: 'stub', outcome: 'failed', status: '200' }),
    ).toBe(0);
  });
});
