import type { ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { GatewayConfig } from '../config/gateway-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import { LimitStore } from './limit-store.js';

const MINUTE_MS = 60_000;

/**
 * Applies `auth.limits` to one authenticated request: requests per minute, then a concurrent
 * slot held until the response closes (the stream ended, the JSON answer left, or the client hung
 * up). Over a limit: 429 `rate_limited` with Retry-After. If the store fails (Redis down), the
 * request goes through: the limits protect capacity, they must not take the gateway down.
 */
@Injectable()
export class KeyLimiter {
  private readonly logger = new Logger('Gantry');

  constructor(
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
    @Inject(LimitStore) private readonly store: LimitStore,
  ) {}

  /** Whether any per-key limit is configured: without one, `admit` has nothing to do. */
  get isActive(): boolean {
    return this.config.auth.limits !== undefined;
  }

  /** `keyId`: the ApiKeyRing's id of the key (never the key itself). */
  async admit(keyId: string, response: ServerResponse): Promise<void> {
    const limits = this.config.auth.limits;
    if (limits === undefined) return;
    if (limits.requestsPerMinute !== undefined) {
      const window = await this.guarded(() => this.store.hit(`rpm:${keyId}`, MINUTE_MS), undefined);
      if (window !== undefined && window.count > limits.requestsPerMinute) {
        throw new GatewayError('rate_limited', `This API key is limited to ${limits.requestsPerMinute} requests per minute.`, {
          code: 'rate_limit_exceeded',
          retryAfterSeconds: Math.max(1, Math.ceil(window.resetInMs / 1000)),
        });
      }
    }
    if (limits.concurrentStreams !== undefined) {
      const slotKey = `streams:${keyId}`;
      // A failed store answers `failed`: the request goes through without a lease.
      const lease = await this.guarded(() => this.store.acquire(slotKey, limits.concurrentStreams!), 'failed' as const);
      if (lease === undefined) {
        throw new GatewayError('rate_limited', `This API key is limited to ${limits.concurrentStreams} concurrent requests.`, {
          code: 'concurrency_limit_exceeded',
          retryAfterSeconds: 1,
        });
      }
      if (lease !== 'failed') this.releaseOnClose(slotKey, lease, response);
    }
  }

  private releaseOnClose(slotKey: string, lease: string, response: ServerResponse): void {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      void this.guarded(() => this.store.release(slotKey, lease), undefined);
    };
    response.once('close', release);
    if (response.destroyed) release();
  }

  /** The store's answer, or `onFailure` (and a warning) when it failed. */
  private async guarded<T, F>(operation: () => Promise<T>, onFailure: F): Promise<T | F> {
    try {
      return await operation();
    } catch (error) {
      this.logger.warn(`The limit store failed; the request is let through: ${(error as Error).message}`);
      return onFailure;
    }
  }
}
