import { describe, expect, it } from 'vitest';
import type { Reservation } from '../auth/limit-store.js';
import { InstanceLimits } from './instance-limits.js';
import { IpcChannel, type ChannelMessage } from './ipc-channel.js';
import { serveLimits } from './primary-handlers.js';
import { PrimaryLimitStore } from './primary-limit-store.js';

/** Workers' limit stores linked to one primary's InstanceLimits by in-memory channels, as over IPC. */
function instance(count: number) {
  const limits = new InstanceLimits();
  const stores = Array.from({ length: count }, (_, index) => {
    const worker = index + 1;
    let workerSide: IpcChannel | undefined;
    const primarySide = new IpcChannel((message: ChannelMessage) => setImmediate(() => workerSide!.receive(message)));
    workerSide = new IpcChannel((message: ChannelMessage) => setImmediate(() => primarySide.receive(message)));
    serveLimits(primarySide, worker, limits);
    return new PrimaryLimitStore(workerSide);
  });
  return { limits, stores };
}

const settle = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('per-key limits of store: memory across workers (PrimaryLimitStore, InstanceLimits)', () => {
  it('counts one window and one set of slots for the instance', async () => {
    const { stores } = instance(2);
    expect((await stores[0].hit('rpm:k', 60_000, 5)).count).toBe(1);
    expect((await stores[1].hit('rpm:k', 60_000, 5)).count).toBe(2);
    const lease = await stores[0].acquire('streams:k', 1);
    expect(lease).toEqual(expect.any(String));
    expect(await stores[1].acquire('streams:k', 1)).toBeUndefined();
    await stores[0].release('streams:k', lease!);
    await settle();
    expect(await stores[1].acquire('streams:k', 1)).toEqual(expect.any(String));
  });

  it('reserves in one budget for the instance: concurrent asks from every worker never overshoot it, settled from any', async () => {
    const { stores } = instance(2);
    const budgets = [
      { key: 'tpm:t', limit: 400, windowMs: 60_000 },
      { key: 'tpd:t', limit: 10_000, windowMs: 86_400_000 },
    ];
    // 16 streams of 60 tokens at once, from two workers, against 400: six fit.
    const asks = await Promise.all(
      Array.from({ length: 16 }, (_, index) => stores[index % 2].reserve({ budgets, promptTokens: 10, maxTokens: 50 })),
    );
    const held = asks.filter((ask): ask is Reservation => 'reserved' in ask);
    expect(held).toHaveLength(6);
    expect(asks.find((ask) => 'refusedBy' in ask)).toMatchObject({ refusedBy: 0 });
    // Settled by the other worker: each used 20, so 280 are back.
    for (const reservation of held) await stores[1].settle(budgets, reservation, 20);
    await settle();
    expect(await stores[0].reserve({ budgets, promptTokens: 10 })).toMatchObject({ outputTokens: 400 - 120 - 10 });
  });

  it('slides the requests window for the instance', async () => {
    const { stores } = instance(2);
    expect(await stores[0].hit('rpm:s', 600, 1)).toMatchObject({ count: 1 });
    const refused = await stores[1].hit('rpm:s', 600, 1);
    expect(refused.count).toBe(2);
    expect(refused.resetInMs).toBeLessThanOrEqual(610);
  });

  it("gives a dead worker's leases back at once", async () => {
    const { limits, stores } = instance(2);
    expect(await stores[0].acquire('streams:k', 2)).toBeDefined();
    expect(await stores[0].acquire('streams:k', 2)).toBeDefined();
    expect(await stores[1].acquire('streams:k', 2)).toBeUndefined();
    expect(await limits.releaseWorker(1)).toBe(2);
    expect(await stores[1].acquire('streams:k', 2)).toEqual(expect.any(String));
  });

  it('fails a call when the primary is gone (the limiter then lets the request through)', async () => {
    const store = new PrimaryLimitStore(
      new IpcChannel(() => {
        throw new Error('channel closed');
      }),
    );
    await expect(store.hit('rpm:k', 1000, 5)).rejects.toMatchObject({ kind: 'unavailable' });
  });
});
