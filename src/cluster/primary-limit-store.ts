import { InstanceLimitStore } from '../auth/limit-store.js';
import type { WindowCharge, WindowCount } from '../auth/limit-store.js';
import type { IpcChannel } from './ipc-channel.js';

/**
 * `store: memory` in a worker of several: the counts live in the primary, one store for the
 * instance. A call that fails (the primary is gone) fails like a Redis outage: the limiter lets
 * the request through.
 */
export class PrimaryLimitStore extends InstanceLimitStore {
  constructor(private readonly channel: IpcChannel) {
    super();
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.channel.call<WindowCount>('hit', { key, windowMs });
  }

  peek(keys: readonly string[]): Promise<WindowCount[]> {
    return this.channel.call<WindowCount[]>('peek', { keys });
  }

  /** Told, not asked: a charge the primary never gets (it is gone) has nothing left to limit. */
  async charge(charges: readonly WindowCharge[]): Promise<void> {
    this.channel.notify('charge', { charges });
  }

  async acquire(key: string, max: number): Promise<string | undefined> {
    return (await this.channel.call<string | null>('acquire', { key, max })) ?? undefined;
  }

  async release(key: string, lease: string): Promise<void> {
    this.channel.notify('releaseLease', { key, lease });
  }

  async close(): Promise<void> {}
}
