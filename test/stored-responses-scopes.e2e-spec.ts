import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCli, writeConfig, type CliProcess } from './support/cli-process.js';
import { sharedStoreScenarios } from './support/shared-store-scenarios.js';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { parsePrometheus, valueOf } from './support/prometheus.js';

// Stored Responses kept apart by API key, and kept by the primary for two workers.
type Item = Record<string, any>;

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
