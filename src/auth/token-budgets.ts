import { GatewayError } from '../errors/gateway-error.js';
import type { Caller } from './caller.js';
import type { BudgetWindow, ReservationRefusal } from './limit-store.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** One token budget of a caller: its sliding window in the limit store, its size and how long it lasts. */
export interface TokenBudget extends BudgetWindow {
  per: 'minute' | 'day';
}

/** The caller's token budgets (`tokensPerMinute`, `tokensPerDay`), counted under its limit key; none when it has neither. */
export function tokenBudgetsOf(caller: Caller): TokenBudget[] {
  const limits = caller.tenant.limits;
  const budgets: TokenBudget[] = [];
  if (limits?.tokensPerMinute !== undefined)
    budgets.push({ key: `tpm:${caller.limitKey}`, limit: limits.tokensPerMinute, windowMs: MINUTE_MS, per: 'minute' });
  if (limits?.tokensPerDay !== undefined)
    budgets.push({ key: `tpd:${caller.limitKey}`, limit: limits.tokensPerDay, windowMs: DAY_MS, per: 'day' });
  return budgets;
}

/**
 * The refusal of a request whose worst case (prompt + max_tokens, or prompt + 1 without one)
 * does not fit in what a budget has left, Retry-After set to when it will.
 */
export function budgetRefusal(
  whose: string,
  budgets: readonly TokenBudget[],
  refusal: ReservationRefusal,
  need: { promptTokens: number; maxTokens?: number },
): { error: GatewayError; limit: 'tokens_per_minute' | 'tokens_per_day' } {
  const budget = budgets[refusal.refusedBy] ?? budgets[0];
  const asked =
    need.maxTokens === undefined
      ? `prompt (about ${need.promptTokens} tokens)`
      : `prompt (about ${need.promptTokens} tokens) and max_tokens (${need.maxTokens})`;
  const never = need.promptTokens + (need.maxTokens ?? 1) > budget.limit;
  const message = never
    ? `${whose} has a budget of ${budget.limit} tokens per ${budget.per}, less than this request's ${asked}.`
    : `${whose} has not enough left of its ${budget.limit} tokens per ${budget.per} for this request's ${asked}; budget returns as the window slides.`;
  const error = new GatewayError('rate_limited', message, {
    code: 'token_limit_exceeded',
    retryAfterSeconds: Math.max(1, Math.ceil(refusal.retryInMs / 1000)),
  });
  return { error, limit: budget.per === 'minute' ? 'tokens_per_minute' : 'tokens_per_day' };
}
