import { InstanceLimitStore } from '../auth/limit-store.js';
import type {
  BudgetWindow,
  Reservation,
  ReservationAsk,
  ReservationRefusal,
  WindowCount,
} from '../auth/limit-store.js';
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

  hit(key: string, windowMs: number, limit: number): Promise<WindowCount> {
    return this.channel.call<WindowCount>('hit', { key, windowMs, limit });
  }

  reserve(ask: ReservationAsk): Promise<Reservation | ReservationRefusal> {
    return this.channel.call<Reservation | ReservationRefusal>('reserveTokens', { ask });
  }

  /** Told, not asked: a settlement the primary never gets (it is gone) has nothing left to limit. */
  async settle(budgets: readonly BudgetWindow[], reservation: Reservation, used: number): Promise<void> {
    this.channel.notify('settleTokens', { budgets, reservation, used });
  }

  async acquire(key: string, max: number): Promise<string | undefined> {
    return (await this.channel.call<string | null>('acquire', { key, max })) ?? undefined;
  }

  async release(key: string, lease: string): Promise<void> {
    this.channel.notify('releaseLease', { key, lease });
  }

  async close(): Promise<void> {}
}
