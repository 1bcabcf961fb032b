import { randomUUID } from 'node:crypto';
import { subscribe as subscribeChannel, unsubscribe as unsubscribeChannel } from 'node:diagnostics_channel';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../test/support/gateway.js';
import { RedisResponseStore, type RedisResponseStoreOptions } from './redis-response-store.js';
import type { ResponseStore, ResponseStoreOperation } from './response-store.js';
import { freePort } from '../../test/support/free-port.js';
import {
  event,
  events,
  failureOf,
  firstValue,
  follow,
  message,
  newId,
  responseObject,
  responseStoreContract,
  sequences,
  startedRecord,
  type Follower,
} from '../../test/support/response-store-contract.js';
import { TEST_REDIS_URL } from '../../test/support/test-redis-url.js';

const REDIS_URL = TEST_REDIS_URL;
// One prefix per run, so runs sharing a Redis never see each other's keys.
const PREFIX = `gantry-test:responses:${randomUUID()}:`;

const stores: ResponseStore[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  for (const cleanup of cleanups) await cleanup();
});

/**
 * A TCP relay to Redis that a test can cut (connections reset, new ones refused) and restore, and
 * whose subscriber connections (named by the store at connect) it can hold: what they send waits.
 */
class RedisRelay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private down = false;
  private holding = false;
  /** What subscriber connections sent while held, in order, with where it goes. */
  private held: { upstream: Socket; chunk: Buffer }[] = [];
  port = 0;

  constructor(private readonly target: URL) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Whether anything a subscriber connection sent is waiting. */
  get holdingSomething(): boolean {
    return this.held.length > 0;
  }

  async start(): Promise<void> {
    this.port = await freePort();
    this.server = createServer((client) => {
      if (this.down) return client.destroy();
      const upstream = connect(Number(this.target.port), this.target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      let subscriber = false;
      client.on('data', (chunk: Buffer) => {
        subscriber ||= chunk.includes('gantry-responses-subscriber');
        if (subscriber && this.holding) this.held.push({ upstream, chunk });
        else upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  holdSubscribers(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    for (const { upstream, chunk } of this.held.splice(0)) upstream.write(chunk);
  }

  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.down = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

describe.skipIf(REDIS_URL === undefined)(
  'RedisResponseStore against a real redis-server (GANTRY_TEST_REDIS_URL)',
  () => {
    // No safety poll during a test: what a test sees comes from notifications and reads alone.
    const options: RedisResponseStoreOptions = { prefix: PREFIX, commandTimeoutMs: 500, pollIntervalMs: 60_000 };
    const replica = (extra: Partial<RedisResponseStoreOptions> = {}, url = REDIS_URL!) => {
      const made = new RedisResponseStore(url, { ...options, ...extra });
      stores.push(made);
      return made;
    };
    const admin = new Redis(REDIS_URL ?? 'redis://127.0.0.1:1', { lazyConnect: true });
    cleanups.push(async () => {
      if (admin.status !== 'wait') {
        const keys = await admin.keys(`${PREFIX}*`);
        if (keys.length > 0) await admin.del(...keys);
      }
      admin.disconnect();
    });

    responseStoreContract((contractOptions) => new RedisResponseStore(REDIS_URL!, { ...options, ...contractOptions }));

    it('shares everything between replicas: responses, items, events (replay and live), cancels and deletes', async () => {
      const a = replica();
      const b = replica();
      const record = startedRecord();
      const id = record.response.id;
      await a.create(record);
      expect(await b.get(id)).toEqual(record);
      await a.append(id, events(0, 3), false);
      const follower = follow(b.events(id, 1));
      expect(await eventually(() => follower.seen.length === 2)).toBe(true);
      let cancelled = false;
      a.cancelRequests(id).subscribe(() => (cancelled = true));
      await b.requestCancel(id);
      expect(await eventually(() => cancelled)).toBe(true);
      const answer = message('assistant', 'done');
      await a.append(id, events(4, 5), true);
      await a.update(responseObject(id, 'cancelled', [answer]));
      expect(await follower.done).toEqual(sequences(2, 5));
      expect((await b.items([answer.id])).get(answer.id)).toEqual(answer);

      const second = startedRecord();
      await b.create(second);
      await b.append(second.response.id, [event(0)], false);
      const watching = follow(a.events(second.response.id, -1));
      expect(await eventually(() => watching.seen.length === 1)).toBe(true);
      expect(await a.delete(second.response.id)).toBe(true);
      expect((await failureOf(watching.done)).kind).toBe('not_found');
      expect(await b.get(second.response.id)).toBeUndefined();
    });

    it('gives followers on another replica each event once and in order, whenever they join', async () => {
      const producer = replica();
      const reader = replica();
      const record = startedRecord();
      const id = record.response.id;
      await producer.create(record);
      const followers: { after: number; follower: Follower }[] = [];
      let next = 0;
      for (let batch = 0; batch < 40; batch++) {
        const appended = producer.append(id, events(next, next + 2), batch === 39);
        followers.push({ after: next - 1, follower: follow(reader.events(id, next - 1)) });
        await appended;
        next += 3;
      }
      for (const { after, follower } of followers) expect(await follower.done).toEqual(sequences(after + 1, next - 1));
    });

    it("does not miss events appended between a follower's subscription and its first read (it subscribes, then reads)", async () => {
      const relay = new RedisRelay(new URL(REDIS_URL!));
      await relay.start();
      cleanups.push(() => relay.close());
      const producer = replica();
      const reader = replica({ commandTimeoutMs: 5_000 }, relay.url);
      const record = startedRecord();
      const id = record.response.id;
      await producer.create(record);
      await producer.append(id, events(0, 2), false);
      await reader.get(id);
      // The reader's SUBSCRIBE waits in the relay while the producer appends the rest: its notice goes to nobody.
      relay.holdSubscribers();
      const follower = follow(reader.events(id, -1));
      expect(await eventually(() => relay.holdingSomething)).toBe(true);
      await producer.append(id, events(3, 5), true);
      relay.release();
      expect(await eventually(() => follower.seen.length === 6, 5_000)).toBe(true);
      expect(await follower.done).toEqual(sequences(0, 5));
    });

    it('shares one subscription between the followers of a response, and drops it when the last one leaves', async () => {
      const responses = replica();
      const record = startedRecord();
      const id = record.response.id;
      await responses.create(record);
      await responses.append(id, [event(0)], false);
      const followers = Array.from({ length: 10 }, () => follow(responses.events(id, -1)));
      expect(await eventually(() => followers.every((follower) => follower.seen.length === 1))).toBe(true);
      const channel = `${PREFIX}n:${id}`;
      const subscribers = async () => ((await admin.pubsub('NUMSUB', channel)) as [string, number])[1];
      expect(await subscribers()).toBe(1);
      for (const follower of followers) follower.stop();
      const deadline = Date.now() + 3_000;
      while ((await subscribers()) !== 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await subscribers()).toBe(0);
    });

    it('appends a batch of events in one command', async () => {
      const responses = replica();
      const record = startedRecord();
      const id = record.response.id;
      await responses.create(record);
      await responses.append(id, [event(0)], false);
      const commands: string[] = [];
      const onCommand = (message: unknown) => commands.push((message as { command: string }).command);
      subscribeChannel('tracing:ioredis:command:start', onCommand);
      try {
        await responses.append(id, events(1, 200), false);
      } finally {
        unsubscribeChannel('tracing:ioredis:command:start', onCommand);
      }
      expect(commands).toHaveLength(1);
      const follower = follow(responses.events(id, 190));
      expect(await eventually(() => follower.seen.length === 10)).toBe(true);
      follower.stop();
      expect(follower.seen).toEqual(sequences(191, 200));
    });

    it('puts a TTL on every key it writes, at most ttlSeconds', async () => {
      const responses = replica({ ttlSeconds: 600 });
      const record = startedRecord();
      const id = record.response.id;
      const answer = message('assistant', 'bye');
      await responses.create(record);
      await responses.append(id, events(0, 2), false);
      await responses.requestCancel(id);
      await responses.update(responseObject(id, 'completed', [answer]));
      await responses.append(id, [event(3)], true);
      const own = [
        ...(await admin.keys(`${PREFIX}*${id}`)),
        ...[...record.inputItems, answer].map((item) => `${PREFIX}i:${item.id}`),
      ];
      expect(own).toHaveLength(5 + 4);
      for (const key of own) {
        const ttl = await admin.pttl(key);
        expect(ttl, key).toBeGreaterThan(0);
        expect(ttl, key).toBeLessThanOrEqual(600_000);
      }
      // No key of any test in this run lives forever either.
      for (const key of await admin.keys(`${PREFIX}*`)) expect(await admin.pttl(key), key).toBeGreaterThan(0);
    });

    it('forgets a response and its items ttlSeconds after the last write', async () => {
      const responses = replica({ ttlSeconds: 1 });
      const record = startedRecord();
      await responses.create(record);
      await responses.append(record.response.id, [event(0)], false);
      expect(await responses.get(record.response.id)).toBeDefined();
      const deadline = Date.now() + 5_000;
      while ((await responses.get(record.response.id)) !== undefined && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await responses.get(record.response.id)).toBeUndefined();
      expect((await responses.items(record.inputItems.map((item) => item.id))).size).toBe(0);
      expect((await failureOf(firstValue(responses.events(record.response.id, -1)))).kind).toBe('not_found');
    });

    it('rejects every call quickly (unavailable) when Redis cannot be reached, and reports it', async () => {
      const port = await freePort();
      const failures: ResponseStoreOperation[] = [];
      const unreachable = replica({ commandTimeoutMs: 200 }, `redis://127.0.0.1:${port}`);
      unreachable.onFailure((operation) => failures.push(operation));
      const id = newId('resp');
      const started = Date.now();
      const calls: Promise<unknown>[] = [
        unreachable.create(startedRecord(id)),
        unreachable.update(responseObject(id, 'completed')),
        unreachable.get(id),
        unreachable.items(['msg_1']),
        unreachable.delete(id),
        unreachable.append(id, [event(0)], false),
        unreachable.requestCancel(id),
        firstValue(unreachable.events(id, -1)),
      ];
      for (const call of calls) expect((await failureOf(call)).kind).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(2_000);
      unreachable.cancelRequests(id).subscribe();
      expect(await eventually(() => failures.includes('connection') && failures.includes('cancel'))).toBe(true);
    });

    it('rejects within the command timeout when Redis accepts connections but never answers', async () => {
      // It reads what is sent (so a client's close ends the connection) and never answers.
      const accepted = new Set<Socket>();
      const silent = createServer((socket) => {
        accepted.add(socket);
        socket.resume();
      });
      const port = await freePort();
      await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
      cleanups.push(() => {
        for (const socket of accepted) socket.destroy();
        return new Promise<void>((resolve) => silent.close(() => resolve()));
      });
      const hung = replica({ commandTimeoutMs: 200 }, `redis://127.0.0.1:${port}`);
      const started = Date.now();
      expect((await failureOf(hung.get(newId('resp')))).kind).toBe('unavailable');
      expect((await failureOf(firstValue(hung.events(newId('resp'), -1)))).kind).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(2_000);
    });

    it('errors its followers when the connection drops, keeps its cancel listeners, and works again once Redis is back', async () => {
      const relay = new RedisRelay(new URL(REDIS_URL!));
      await relay.start();
      cleanups.push(() => relay.close());
      const direct = replica();
      const relayed = replica({ commandTimeoutMs: 300 }, relay.url);
      const failures: ResponseStoreOperation[] = [];
      relayed.onFailure((operation) => failures.push(operation));
      const record = startedRecord();
      const id = record.response.id;
      await direct.create(record);
      await direct.append(id, [event(0)], false);
      const follower = follow(relayed.events(id, -1));
      expect(await eventually(() => follower.seen.length === 1)).toBe(true);
      let cancelled = false;
      relayed.cancelRequests(id).subscribe(() => (cancelled = true));

      relay.cut();
      expect((await failureOf(follower.done)).kind).toBe('unavailable');
      expect((await failureOf(relayed.get(id))).kind).toBe('unavailable');
      expect(await eventually(() => failures.includes('connection'))).toBe(true);
      // A cancel requested while this replica is cut off still reaches its listener once it is back.
      await direct.requestCancel(id);
      relay.restore();
      expect(await eventually(() => cancelled, 10_000)).toBe(true);
      let back = false;
      const deadline = Date.now() + 10_000;
      while (!back && Date.now() < deadline) {
        back = (await relayed.get(id).catch(() => undefined)) !== undefined;
        if (!back) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(back).toBe(true);
      await direct.append(id, [event(1)], true);
      expect(await follow(relayed.events(id, -1)).done).toEqual([0, 1]);
    });
  },
);
