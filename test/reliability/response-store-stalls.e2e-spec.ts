import type { IncomingMessage, Server } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../apps/bench/loopback.js';
import { LifecycleService } from '../../src/lifecycle/lifecycle.service.js';
import { eventually, startGateway, type RunningGateway } from '../support/gateway.js';
import { scrape, valueOf } from '../support/prometheus.js';
import { startCli, writeConfig } from '../support/cli-process.js';
import { resettablePost } from '../support/raw-http.js';
import { REDIS_SERVER, RedisProcess } from '../support/redis-process.js';

// Background responses while the Redis behind a store stalls (a redis-server of this file's own,
// paused with SIGSTOP): clients that reset meanwhile, and runs that outlive their lease.

describe.skipIf(REDIS_SERVER === undefined)(
  'background responses through a response store that stalls (a redis-server of this file)',
  () => {
    const KEY = 'sk-gantry-outage-background-5c2f';
    let responsesRedis: RedisProcess;
    let limitsRedis: RedisProcess;

    beforeAll(async () => {
      responsesRedis = new RedisProcess(await freePort());
      limitsRedis = new RedisProcess(await freePort());
      await Promise.all([responsesRedis.start(), limitsRedis.start()]);
    });

    afterAll(async () => {
      await Promise.all([responsesRedis?.kill(), limitsRedis?.kill()]);
    });

    /** A gateway whose response store is the stalling Redis (a write waits out the stall rather than fail), or memory. */
    function backgroundGateway(
      limits: Record<string, unknown>,
      responses: 'redis' | 'memory' = 'redis',
    ): Promise<RunningGateway> {
      return startGateway({
        auth: { apiKeys: [KEY], limits },
        responses:
          responses === 'memory'
            ? { store: 'memory' }
            : {
                store: 'redis',
                redis: { url: responsesRedis.url, keyPrefix: `gantry-stall:${Date.now()}:`, timeoutMs: 20_000 },
              },
        models: [
          { name: 'stuck', engine: 'stub', prefillMs: 600_000 },
          { name: 'slow', engine: 'stub', tokenIntervalMs: 100 },
        ],
      });
    }

    /**
     * The same gateway as `server.workers: 2` (the CLI; the primary counts the key's slots for the
     * instance, `store: memory`), its Redis response store on the stalling Redis.
     */
    async function backgroundWorkers(): Promise<{ url: string; close: () => Promise<void> }> {
      const file = writeConfig(`server: { workers: 2 }
shutdown: { drainMs: 100 }
auth: { apiKeys: [${KEY}], limits: { concurrentStreams: 1 } }
responses: { store: redis, redis: { url: "${responsesRedis.url}", keyPrefix: "gantry-stall-workers:${Date.now()}:", timeoutMs: 20000 } }
models:
  - { name: stuck, engine: stub, prefillMs: 600000 }
`);
      const cli = startCli(['--config', file, '--port', '0']);
      const url = await cli.listening;
      return {
        url,
        close: async () => {
          cli.child.kill('SIGKILL');
          await cli.exited;
        },
      };
    }

    for (const [store, limits, processes] of [
      ['memory', {}, 'one process'],
      ['redis', { store: 'redis', redis: { keyPrefix: `gantry-stall-limits:${Date.now()}:` } }, 'one process'],
      // Each worker runs the same gateway, but its slots are the primary's and its requests land on either worker.
      ['memory', {}, 'server.workers: 2'],
    ] as const) {
      it(`holds a key to its one stream slot when background clients reset while their response is kept (${store} limit store, ${processes})`, async () => {
        const workers = processes !== 'one process';
        const gateway = workers
          ? await backgroundWorkers()
          : await backgroundGateway({
              concurrentStreams: 1,
              ...limits,
              ...(store === 'redis' ? { redis: { ...(limits as { redis: object }).redis, url: limitsRedis.url } } : {}),
            }).then((running) => ({
              url: running.url,
              close: () => {
                running.app.get(LifecycleService).endStreamsNow();
                return running.close();
              },
            }));
        const port = Number(new URL(gateway.url).port);
        // The instance's series, summed over the workers with server.workers.
        const gauge = async (name: string) => valueOf(await scrape(gateway.url), name, { model: 'stuck' });
        const accepted = () => gauge('gantry_active_requests');
        const statuses: number[] = [];
        try {
          await responsesRedis.pause();
          try {
            for (let index = 0; index < 5; index += 1) {
              const before = await accepted();
              const post = resettablePost(
                port,
                '/v1/responses',
                { authorization: `Bearer ${KEY}` },
                { model: 'stuck', input: `run ${index}`, background: true },
              );
              let status = 0;
              void post.answered.then((answered) => (status = answered));
              // Either it was accepted and now waits for its `queued` state to be kept, or it was refused at once.
              expect(await eventually(async () => status !== 0 || (await accepted()) > before)).toBe(true);
              await post.reset();
              statuses.push(status);
            }
          } finally {
            responsesRedis.resume();
          }
          // The writes land: one run at most, whatever the clients did meanwhile.
          expect(await eventually(async () => (await accepted()) <= 1, 25_000)).toBe(true);
          expect(await gauge('gantry_running_requests')).toBeLessThanOrEqual(1);
          expect(statuses.filter((status) => status === 429)).toHaveLength(4);
        } finally {
          await gateway.close();
        }
      }, 60_000);
    }

    it('starts no run for a background client that reset while its key was checked (the limit store stalls)', async () => {
      const gateway = await backgroundGateway(
        {
          concurrentStreams: 1,
          store: 'redis',
          redis: { url: limitsRedis.url, keyPrefix: `gantry-gone:${Date.now()}:`, timeoutMs: 20_000 },
        },
        'memory',
      );
      const port = Number(new URL(gateway.url).port);
      const server = gateway.app.getHttpServer() as Server;
      try {
        // Its body read whole, the request goes to the guard, which asks the stalled limit store.
        const bodyRead = new Promise<void>((resolve) =>
          server.once('request', (request: IncomingMessage) => request.once('end', () => setImmediate(resolve))),
        );
        await limitsRedis.pause();
        try {
          const post = resettablePost(
            port,
            '/v1/responses',
            { authorization: `Bearer ${KEY}` },
            { model: 'stuck', input: 'gone', background: true },
          );
          await bodyRead;
          await post.reset();
          expect(await eventually(async () => (await connectionsOf(server)) === 0)).toBe(true);
        } finally {
          limitsRedis.resume();
        }
        // A later request's check is answered after the first one's: by then the first has been served.
        // (One may still find the slot held until the first's lease is given back.)
        const next = () =>
          fetch(`${gateway.url}/v1/responses`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
            body: JSON.stringify({ model: 'slow', input: 'next', store: false }),
          }).then(async (response) => (await response.arrayBuffer(), response.status));
        expect(await eventually(async () => (await next()) === 200)).toBe(true);
        expect(gateway.registry.resolve('stuck').admission.running).toBe(0);
        expect(valueOf(await scrape(gateway.url), 'gantry_active_requests', { model: 'stuck' })).toBe(0);
      } finally {
        gateway.app.get(LifecycleService).endStreamsNow();
        await gateway.close();
      }
    }, 60_000);
  },
);

describe.skipIf(REDIS_SERVER === undefined)(
  'background runs through a Redis stall longer than their lease (a redis-server of this file)',
  () => {
    let redis: RedisProcess;
    let replicas: RunningGateway[] = [];
    const prefix = `gantry-lease:${Date.now()}:`;

    beforeAll(async () => {
      redis = new RedisProcess(await freePort());
      await redis.start();
      const config = {
        keepalive: { intervalMs: 100 },
        responses: { store: 'redis', redis: { url: redis.url, keyPrefix: prefix, timeoutMs: 200 } },
        models: [{ name: 'stuck', engine: 'stub', prefillMs: 600_000 }],
      };
      replicas = await Promise.all([startGateway(config), startGateway(config), startGateway(config)]);
    });

    afterAll(async () => {
      await Promise.all(replicas.map((replica) => replica.close()));
      await redis?.kill();
    });

    /** The response's status as a replica reads it, or its error status. */
    async function statusOn(replica: RunningGateway, id: string): Promise<string> {
      const response = await fetch(`${replica.url}/v1/responses/${id}`);
      const body = (await response.json()) as { status?: string };
      return response.ok ? body.status! : String(response.status);
    }

    it('does not read a run alive through the stall as left, and its end stands', async () => {
      const [runner, poller, idle] = replicas;
      const created = await fetch(`${runner.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'stuck', input: 'outlive the stall', background: true }),
      }).then((response) => response.json() as Promise<{ id: string }>);
      expect(await eventually(async () => (await statusOn(poller, created.id)) === 'in_progress')).toBe(true);
      const observer = new Redis(redis.url);
      const leaseUntil = async () =>
        JSON.parse((await observer.hget(`${prefix}r:${created.id}`, 'response'))!).gantry_lease_until as number;
      const lease = await leaseUntil();

      const seen: string[] = [];
      await redis.pause();
      // Longer than the lease by far: renewals sent into the stall run when it ends, until the store
      // drops its silent connection (after 5 s), so the lease kept then runs out 5 s + a lease after it.
      const stallUntil = lease + 5_000 + 3_000 + 2_000;
      try {
        // The poller gets 503s meanwhile.
        while (Date.now() <= stallUntil) {
          seen.push(await statusOn(poller, created.id));
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        redis.resume();
      }
      // Read at once after the stall, on the poller and on a replica that saw nothing of it, until the run renewed.
      while ((await leaseUntil()) === lease)
        seen.push(await statusOn(poller, created.id), await statusOn(idle, created.id));
      seen.push(await statusOn(poller, created.id), await statusOn(idle, created.id));
      observer.disconnect();
      expect(seen).not.toContain('failed');

      const cancelled = await fetch(`${idle.url}/v1/responses/${created.id}/cancel`, { method: 'POST' }).then(
        (response) => response.json() as Promise<{ status: string }>,
      );
      expect(cancelled.status).toBe('cancelled');
      seen.push(await statusOn(poller, created.id), await statusOn(runner, created.id));
      expect(new Set(seen)).toEqual(new Set(['503', 'in_progress', 'cancelled']));
      expect(seen.slice(-2)).toEqual(['cancelled', 'cancelled']);
    }, 60_000);
  },
);

/** Open connections of a Node server. */
function connectionsOf(server: Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}
