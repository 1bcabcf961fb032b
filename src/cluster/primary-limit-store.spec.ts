import { describe, expect, it } from 'vitest';
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
    expect((await stores[0].hit('rpm:k', 60_000)).count).toBe(1);
    expect((await stores[1].hit('rpm:k', 60_000)).count).toBe(2);
    const lease = await stores[0].acquire('streams:k', 1);
    expect(lease).toEqual(expect.any(String));
    expect(await stores[1].acquire('streams:k', 1)).toBeUndefined();
    await stores[0].release('streams:k', lease!);
    await settle();
    expect(await stores[1].acquire('streams:k', 1)).toEqual(expect.any(String));
  });

  it('keeps one token budget for the instance: charges from every worker, read by any', async () => {
    const { stores } = instance(2);
    await stores[0].charge([{ key: 'tpm:t', amount: 400, windowMs: 60_000 }]);
    await stores[1].charge([
      { key: 'tpm:t', amount: 100, windowMs: 60_000 },
      { key: 'tpd:t', amount: 100, windowMs: 86_400_000 },
    ]);
    await settle();
    const [minute, day] = await stores[0].peek(['tpm:t', 'tpd:t']);
    expect(minute.count).toBe(500);
    expect(day.count).toBe(100);
    expect(minute.resetInMs).toBeLessThanOrEqual(60_000);
    expect((await stores[1].peek(['tpm:other']))[0]).toEqual({ count: 0, resetInMs: 0 });
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
    await expect(store.hit('rpm:k', 1000)).rejects.toMatchObject({ kind: 'unavailable' });
  });
});
