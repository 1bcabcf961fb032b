import { InstanceLimitStore } from '../auth/limit-store.js';
import type { WindowCount } from '../auth/limit-store.js';
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

  async acquire(key: string, max: number): Promise<string | undefined> {
    return (await this.channel.call<string | null>('acquire', { key, max })) ?? undefined;
  }

  async release(key: string, lease: string): Promise<void> {
    this.channel.notify('releaseLease', { key, lease });
  }

  async close(): Promise<void> {}
}
