import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/config-loader.js';
import { createResponseStore } from './create-response-store.js';
import type { ResponseStore } from './response-store.js';
import {
  events,
  failureOf,
  finishedRecord,
  firstValue,
  startedRecord,
} from '../../test/support/response-store-contract.js';
import { TEST_REDIS_URL } from '../../test/support/test-redis-url.js';

const REDIS_URL = TEST_REDIS_URL;
// One prefix per run, so runs sharing a Redis never see each other's keys.
const PREFIX = `gantry-test:responses:${randomUUID()}:`;

const stores: ResponseStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
});

describe('createResponseStore', () => {
  it('makes none for store: off, and a memory store with the configured bounds by default', async () => {
    expect(createResponseStore(parseConfig({ responses: { store: 'off' } }).responses)).toBeUndefined();
    const memory = createResponseStore(
      parseConfig({ responses: { maxStoredResponses: 1, maxEventsPerResponse: 16 } }).responses,
    )!;
    stores.push(memory);
    expect(memory.kind).toBe('memory');
    const [first, second] = [finishedRecord(), finishedRecord()];
    await memory.create(first);
    await memory.append(first.response.id, events(0, 19), true);
    expect((await failureOf(firstValue(memory.events(first.response.id, -1)))).kind).toBe('invalid_request');
    await memory.create(second);
    expect(await memory.get(first.response.id)).toBeUndefined();
  });

  it.skipIf(REDIS_URL === undefined)(
    'makes a Redis store on the redis section, its key prefix followed by responses:, with the configured TTL and bounds',
    async () => {
      const config = parseConfig({
        redis: { url: REDIS_URL, keyPrefix: `${PREFIX}configured:` },
        responses: { store: 'redis', ttlSeconds: 120, maxEventsPerResponse: 16 },
      });
      const prefix = `${PREFIX}configured:responses:`;
      const redis = createResponseStore(config.responses)!;
      stores.push(redis);
      expect(redis.kind).toBe('redis');
      const record = startedRecord();
      await redis.create(record);
      await redis.append(record.response.id, events(0, 19), true);
      expect((await failureOf(firstValue(redis.events(record.response.id, -1)))).kind).toBe('invalid_request');
      const admin = new Redis(REDIS_URL!);
      try {
        const ttl = await admin.pttl(`${prefix}r:${record.response.id}`);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(120_000);
      } finally {
        // This run's keys go with it (the Redis store's own spec clears its prefix the same way).
        const keys = await admin.keys(`${PREFIX}*`);
        if (keys.length > 0) await admin.del(...keys);
        admin.disconnect();
      }
    },
  );
});
