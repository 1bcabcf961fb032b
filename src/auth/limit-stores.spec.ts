import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { LimitStore } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { RedisLimitStore } from './redis-limit-store.js';

// .ci/run starts a redis-server and always sets this; a developer without Redis may leave it unset.
const REDIS_URL = process.env.GANTRY_TEST_REDIS_URL;
if (REDIS_URL === undefined && process.env.CI) {
  throw new Error('GANTRY_TEST_REDIS_URL must be set in CI (.ci/run starts redis-server and sets it)');
}

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

  it('counts hits in a window that opens at the first hit and resets after it', async () => {
    const limits = store();
    const key = `rpm:${randomUUID()}`;
    expect((await limits.hit(key, 300)).count).toBe(1);
    const second = await limits.hit(key, 300);
    expect(second.count).toBe(2);
    expect(second.resetInMs).toBeGreaterThan(0);
    expect(second.resetInMs).toBeLessThanOrEqual(300);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect((await limits.hit(key, 300)).count).toBe(1);
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

  it('charges token windows that open at the first charge, reads them without counting, and resets them after', async () => {
    const limits = store();
    const minute = `tpm:${randomUUID()}`;
    const day = `tpd:${randomUUID()}`;
    expect(await limits.peek([minute, day])).toEqual([
      { count: 0, resetInMs: 0 },
      { count: 0, resetInMs: 0 },
    ]);
    await limits.charge([
      { key: minute, amount: 120, windowMs: 300 },
      { key: day, amount: 120, windowMs: 60_000 },
    ]);
    await limits.charge([{ key: minute, amount: 30, windowMs: 300 }]);
    const [afterMinute, afterDay] = await limits.peek([minute, day]);
    expect(afterMinute.count).toBe(150);
    expect(afterMinute.resetInMs).toBeGreaterThan(0);
    expect(afterMinute.resetInMs).toBeLessThanOrEqual(300);
    expect(afterDay.count).toBe(120);
    expect(afterDay.resetInMs).toBeGreaterThan(300);
    expect((await limits.peek([minute]))[0].count).toBe(150);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await limits.peek([minute])).toEqual([{ count: 0, resetInMs: 0 }]);
    expect((await limits.peek([day]))[0].count).toBe(120);
  });

  it('keeps counts exact under concurrent callers', async () => {
    const limits = store();
    const key = `streams:${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 50 }, () => limits.acquire(key, 10)));
    expect(results.filter((lease) => lease !== undefined)).toHaveLength(10);
    const hits = await Promise.all(Array.from({ length: 50 }, () => limits.hit(`rpm:${key}`, 60_000)));
    expect(hits.map((hit) => hit.count).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, index) => index + 1),
    );
    await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        limits.charge([{ key: `tpm:${key}`, amount: index + 1, windowMs: 60_000 }]),
      ),
    );
    expect((await limits.peek([`tpm:${key}`]))[0].count).toBe(1275);
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
    expect((await replicaA.hit(`rpm:${key}`, 60_000)).count).toBe(1);
    expect((await replicaB.hit(`rpm:${key}`, 60_000)).count).toBe(2);
    await replicaA.charge([{ key: `tpm:${key}`, amount: 700, windowMs: 60_000 }]);
    await replicaB.charge([{ key: `tpm:${key}`, amount: 300, windowMs: 60_000 }]);
    expect((await replicaB.peek([`tpm:${key}`]))[0].count).toBe(1000);
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
    await expect(unreachable.peek(['tpm:x'])).rejects.toThrow();
    await expect(unreachable.charge([{ key: 'tpm:x', amount: 1, windowMs: 1000 }])).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
