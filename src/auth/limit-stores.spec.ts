import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { LimitStore, Reservation, ReservationRefusal } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { RedisLimitStore } from './redis-limit-store.js';
import { TEST_REDIS_URL } from '../../test/support/test-redis-url.js';

const REDIS_URL = TEST_REDIS_URL;

const stores: LimitStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
});

/** The same contract for both stores; each test uses fresh keys so runs never see each other. */
function limitStoreContract(makeStore: () => LimitStore) {
  const store = () => {
    const made = makeStore();
    stores.push(made);
    return made;
  };

  it('counts hits in a sliding window: a refused hit is not counted, and room comes back a window after each hit', async () => {
    const limits = store();
    const key = `rpm:${randomUUID()}`;
    expect(await limits.hit(key, 600, 2)).toMatchObject({ count: 1 });
    expect((await limits.hit(key, 600, 2)).count).toBe(2);
    const refused = await limits.hit(key, 600, 2);
    expect(refused.count).toBe(3);
    expect(refused.resetInMs).toBeGreaterThan(0);
    expect(refused.resetInMs).toBeLessThanOrEqual(610);
    await new Promise((resolve) => setTimeout(resolve, 650));
    expect((await limits.hit(key, 600, 2)).count).toBe(1);
  });

  it('holds over any span of the window: no twice the limit across where a fixed window would have closed', async () => {
    const limits = store();
    const key = `rpm:${randomUUID()}`;
    const windowMs = 1_200;
    // The first hit, then the rest of the limit late in its window.
    expect((await limits.hit(key, windowMs, 4)).count).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 800));
    for (let count = 2; count <= 4; count += 1) expect((await limits.hit(key, windowMs, 4)).count).toBe(count);
    // Past where a window opened by the first hit closes, within a window of the last three.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await limits.hit(key, windowMs, 4)).count).toBe(4);
    expect((await limits.hit(key, windowMs, 4)).count).toBe(5);
    expect((await limits.hit(key, windowMs, 4)).count).toBe(5);
  });

  it('reserves worst cases in every budget at once, refuses what does not fit, and settles to what was used', async () => {
    const limits = store();
    const budgets = [
      { key: `tpm:${randomUUID()}`, limit: 100, windowMs: 600 },
      { key: `tpd:${randomUUID()}`, limit: 150, windowMs: 60_000 },
    ];
    const first = await limits.reserve({ budgets, promptTokens: 20, maxTokens: 50 });
    expect(first).toMatchObject({ outputTokens: 50, reserved: 70 });
    const refused = await limits.reserve({ budgets, promptTokens: 20, maxTokens: 20 });
    expect(refused).toMatchObject({ refusedBy: 0 });
    expect((refused as ReservationRefusal).retryInMs).toBeGreaterThan(0);
    expect((refused as ReservationRefusal).retryInMs).toBeLessThanOrEqual(610);
    // Without max_tokens: what every budget leaves (the minute's 30, less the prompt), at most the cap.
    expect(await limits.reserve({ budgets, promptTokens: 10, outputCap: 100 })).toMatchObject({ outputTokens: 20 });
    await limits.settle(budgets, first as Reservation, 25);
    expect(await limits.reserve({ budgets, promptTokens: 10, outputCap: 20 })).toMatchObject({ outputTokens: 20 });
    // The minute window slides on; the day holds 25 + 30 + 30.
    await new Promise((resolve) => setTimeout(resolve, 650));
    expect(await limits.reserve({ budgets, promptTokens: 10 })).toMatchObject({ outputTokens: 150 - 85 - 10 });
    expect(await limits.reserve({ budgets, promptTokens: 1 })).toMatchObject({ refusedBy: 1 });
  });

  it('hands out at most max slots as leases and takes each back once', async () => {
    const limits = store();
    const key = `streams:${randomUUID()}`;
    const first = await limits.acquire(key, 2);
    const second = await limits.acquire(key, 2);
    expect(first).toEqual(expect.any(String));
    expect(second).toEqual(expect.any(String));
    expect(first).not.toBe(second);
    expect(await limits.acquire(key, 2)).toBeUndefined();
    await limits.release(key, first!);
    const third = await limits.acquire(key, 2);
    expect(third).toEqual(expect.any(String));
    // Releasing the same lease again gives back nothing more.
    await limits.release(key, first!);
    expect(await limits.acquire(key, 2)).toBeUndefined();
    await limits.release(key, second!);
    await limits.release(key, third!);
    expect(await limits.acquire(key, 1)).toEqual(expect.any(String));
    expect(await limits.acquire(key, 1)).toBeUndefined();
  });

  it('keeps counts exact under concurrent callers', async () => {
    const limits = store();
    const key = `streams:${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 50 }, () => limits.acquire(key, 10)));
    expect(results.filter((lease) => lease !== undefined)).toHaveLength(10);
    const hits = await Promise.all(Array.from({ length: 50 }, () => limits.hit(`rpm:${key}`, 60_000, 30)));
    expect(hits.filter((hit) => hit.count <= 30)).toHaveLength(30);
    // 16 streams of 60 tokens at once against 400: six fit, never more.
    const budgets = [{ key: `tpm:${key}`, limit: 400, windowMs: 60_000 }];
    const asks = await Promise.all(
      Array.from({ length: 16 }, () => limits.reserve({ budgets, promptTokens: 10, maxTokens: 50 })),
    );
    expect(asks.filter((ask) => 'reserved' in ask)).toHaveLength(6);
  });
}

describe('MemoryLimitStore', () => {
  limitStoreContract(() => new MemoryLimitStore());
});

describe.skipIf(REDIS_URL === undefined)('RedisLimitStore against a real redis-server (GANTRY_TEST_REDIS_URL)', () => {
  const prefix = `gantry-test:${randomUUID()}:`;
  limitStoreContract(() => new RedisLimitStore(REDIS_URL!, { prefix }));

  it('shares the counts between replicas (two connections)', async () => {
    const replicaA = new RedisLimitStore(REDIS_URL!, { prefix });
    const replicaB = new RedisLimitStore(REDIS_URL!, { prefix });
    stores.push(replicaA, replicaB);
    const key = `streams:${randomUUID()}`;
    const lease = await replicaA.acquire(key, 1);
    expect(lease).toEqual(expect.any(String));
    expect(await replicaB.acquire(key, 1)).toBeUndefined();
    await replicaA.release(key, lease!);
    expect(await replicaB.acquire(key, 1)).toEqual(expect.any(String));
    expect((await replicaA.hit(`rpm:${key}`, 60_000, 5)).count).toBe(1);
    expect((await replicaB.hit(`rpm:${key}`, 60_000, 5)).count).toBe(2);
    const budgets = [{ key: `tpm:${key}`, limit: 1000, windowMs: 60_000 }];
    const held = await replicaA.reserve({ budgets, promptTokens: 100, maxTokens: 600 });
    expect(await replicaB.reserve({ budgets, promptTokens: 100, maxTokens: 300 })).toMatchObject({ refusedBy: 0 });
    await replicaA.settle(budgets, held as Reservation, 400);
    expect(await replicaB.reserve({ budgets, promptTokens: 100, maxTokens: 300 })).toMatchObject({ reserved: 400 });
  });

  it('frees the leases of a replica that died, even while the key stays busy, and keeps those of a live one', async () => {
    const leaseTtlMs = 300;
    const dying = new RedisLimitStore(REDIS_URL!, { prefix, leaseTtlMs });
    const live = new RedisLimitStore(REDIS_URL!, { prefix, leaseTtlMs });
    stores.push(dying, live);
    const key = `streams:${randomUUID()}`;
    expect(await dying.acquire(key, 2)).toEqual(expect.any(String));
    const kept = await live.acquire(key, 2);
    expect(kept).toEqual(expect.any(String));
    await dying.close(); // it never releases, and no longer renews
    // The key stays busy meanwhile: a third replica takes and gives back leases all along.
    const busy = new RedisLimitStore(REDIS_URL!, { prefix, leaseTtlMs });
    stores.push(busy);
    const deadline = Date.now() + 2_000;
    let freed = false;
    while (!freed && Date.now() < deadline) {
      const lease = await busy.acquire(key, 2);
      if (lease !== undefined) {
        freed = true;
        await busy.release(key, lease);
      } else {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(freed).toBe(true);
    // The live replica renewed its lease: it still counts, well past one lease lifetime.
    await new Promise((resolve) => setTimeout(resolve, leaseTtlMs * 2));
    expect(await busy.acquire(key, 1)).toBeUndefined();
    await live.release(key, kept!);
    expect(await busy.acquire(key, 1)).toEqual(expect.any(String));
  });

  it('fails fast (so the limiter can fail open) when Redis cannot be reached', async () => {
    const unreachable = new RedisLimitStore('redis://127.0.0.1:1', { commandTimeoutMs: 200 });
    stores.push(unreachable);
    const started = Date.now();
    await expect(unreachable.acquire('streams:x', 1)).rejects.toThrow();
    const budgets = [{ key: 'tpm:x', limit: 10, windowMs: 1000 }];
    await expect(unreachable.reserve({ budgets, promptTokens: 1 })).rejects.toThrow();
    await expect(unreachable.settle(budgets, { outputTokens: 1, reserved: 2, slices: [0] }, 1)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
