import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../apps/mock-upstream/mock-upstream.js';
import { HttpEngine } from '../src/engines/http/http-engine.js';
import { eventually, readJson, startGateway, type RunningGateway } from './support/gateway.js';
import { postSse, type SseExchange } from './support/sse-client.js';
import { ask, behaving, contentOf, errorOf } from './support/one-upstream-gateway.js';

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
