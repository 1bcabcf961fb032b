import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../../apps/mock-upstream/mock-upstream.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { scrape, valueOf } from '../support/prometheus.js';

const POISON = 'PROMPT-THE-ENGINE-CHOKES-ON';

describe('a request that fails the same way on every replica is its own failure, not the replicas’', () => {
  let poisoned: MockUpstream[];
  let oneBroken: MockUpstream[];
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    // Three healthy replicas that all answer 500 to one prompt (a template or input error).
    poisoned = await Promise.all([0, 1, 2].map(() => startMockUpstream({ behaviour: { poisonPrompt: POISON } })));
    // Three replicas of which the first answers 500 to everything.
    oneBroken = await Promise.all([0, 1, 2].map(() => startMockUpstream()));
    oneBroken[0].setBehaviour({ failure: 'status', failureStatus: 500 });
    const fleet = { engine: 'http', healthCheckIntervalMs: 0, maxFailures: 3, ejectionBaseMs: 600_000 };
    gateway = await startGateway({
      models: [
        { name: 'poisoned', upstreams: poisoned.map((replica) => replica.url), ...fleet },
        { name: 'one-broken', upstreams: oneBroken.map((replica) => replica.url), ...fleet },
      ],
    });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([...(poisoned ?? []), ...(oneBroken ?? [])].map((replica) => replica.close()));
  });

  const healthy = async (model: string, replicas: MockUpstream[]) => {
    const samples = await scrape(gateway.url);
    return replicas.map((replica) =>
      valueOf(samples, 'gantry_upstream_replica_healthy', { model, replica: replica.url }),
    );
  };

  it('the poison prompt over three replicas, many times: it fails, and innocent requests are all served', async () => {
    for (let index = 0; index < 6; index += 1) {
      const refused = await client.chat.completions
        .create({ model: 'poisoned', messages: [{ role: 'user', content: `${POISON} ${index}` }] })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 503 });
      expect((refused as Error).message).toMatch(
        /All replicas of model 'poisoned' failed or are down \(3 of 3 tried\)/,
      );
    }
    // Each poison request tried every replica: none was ejected.
    expect(poisoned.map((replica) => replica.state.received.length)).toEqual([6, 6, 6]);
    expect(await healthy('poisoned', poisoned)).toEqual([1, 1, 1]);
    for (let index = 0; index < 6; index += 1) {
      const answer = await client.chat.completions.create({
        model: 'poisoned',
        messages: [{ role: 'user', content: 'an innocent question' }],
      });
      expect(answer.choices[0].message.content).toBe('an innocent question');
    }
  });

  it('a replica that fails where the others serve still counts towards its ejection', async () => {
    for (let index = 0; index < 6; index += 1) {
      const answer = await client.chat.completions.create({
        model: 'one-broken',
        messages: [{ role: 'user', content: 'hello there' }],
      });
      expect(answer.choices[0].message.content).toBe('hello there');
    }
    expect(await healthy('one-broken', oneBroken)).toEqual([0, 1, 1]);
  });
});
