import type { ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { GatewayError } from '../errors/gateway-error.js';
import { ThrottledWarning } from '../observability/logging/throttled-warning.js';
import { GantryMetrics } from '../observability/metrics/gantry-metrics.js';
import type { Caller } from './caller.js';
import { LimitStore, type LimitStoreOperation } from './limit-store.js';
import { budgetRefusal, tokenBudgetsOf } from './token-budgets.js';

const MINUTE_MS = 60_000;
/** At most one warning about store failures per interval; the metric counts every one. */
const FAILED = Symbol('failed');

/** What a request asks of its caller's token budgets (KeyLimiter.reserve). */
export interface BudgetNeed {
  /** The prompt's tokens, estimated. */
  promptTokens: number;
  /** What the client asked for; undefined: what the budgets leave, at most `outputCap`. */
  maxTokens?: number;
  /** The model's own cap (`maxTokensLimit`), if any. */
  outputCap?: number;
}

/** A request's worst case held in its caller's token budgets until it settles. */
export interface BudgetHold {
  /** The output it may produce: the engine's max_tokens. */
  readonly outputTokens: number;
  /** Brings the hold to the tokens really used (prompt + output); only the first call counts. */
  settle(used: number): void;
}

/**
 * Applies a caller's limits (its tenant's, over `auth.limits`) to one authenticated request,
 * counted per tenant for a named key and per key otherwise: requests per minute (a sliding
 * window), then a concurrent slot held until the response closes (the stream ended, the JSON
 * answer left, or the client hung up); a generation's token budgets are `reserve`d once its
 * request is read, and settled at its end. Over a limit: 429 `rate_limited` with Retry-After. If
 * the store fails (Redis down), the request goes through at once without asking it anything more:
 * the limits protect capacity, they must not take the gateway down. Failures are counted by
 * operation and logged, at most one warning per interval.
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
   * has no limits. A generation holds one of the concurrent streams (its token budgets are
   * reserved later, by `reserve`); any other request (`generation: false`: models, token counts,
   * a stored response read or cancelled) spends no tokens and counts in the rate only, so a
   * tenant whose budget is spent can still read and stop what it already paid for.
   */
  async admit(caller: Caller, response: ServerResponse, generation = true): Promise<void> {
    const limits = caller.tenant.limits;
    if (limits === undefined) return;
    const whose = subjectOf(caller);
    if (limits.requestsPerMinute !== undefined) {
      const window = await this.attempt('hit', () =>
        this.store.hit(`rpm:${caller.limitKey}`, MINUTE_MS, limits.requestsPerMinute!),
      );
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
   * Holds a generation's worst case (its prompt + max_tokens; without max_tokens, what the
   * budgets leave, at most the model's cap) in its caller's token budgets, or refuses it with 429
   * and Retry-After when a budget has not room for it. Undefined when the caller has no budget,
   * or the store failed (the request goes through unheld, as with every limit).
   */
  async reserve(caller: Caller, need: BudgetNeed): Promise<BudgetHold | undefined> {
    const budgets = tokenBudgetsOf(caller);
    if (budgets.length === 0) return undefined;
    const answer = await this.attempt('reserve', () => this.store.reserve({ budgets, ...need }));
    if (answer === FAILED) return undefined;
    if ('refusedBy' in answer) {
      const refusal = budgetRefusal(subjectOf(caller), budgets, answer, need);
      throw this.refused(caller, refusal.limit, refusal.error);
    }
    let settled = false;
    return {
      outputTokens: answer.outputTokens,
      settle: (used) => {
        if (settled) return;
        settled = true;
        void this.attempt('settle', () => this.store.settle(budgets, answer, Math.max(0, Math.round(used))));
      },
    };
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
