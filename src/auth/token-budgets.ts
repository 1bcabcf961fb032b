import { GatewayError } from '../errors/gateway-error.js';
import type { Caller } from './caller.js';
import type { WindowCharge, WindowCount } from './limit-store.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** One token budget of a caller: its window in the limit store, its size and how long it lasts. */
export interface TokenBudget {
  key: string;
  limit: number;
  windowMs: number;
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
 * The refusal of a request whose caller has spent a budget (its window's count reached the
 * limit), Retry-After set to when the last spent window closes and budget returns; undefined
 * while every budget has some left.
 */
export function spentBudgetRefusal(
  whose: string,
  budgets: readonly TokenBudget[],
  windows: readonly WindowCount[],
): { error: GatewayError; limit: 'tokens_per_minute' | 'tokens_per_day' } | undefined {
  const spent = budgets
    .map((budget, index) => ({ budget, window: windows[index] }))
    .filter(({ budget, window }) => window.count >= budget.limit);
  if (spent.length === 0) return undefined;
  const resetInMs = Math.max(...spent.map(({ window }) => window.resetInMs));
  const named = spent.map(({ budget }) => `${budget.limit} tokens per ${budget.per}`).join(' and ');
  const error = new GatewayError(
    'rate_limited',
    `${whose} has used its ${named}; budget returns when the window closes.`,
    {
      code: 'token_limit_exceeded',
      retryAfterSeconds: Math.max(1, Math.ceil(resetInMs / 1000)),
    },
  );
  return { error, limit: spent[0].budget.per === 'minute' ? 'tokens_per_minute' : 'tokens_per_day' };
}

/** The charges of `tokens` to each budget. */
export function chargesOf(budgets: readonly TokenBudget[], tokens: number): WindowCharge[] {
  return budgets.map(({ key, windowMs }) => ({ key, amount: tokens, windowMs }));
}
