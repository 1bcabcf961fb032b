import { type IncomingMessage, request } from 'node:http';
import { createConnection } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../apps/bench/loopback.js';
import { RedisLimitStore } from '../../src/auth/redis-limit-store.js';
import { eventually, startGateway, type RunningGateway } from '../support/gateway.js';
import { unpooledAgent } from '../support/http-stream.js';
import { scrape, valueOf } from '../support/prometheus.js';
import { REDIS_SERVER, RedisProcess } from '../support/redis-process.js';

// The per-key limits on a redis-server of this file's own (see RedisProcess), paused, killed and restarted.
// One key per test, so that what one outage leaves behind cannot show up in the other.
const PAUSED_KEY = 'sk-gantry-outage-paused-7d1e';
const RESTARTED_KEY = 'sk-gantry-outage-restarted-0b3a';
// A tenant with a token budget it spends at once: refused while Redis answers, let through while it does not.
const BUDGET_KEY = 'sk-gantry-outage-budget-5c9f';
const MAX_STREAMS = 4;
const LONG_PROMPT = Array.from({ length: 400 }, (_, index) => `w${index}`).join(' ');

/** How many clients other than the asking one are connected to the redis-server on `port`. */
function otherClients(port: number): Promise<number> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    const done = (count: number) => {
      socket.destroy();
      resolve(count);
    };
    socket.setTimeout(500, () => done(0));
    socket.once('error', () => done(0));
    socket.on('data', (data) => {
      reply += data.toString();
      // A bulk string: `$<length>\r\n<one line per client>\r\n`.
      const header = /^\$(\d+)\r\n/.exec(reply);
      if (header && reply.length >= header[0].length + Number(header[1])) done(reply.trim().split('\n').length - 2);
    });
    socket.once('connect', () => socket.write('CLIENT LIST\r\n'));
  });
}

interface OpenStream {
  status: number;
  /** The error code of a refusal. */
  code?: string;
  close(): void;
}

/**
 * Opens a stream of the slow model and resolves once the gateway answered its status: a 200
 * stream is held (its concurrent slot with it) until `close`; a refusal is read whole.
 */
function openStream(baseUrl: string, key: string): Promise<OpenStream> {
  const agent = unpooledAgent();
  const payload = JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: LONG_PROMPT }] });
  return new Promise((resolve, reject) => {
    const req = request(new URL('/v1/chat/completions', baseUrl), {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    });
    const close = () => {
      req.destroy();
      agent.destroy();
    };
    req.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      if (status === 200) {
        response.resume();
        resolve({ status, close });
        return;
      }
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => (body += text));
      response.on('end', () => {
        close();
        resolve({ status, code: (JSON.parse(body) as { error?: { code?: string } }).error?.code, close });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A quick non-streaming request of the key; resolves with its status, and a refusal's error code. */
async function quickAnswer(baseUrl: string, key: string): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'quick', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, code: body.error?.code };
}

async function quickRequest(baseUrl: string, key: string): Promise<number> {
  return (await quickAnswer(baseUrl, key)).status;
}

/** Whether the budgeted tenant is refused for its spent tokens, on every replica. */
async function budgetSpent(replicas: RunningGateway[]): Promise<boolean> {
  const answers = await Promise.all(replicas.map((replica) => quickAnswer(replica.url, BUDGET_KEY)));
  return answers.every((answer) => answer.status === 429 && answer.code === 'token_limit_exceeded');
}

/**
 * Whether per-key concurrency is enforced across both replicas: MAX_STREAMS streams (on either)
 * are admitted, and one more is refused with 429. All are closed again before it returns.
 */
async function concurrencyIsEnforced(
  replicas: RunningGateway[],
  key: string,
): Promise<{ admitted: number; extra: OpenStream }> {
  const held: OpenStream[] = [];
  try {
    for (let index = 0; index < MAX_STREAMS; index += 1) {
      const stream = await openStream(replicas[index % replicas.length].url, key);
      held.push(stream);
      if (stream.status !== 200) break;
    }
    const extra = await openStream(replicas[1].url, key);
    held.push(extra);
    return { admitted: held.filter((stream) => stream.status === 200 && stream !== extra).length, extra };
  } finally {
    for (const stream of held) stream.close();
  }
}

/**
 * Polls until the limit applies again (MAX_STREAMS admitted, the next one refused), as the
 * store reconnects; returns the last attempt. Bounded: a key locked out never gets there.
 */
async function untilEnforced(
  replicas: RunningGateway[],
  key: string,
  timeoutMs = 8_000,
): Promise<{ admitted: number; extra: OpenStream }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const attempt = await concurrencyIsEnforced(replicas, key);
    if ((attempt.admitted === MAX_STREAMS && attempt.extra.status === 429) || Date.now() > deadline) return attempt;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(REDIS_SERVER === undefined)(
  'per-key limits through a Redis outage (a redis-server of this file)',
  () => {
    let redis: RedisProcess;

    beforeAll(async () => {
      redis = new RedisProcess(await freePort());
      await redis.start();
    });

    afterAll(async () => {
      await redis?.kill();
    });

    describe('RedisLimitStore while Redis is paused', () => {
      const stores: RedisLimitStore[] = [];
      const observers: Redis[] = [];
      afterAll(async () => {
        await Promise.all(stores.map((store) => store.close()));
        for (const observer of observers) observer.disconnect();
      });

      it('fails at once after one timeout, leaves no lease taken late, and gives back a lease released during the pause', async () => {
        const prefix = `store-outage:${Date.now()}:`;
        const key = 'streams:paused';
        // `warm` learned Redis's clock from an acquire before the pause; `cold` never did, so its
        // late acquire is not refused by a deadline and must be given back by the store.
        const warm = new RedisLimitStore(redis.url, { prefix, commandTimeoutMs: 100 });
        const cold = new RedisLimitStore(redis.url, { prefix, commandTimeoutMs: 100 });
        stores.push(warm, cold);
        const observer = new Redis(redis.url);
        // Every change to the key's sorted set, as Redis reports it (keyspace notifications).
        const subscriber = new Redis(redis.url);
        observers.push(observer, subscriber);
        await observer.config('SET', 'notify-keyspace-events', 'Kz');
        const changes: string[] = [];
        subscriber.on('message', (_channel: string, change: string) => changes.push(change));
        await subscriber.subscribe(`__keyspace@0__:${prefix}${key}`);
        const failures: string[] = [];
        warm.onFailure((operation) => failures.push(operation));
        const held = await warm.acquire(key, 2);
        expect(held).toEqual(expect.any(String));
        await cold.hit('rpm:paused', 60_000, 100);
        expect(await eventually(async () => changes.length === 1)).toBe(true);

        await redis.pause();
        let outcomes: Array<PromiseSettledResult<unknown>>;
        try {
          // Room for both: whichever takes nothing, it is not for want of a slot.
          outcomes = await Promise.allSettled([warm.acquire(key, 3), cold.acquire(key, 3)]);
          // After a timeout nothing more is sent until Redis answers: these fail without waiting.
          outcomes.push(
            ...(await Promise.allSettled([
              warm.acquire(key, 2),
              warm.hit('rpm:paused', 60_000, 100),
              warm.release(key, held!),
            ])),
          );
        } finally {
          redis.resume();
        }
        expect(
          outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'answered')),
        ).toEqual([
          'Redis did not answer within 100 ms',
          'Redis did not answer within 100 ms',
          'Redis has not answered since a command timed out',
          'Redis has not answered since a command timed out',
          'Redis has not answered since a command timed out',
        ]);

        // Once Redis answers again, the key holds nothing: neither the acquires it ran late nor the
        // lease released while it was paused.
        expect(await eventually(async () => (await observer.zcard(prefix + key)) === 0)).toBe(true);
        // Only the cold store's late acquire took a slot (and it was given back); the warm one's
        // came past its deadline and took nothing.
        expect(await eventually(async () => changes.filter((change) => change === 'zrem').length >= 2)).toBe(true);
        expect(changes.filter((change) => change === 'zadd')).toHaveLength(2);
        const again = [await warm.acquire(key, 2), await cold.acquire(key, 2)];
        expect(again).toEqual([expect.any(String), expect.any(String)]);
        expect(await warm.acquire(key, 2)).toBeUndefined();
        expect(failures).toEqual([]);
      });
    });

    describe('two gateways sharing it', () => {
      let replicas: RunningGateway[] = [];

      beforeAll(async () => {
        const config = {
          redis: { url: redis.url, keyPrefix: `gantry-outage:${Date.now()}:` },
          auth: {
            apiKeys: [PAUSED_KEY, RESTARTED_KEY, { name: 'budgeted', key: BUDGET_KEY, limits: { tokensPerMinute: 3 } }],
            limits: { concurrentStreams: MAX_STREAMS, store: 'redis' },
          },
          models: [
            { name: 'slow', engine: 'stub', tokenIntervalMs: 100 },
            { name: 'quick', engine: 'stub' },
          ],
        };
        replicas = await Promise.all([startGateway(config), startGateway(config)]);
        for (const key of [PAUSED_KEY, RESTARTED_KEY])
          expect((await untilEnforced(replicas, key)).admitted).toBe(MAX_STREAMS);
        // The budgeted tenant's first answer (2 tokens) leaves 1 of its minute's 3, too little for the next one (prompt + 1), on both replicas (one Redis).
        expect(await quickRequest(replicas[0].url, BUDGET_KEY)).toBe(200);
        expect(await eventually(() => budgetSpent(replicas))).toBe(true);
      });

      afterAll(async () => {
        await Promise.all(replicas.map((replica) => replica.close()));
      });

      it('lets requests through at once while Redis is paused, and admits the key at once when it resumes', async () => {
        // Two streams take slots before the pause and end during it: their slots must come back.
        const before = [await openStream(replicas[0].url, PAUSED_KEY), await openStream(replicas[1].url, PAUSED_KEY)];
        expect(before.map((stream) => stream.status)).toEqual([200, 200]);

        await redis.pause();
        let statuses: number[];
        let pausedMs: number;
        try {
          for (const stream of before) stream.close();
          const started = Date.now();
          statuses = [];
          for (let index = 0; index < 16; index += 1)
            statuses.push(await quickRequest(replicas[index % 2].url, PAUSED_KEY));
          // Streams opened during the outage get no slot, but they are let through as well.
          const during = await Promise.all(
            Array.from({ length: 6 }, (_, index) => openStream(replicas[index % 2].url, PAUSED_KEY)),
          );
          for (const stream of during) stream.close();
          statuses.push(...during.map((stream) => stream.status));
          // The token budget cannot be reserved in: the tenant is let through too (failing open).
          for (let index = 0; index < 4; index += 1)
            statuses.push(await quickRequest(replicas[index % 2].url, BUDGET_KEY));
          pausedMs = Date.now() - started;
        } finally {
          redis.resume();
        }

        // The very next request of the key is admitted: nothing taken during the outage is left behind.
        const afterResume = await openStream(replicas[1].url, PAUSED_KEY);
        afterResume.close();
        expect({ status: afterResume.status, code: afterResume.code }).toEqual({ status: 200, code: undefined });
        expect.soft(statuses).toEqual(Array.from({ length: 26 }, () => 200));
        // 26 requests met a paused Redis: a short timeout at most each, not seconds.
        expect.soft(pausedMs).toBeLessThan(5_000);
        // The budget applies again: what was spent before the pause still counts.
        expect(await eventually(() => budgetSpent(replicas))).toBe(true);

        const enforced = await untilEnforced(replicas, PAUSED_KEY);
        expect(enforced.admitted).toBe(MAX_STREAMS);
        expect({ status: enforced.extra.status, code: enforced.extra.code }).toEqual({
          status: 429,
          code: 'concurrency_limit_exceeded',
        });

        // The outage is counted, by operation, on each replica that saw it.
        for (const replica of replicas) {
          const samples = await scrape(replica.url);
          expect(valueOf(samples, 'gantry_limit_store_errors_total', { operation: 'acquire' })).toBeGreaterThanOrEqual(
            1,
          );
          expect(valueOf(samples, 'gantry_limit_store_errors_total', { operation: 'reserve' })).toBeGreaterThanOrEqual(
            1,
          );
        }
      }, 60_000);

      it('lets requests through while Redis is down, and admits the key at once when it restarts', async () => {
        const before = [
          await openStream(replicas[0].url, RESTARTED_KEY),
          await openStream(replicas[1].url, RESTARTED_KEY),
        ];
        expect(before.map((stream) => stream.status)).toEqual([200, 200]);

        await redis.kill();
        const statuses: number[] = [];
        const started = Date.now();
        for (const stream of before) stream.close();
        for (let index = 0; index < 16; index += 1)
          statuses.push(await quickRequest(replicas[index % 2].url, RESTARTED_KEY));
        const during = await Promise.all(
          Array.from({ length: 6 }, (_, index) => openStream(replicas[index % 2].url, RESTARTED_KEY)),
        );
        statuses.push(...during.map((stream) => stream.status));
        const downMs = Date.now() - started;

        await redis.start();
        for (const stream of during) stream.close();
        // Once both replicas are connected again, the very next request of the key is admitted.
        const reconnectedBy = Date.now() + 10_000;
        while ((await otherClients(redis.port)) < replicas.length && Date.now() < reconnectedBy)
          await new Promise((resolve) => setTimeout(resolve, 20));
        const afterRestart = await openStream(replicas[0].url, RESTARTED_KEY);
        afterRestart.close();
        expect({ status: afterRestart.status, code: afterRestart.code }).toEqual({ status: 200, code: undefined });
        expect.soft(statuses).toEqual(Array.from({ length: 22 }, () => 200));
        expect.soft(downMs).toBeLessThan(5_000);

        const enforced = await untilEnforced(replicas, RESTARTED_KEY);
        expect(enforced.admitted).toBe(MAX_STREAMS);
        expect({ status: enforced.extra.status, code: enforced.extra.code }).toEqual({
          status: 429,
          code: 'concurrency_limit_exceeded',
        });
      }, 60_000);
    });
  },
);
