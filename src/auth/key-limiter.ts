import type { ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { GatewayError } from '../errors/gateway-error.js';
import { ThrottledWarning } from '../observability/logging/throttled-warning.js';
import { GantryMetrics } from '../observability/metrics/gantry-metrics.js';
import type { Caller } from './caller.js';
import { LimitStore, type LimitStoreOperation } from './limit-store.js';
import { chargesOf, spentBudgetRefusal, tokenBudgetsOf } from './token-budgets.js';

const MINUTE_MS = 60_000;
/** At most one warning about store failures per interval; the metric counts every one. */
const FAILED = Symbol('failed');

/**
 * Applies a caller's limits (its tenant's, over `auth.limits`) to one authenticated request,
 * counted per tenant for a named key and per key otherwise: its token budgets (admitted while
 * some is left; `charge` adds a request's tokens when the engine has reported them), requests per
 * minute, then a concurrent slot held until the response closes (the stream ended, the JSON answer left, or the client hung
 * up). Over a limit: 429 `rate_limited` with Retry-After. If the store fails (Redis down), the
 * request goes through at once without asking it anything more: the limits protect capacity,
 * they must not take the gateway down. Failures are counted by operation and logged, at most
 * one warning per interval.
 */
@Injectable()
export class KeyLimiter {
  private readonly logger = new Logger('Gantry');
  private readonly failures = new ThrottledWarning((message) => this.logger.warn(message));
  /** The stream slot each open response holds, by its response (see detachStreamSlot). */
  private readonly heldBy = new WeakMap<ServerResponse, () => void>();
  /** A warning was logged and the store has not answered since. */
  private warned = false;

  constructor(
    @Inject(LimitStore) private readonly store: LimitStore,
    @Inject(GantryMetrics) private readonly metrics: GantryMetrics,
  ) {
    store.onFailure((operation, error) => this.failed(operation, error));
  }

  /**
   * `caller`: whom the ApiKeyRing identified (never the key itself); nothing to do when its tenant
   * has no limits. A generation is checked against the token budgets and holds one of the
   * concurrent streams; any other request (`generation: false`: models, token counts, a stored
   * response read or cancelled) spends no tokens and counts in the rate only, so a tenant whose
   * budget is spent can still read and stop what it already paid for.
   */
  async admit(caller: Caller, response: ServerResponse, generation = true): Promise<void> {
    const limits = caller.tenant.limits;
    if (limits === undefined) return;
    const whose = subjectOf(caller);
    if (generation && (limits.tokensPerMinute !== undefined || limits.tokensPerDay !== undefined)) {
      const budgets = tokenBudgetsOf(caller);
      const windows = await this.attempt('peek', () => this.store.peek(budgets.map((budget) => budget.key)));
      if (windows === FAILED) return;
      const refusal = spentBudgetRefusal(whose, budgets, windows);
      if (refusal) throw this.refused(caller, refusal.limit, refusal.error);
    }
    if (limits.requestsPerMinute !== undefined) {
      const window = await this.attempt('hit', () => this.store.hit(`rpm:${caller.limitKey}`, MINUTE_MS));
      // One failure is all a request waits for: it is let through without a slot either.
      if (window === FAILED) return;
      if (window.count > limits.requestsPerMinute) {
        const error = new GatewayError(
          'rate_limited',
          `${whose} is limited to ${limits.requestsPerMinute} requests per minute.`,
          {
            code: 'rate_limit_exceeded',
            retryAfterSeconds: Math.max(1, Math.ceil(window.resetInMs / 1000)),
          },
        );
        throw this.refused(caller, 'requests_per_minute', error);
      }
    }
    if (limits.concurrentStreams !== undefined && generation) {
      const slotKey = `streams:${caller.limitKey}`;
      const lease = await this.attempt('acquire', () => this.store.acquire(slotKey, limits.concurrentStreams!));
      if (lease === FAILED) return;
      if (lease === undefined) {
        const error = new GatewayError(
          'rate_limited',
          `${whose} is limited to ${limits.concurrentStreams} concurrent requests.`,
          {
            code: 'concurrency_limit_exceeded',
            retryAfterSeconds: 1,
          },
        );
        throw this.refused(caller, 'concurrent_streams', error);
      }
      this.releaseOnClose(slotKey, lease, response);
    }
  }

  /** Counts a refusal by its tenant and limit (the refused request reaches no hook), and returns it to be thrown. */
  private refused(caller: Caller, limit: string, error: GatewayError): GatewayError {
    this.metrics.tenantRefusals.inc({ tenant: caller.tenant.name, limit });
    return error;
  }

  /**
   * Charges a finished request's tokens (prompt + completion, as its engine reported them) to
   * its caller's token budgets; nothing when it has none. A failed charge is counted and let go.
   */
  charge(caller: Caller, tokens: number): void {
    const budgets = tokenBudgetsOf(caller);
    if (budgets.length === 0 || !(tokens > 0)) return;
    void this.attempt('charge', () => this.store.charge(chargesOf(budgets, tokens)));
  }

  private releaseOnClose(slotKey: string, lease: string, response: ServerResponse): void {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.heldBy.delete(response);
      // A failed release is retried by the store itself.
      void this.attempt('release', () => this.store.release(slotKey, lease));
    };
    response.once('close', release);
    if (response.destroyed) release();
    else this.heldBy.set(response, release);
  }

  /**
   * Takes the stream slot that `response`'s request holds off its response: the slot is then
   * held until the returned function is called (a background run holds it for its whole life,
   * not until its answer is sent). Nothing to give back when the request holds no slot.
   */
  detachStreamSlot(response: ServerResponse): () => void {
    const release = this.heldBy.get(response);
    if (release === undefined) return () => undefined;
    this.heldBy.delete(response);
    response.off('close', release);
    return release;
  }

  /** The store's answer, or FAILED (counted and maybe logged) when it failed. */
  private async attempt<T>(operation: LimitStoreOperation, call: () => Promise<T>): Promise<T | typeof FAILED> {
    try {
      const answer = await call();
      if (this.warned) {
        this.warned = false;
        this.logger.log('The limit store answers again: per-key limits apply again.');
      }
      return answer;
    } catch (error) {
      this.failed(operation, error as Error);
      return FAILED;
    }
  }

  private failed(operation: LimitStoreOperation, error: Error): void {
    this.metrics.limitStoreErrors.inc({ operation });
    const message = (more: string) =>
      `The limit store failed (${operation}: ${error.message}); requests are let through without per-key limits${more}.`;
    if (this.failures.failure(message)) this.warned = true;
  }
}

/** Who a refusal speaks of: the tenant of a named key, else the key. */
function subjectOf(caller: Caller): string {
  return caller.limitKey === caller.keyId ? 'This API key' : `The tenant '${caller.tenant.name}'`;
}
